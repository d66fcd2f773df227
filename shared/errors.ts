/** Machine-readable codes of the outbox's errors. */
export const OutboxErrorCode = {
  INVALID_CONFIG: 'INVALID_CONFIG',
  TRANSACTION_LIMIT_EXCEEDED: 'TRANSACTION_LIMIT_EXCEEDED',
  TRANSACTION_CONDITION_FAILED: 'TRANSACTION_CONDITION_FAILED',
  TRANSACTION_CONFLICT: 'TRANSACTION_CONFLICT',
  POISON_MESSAGE: 'POISON_MESSAGE',
} as const;

/** One of the {@link OutboxErrorCode} values. */
export type OutboxErrorCode = (typeof OutboxErrorCode)[keyof typeof OutboxErrorCode];

/** Base class of every error the outbox library throws; `code` says which, `cause` carries the SDK error. */
export class OutboxError extends Error {
  /** What went wrong, for programs. */
  readonly code: OutboxErrorCode;

  constructor(code: OutboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A setting is missing or malformed; thrown at start so that bad configuration fails loudly. */
export class ConfigError extends OutboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(OutboxErrorCode.INVALID_CONFIG, message, options);
  }
}

/** Which DynamoDB transaction limit a write would break. */
export const TransactionLimit = {
  ACTIONS: 'ACTIONS',
  TRANSACTION_SIZE: 'TRANSACTION_SIZE',
  ITEM_SIZE: 'ITEM_SIZE',
} as const;

/** One of the {@link TransactionLimit} values. */
export type TransactionLimit = (typeof TransactionLimit)[keyof typeof TransactionLimit];

/** The write was refused before it was sent because it breaks a DynamoDB limit; nothing was written. */
export class TransactionLimitError extends OutboxError {
  /** The limit broken. */
  readonly limit: TransactionLimit;
  /** The measured value (actions or bytes). */
  readonly actual: number;
  /** The largest allowed value. */
  readonly maximum: number;

  constructor(limit: TransactionLimit, actual: number, maximum: number, detail: string) {
    super(OutboxErrorCode.TRANSACTION_LIMIT_EXCEEDED, `${detail}: ${actual} exceeds the limit of ${maximum}`);
    this.limit = limit;
    this.actual = actual;
    this.maximum = maximum;
  }
}

/** A condition on one of the transaction's actions failed; DynamoDB wrote nothing. */
export class TransactionConditionError extends OutboxError {
  /** Indexes (in the order given) of the actions whose condition failed. */
  readonly failedActions: readonly number[];

  constructor(failedActions: readonly number[], options?: { cause?: unknown }) {
    super(
      OutboxErrorCode.TRANSACTION_CONDITION_FAILED,
      `transaction cancelled: condition failed on action(s) ${failedActions.join(', ')}`,
      options,
    );
    this.failedActions = failedActions;
  }
}

/** Another transaction touched the same items at the same time; safe to retry. */
export class TransactionConflictError extends OutboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(OutboxErrorCode.TRANSACTION_CONFLICT, message, options);
  }
}

/** An error as one line for `lastError` and logs: `Name: message`. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
