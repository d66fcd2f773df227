/**
 * An error answer of the embedded AWS endpoint: the exception name the SDK maps to its named exception
 * class, the HTTP status, and any fields the exception carries (`Item`, `CancellationReasons`).
 */

/** Options of {@link WireError}. */
export interface WireErrorOptions {
  /** @default 400 */
  readonly status?: number;
  /** More members of the error body, as the service sends them. */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** SQS only: the code of the `x-amzn-query-error` header (`AWS.SimpleQueueService.NonExistentQueue`). */
  readonly queryCode?: string;
  readonly cause?: unknown;
}

/**
 * An AWS error to send back, e.g. `new WireError('ResourceNotFoundException', 'Requested resource not found')`.
 * @example
 * throw new WireError('ConditionalCheckFailedException', 'The conditional request failed', { fields: { Item } });
 */
export class WireError extends Error {
  /** The exception name: the shape after `#` in `__type`. */
  readonly type: string;
  readonly status: number;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly queryCode: string | undefined;

  constructor(type: string, message: string, options: WireErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WireError';
    this.type = type;
    this.status = options.status ?? 400;
    this.fields = options.fields ?? {};
    this.queryCode = options.queryCode;
  }
}
