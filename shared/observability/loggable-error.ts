/** What of an error goes into a log line: enough to diagnose, never the data the error carries. */
export interface LoggableError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** The HTTP status of a failed AWS call. */
  readonly httpStatusCode?: number;
  /** The reason codes of a cancelled transaction (`ConditionalCheckFailed`, `None`…), in item order. */
  readonly cancellationReasons?: readonly string[];
  readonly cause?: LoggableError;
}

/** How deep a chain of causes is followed. */
const MAX_CAUSES = 5;

/**
 * The error as a log line may show it. A logger that serializes an error object writes every enumerable
 * property, and AWS SDK errors carry data: a cancelled transaction's `CancellationReasons` hold the items
 * that failed their conditions (`ReturnValuesOnConditionCheckFailure`), so logging the error object would
 * write customer data into the logs. This keeps the name, message, stack, HTTP status and reason codes only.
 * @example
 * logger.error('admin request failed', { action, error: loggableError(error) });
 */
export function loggableError(error: unknown, depth = 0): LoggableError {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error) };
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  const reasons = (error as { CancellationReasons?: unknown }).CancellationReasons;
  const cause = (error as { cause?: unknown }).cause;
  return {
    name: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(typeof status === 'number' ? { httpStatusCode: status } : {}),
    ...(Array.isArray(reasons)
      ? {
          cancellationReasons: reasons.map((reason) =>
            String((reason as { Code?: unknown })?.Code ?? 'None'),
          ),
        }
      : {}),
    ...(cause === undefined || depth >= MAX_CAUSES ? {} : { cause: loggableError(cause, depth + 1) }),
  };
}
