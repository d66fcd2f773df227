/** Machine-readable codes of the outbox's errors. */
export const OutboxErrorCode = {
  INVALID_CONFIG: 'INVALID_CONFIG',
  TRANSACTION_LIMIT_EXCEEDED: 'TRANSACTION_LIMIT_EXCEEDED',
  TRANSACTION_CONDITION_FAILED: 'TRANSACTION_CONDITION_FAILED',
  TRANSACTION_CONFLICT: 'TRANSACTION_CONFLICT',
  // A consumer step not started because the invocation reached its wrap-up point (see OutOfTimeError).
  OUT_OF_TIME: 'OUT_OF_TIME',
  POISON_MESSAGE: 'POISON_MESSAGE',
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  // A receipt (a subscriber's word that it applied a message) that cannot be read (see InvalidReceiptError).
  INVALID_RECEIPT: 'INVALID_RECEIPT',
  // A consumer's receipt the producer's receipt queue did not take (see ReceiptNotSentError).
  RECEIPT_NOT_SENT: 'RECEIPT_NOT_SENT',
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  // A claim-checked payload whose S3 object is gone or unreadable (see ClaimCheckObjectMissingError).
  CLAIM_CHECK_OBJECT_MISSING: 'CLAIM_CHECK_OBJECT_MISSING',
  // An operator's request the admin refuses (see AdminError).
  INVALID_REQUEST: 'INVALID_REQUEST',
  REASON_REQUIRED: 'REASON_REQUIRED',
  LIST_FILTER_REQUIRED: 'LIST_FILTER_REQUIRED',
  MESSAGE_NOT_FOUND: 'MESSAGE_NOT_FOUND',
  WRONG_STATUS: 'WRONG_STATUS',
  EARLIER_GAP: 'EARLIER_GAP',
  AGGREGATE_IN_FLIGHT: 'AGGREGATE_IN_FLIGHT',
  MOVE_TASK_UNAVAILABLE: 'MOVE_TASK_UNAVAILABLE',
  MESSAGE_SKIPPED: 'MESSAGE_SKIPPED',
  GAP_NOT_SETTLED: 'GAP_NOT_SETTLED',
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

/** A setting is missing or malformed; thrown at start (or at `cdk synth`) so that bad configuration fails loudly. */
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

/** What a {@link TransactionLimitError} reports. */
export interface TransactionLimitBreach {
  /** The limit broken. */
  readonly limit: TransactionLimit;
  /** The measured value (actions or bytes). */
  readonly actual: number;
  /** The largest allowed value. */
  readonly maximum: number;
  /** What was measured, e.g. `item of action 1 (Put outbox) is too large in bytes`. */
  readonly detail: string;
}

/** The write was refused before it was sent because it breaks a DynamoDB limit; nothing was written. */
export class TransactionLimitError extends OutboxError {
  /** The limit broken. */
  readonly limit: TransactionLimit;
  /** The measured value (actions or bytes). */
  readonly actual: number;
  /** The largest allowed value. */
  readonly maximum: number;

  constructor(breach: TransactionLimitBreach) {
    super(
      OutboxErrorCode.TRANSACTION_LIMIT_EXCEEDED,
      `${breach.detail}: ${breach.actual} exceeds the limit of ${breach.maximum}`,
    );
    this.limit = breach.limit;
    this.actual = breach.actual;
    this.maximum = breach.maximum;
  }
}

/** Why DynamoDB cancelled one action of a transaction. */
export interface CancelledAction {
  /** Position of the action in the transaction, in the order given. */
  readonly index: number;
  /** DynamoDB's code: `ConditionalCheckFailed`, `TransactionConflict`, `None` (this action was fine)… */
  readonly code: string;
  readonly message?: string;
  /**
   * The item as it was before the transaction, when the action asked for it
   * (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`) and its condition failed.
   */
  readonly item?: Readonly<Record<string, unknown>>;
}

/** A condition on one or more of the transaction's actions failed; DynamoDB wrote nothing. */
export class TransactionConditionError extends OutboxError {
  /** Every action of the cancelled transaction with DynamoDB's reason, in the order given. */
  readonly reasons: readonly CancelledAction[];

  constructor(reasons: readonly CancelledAction[], options?: { cause?: unknown }) {
    const failed = reasons.filter((reason) => reason.code === 'ConditionalCheckFailed');
    super(
      OutboxErrorCode.TRANSACTION_CONDITION_FAILED,
      `transaction cancelled: condition failed on action(s) ${failed.map((reason) => reason.index).join(', ')}`,
      options,
    );
    this.reasons = reasons;
  }

  /** Indexes (in the order given) of the actions whose condition failed. */
  get failedActions(): readonly number[] {
    return this.reasons.filter((reason) => reason.code === 'ConditionalCheckFailed').map((r) => r.index);
  }

  /** Whether the condition of action `index` failed. */
  failed(index: number): boolean {
    return this.reasons[index]?.code === 'ConditionalCheckFailed';
  }

  /** The old item DynamoDB returned for action `index` (asked for with ALL_OLD), if any. */
  oldItem(index: number): Readonly<Record<string, unknown>> | undefined {
    return this.reasons[index]?.item;
  }
}

/** Another transaction touched the same items at the same time; safe to retry. */
export class TransactionConflictError extends OutboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(OutboxErrorCode.TRANSACTION_CONFLICT, message, options);
  }
}

/**
 * Concurrent writers kept taking the next seq of the same order key first, through every attempt; nothing was
 * written. A {@link TransactionConflictError}: retrying the write later is safe.
 */
export class SequenceConflictError extends TransactionConflictError {
  /** The order keys whose sequence counter moved between the read and the commit of the last attempt. */
  readonly orderKeys: readonly string[];
  /** Attempts made, the first included. */
  readonly attempts: number;

  constructor(conflict: { readonly orderKeys: readonly string[]; readonly attempts: number }) {
    super(
      `the sequence of ${conflict.orderKeys.join(', ')} moved on under ${conflict.attempts} attempts in a row; nothing was written, retry`,
    );
    this.orderKeys = conflict.orderKeys;
    this.attempts = conflict.attempts;
  }
}

/**
 * The consumer's invocation reached its wrap-up point before this step started, so it was not started: the record is
 * handed back to its queue as a fresh copy (no receive spent) rather than left to Lambda's timeout. Steps already
 * committed stay committed; the copy's inbox check makes them count once.
 */
export class OutOfTimeError extends OutboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(OutboxErrorCode.OUT_OF_TIME, message, options);
  }
}

/** A message that can never be processed (unreadable body, invalid envelope): retrying cannot help. */
export class PoisonMessageError extends OutboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(OutboxErrorCode.POISON_MESSAGE, message, options);
  }
}

/**
 * A message the outbox refuses to write because it could not be delivered unchanged: a payload that is not
 * plain JSON (a BigInt, a Map, NaN, a lone surrogate…), or an envelope field out of bounds. Nothing is written.
 */
export class InvalidMessageError extends OutboxError {
  /** Where the offending value is, e.g. `payload.items[2].price`. */
  readonly path: string;

  constructor(path: string, problem: string) {
    super(OutboxErrorCode.INVALID_MESSAGE, `${path}: ${problem}`);
    this.path = path;
  }
}

/**
 * A receipt body the producer cannot read: not JSON, a receipt without a message id or subscriber, a time that
 * is not ISO 8601. `path` names the offending field, e.g. `receipts[3].subscriber`.
 */
export class InvalidReceiptError extends OutboxError {
  /** Where the offending value is. */
  readonly path: string;

  constructor(path: string, problem: string) {
    super(OutboxErrorCode.INVALID_RECEIPT, `receipt ${path}: ${problem}`);
    this.path = path;
  }
}

/** A message whose wire form is larger than its queue accepts; refused at write time, nothing is written. */
export class MessageTooLargeError extends OutboxError {
  /** The message's size on the wire (body and attributes), in bytes. */
  readonly actualBytes: number;
  /** The largest message the queue accepts, in bytes. */
  readonly maximumBytes: number;

  constructor(messageId: string, sizes: { readonly actualBytes: number; readonly maximumBytes: number }) {
    super(
      OutboxErrorCode.MESSAGE_TOO_LARGE,
      `message ${messageId} is ${sizes.actualBytes} bytes on the wire; SQS accepts at most ${sizes.maximumBytes}`,
    );
    this.actualBytes = sizes.actualBytes;
    this.maximumBytes = sizes.maximumBytes;
  }
}

/** An error as one line for `lastError` and logs: `Name: message`. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
