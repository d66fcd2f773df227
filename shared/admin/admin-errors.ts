import { OutboxError, OutboxErrorCode } from '../errors.ts';
import type { MessageStatus } from '../message/message-status.ts';

/** Machine-readable codes of the admin core's refusals (part of {@link OutboxErrorCode}). */
export const AdminErrorCode = {
  INVALID_REQUEST: OutboxErrorCode.INVALID_REQUEST,
  REASON_REQUIRED: OutboxErrorCode.REASON_REQUIRED,
  LIST_FILTER_REQUIRED: OutboxErrorCode.LIST_FILTER_REQUIRED,
  MESSAGE_NOT_FOUND: OutboxErrorCode.MESSAGE_NOT_FOUND,
  WRONG_STATUS: OutboxErrorCode.WRONG_STATUS,
  EARLIER_GAP: OutboxErrorCode.EARLIER_GAP,
  AGGREGATE_IN_FLIGHT: OutboxErrorCode.AGGREGATE_IN_FLIGHT,
  MOVE_TASK_UNAVAILABLE: OutboxErrorCode.MOVE_TASK_UNAVAILABLE,
  MESSAGE_SKIPPED: OutboxErrorCode.MESSAGE_SKIPPED,
  GAP_NOT_SETTLED: OutboxErrorCode.GAP_NOT_SETTLED,
} as const;

/** One of the {@link AdminErrorCode} values. */
export type AdminErrorCode = (typeof AdminErrorCode)[keyof typeof AdminErrorCode];

/** The HTTP status an admin refusal maps to: the front ends answer with it (the CLI turns it into an exit code). */
export type AdminHttpStatus = 400 | 404 | 409 | 501;

/**
 * Base class of the admin core's refusals: a request it will not carry out, with what the caller must change.
 * `code` says which, `httpStatus` how the admin API answers it. Nothing was changed when one is thrown.
 */
export class AdminError extends OutboxError {
  /** What was refused, for programs. */
  declare readonly code: AdminErrorCode;
  /** The admin API's answer. */
  readonly httpStatus: AdminHttpStatus;

  constructor(
    refusal: {
      readonly code: AdminErrorCode;
      readonly httpStatus: AdminHttpStatus;
      readonly message: string;
    },
    options?: { cause?: unknown },
  ) {
    super(refusal.code, refusal.message, options);
    this.httpStatus = refusal.httpStatus;
  }
}

/** A malformed request: a bad limit, cursor, instant, rate, or a queue or topic the outbox does not have. */
export class InvalidAdminRequestError extends AdminError {
  /** The request field at fault. */
  readonly field: string;

  constructor(field: string, problem: string) {
    super({ code: AdminErrorCode.INVALID_REQUEST, httpStatus: 400, message: `${field} ${problem}` });
    this.field = field;
  }
}

/** An operator action without a reason: every change to a message must say why, for the audit trail. */
export class ReasonRequiredError extends AdminError {
  constructor(action: string) {
    super({
      code: AdminErrorCode.REASON_REQUIRED,
      httpStatus: 400,
      message: `${action} needs a reason: say why, it is kept in the audit trail and the message's history`,
    });
  }
}

/** A listing the indexes cannot answer without reading every message. */
export class ListFilterRequiredError extends AdminError {
  constructor(message: string) {
    super({ code: AdminErrorCode.LIST_FILTER_REQUIRED, httpStatus: 400, message });
  }
}

/** No message has this id (never written, or expired by TTL, or erased). */
export class MessageNotFoundError extends AdminError {
  readonly messageId: string;

  constructor(messageId: string) {
    super({
      code: AdminErrorCode.MESSAGE_NOT_FOUND,
      httpStatus: 404,
      message: `no message ${messageId} in the outbox`,
    });
    this.messageId = messageId;
  }
}

/**
 * No delivery of the message to this subscriber: the message is not delivered to subscribers, or not to this one
 * (or it expired, or was erased). Answered as a message not found.
 */
export class DeliveryNotFoundError extends AdminError {
  readonly messageId: string;
  readonly subscriber: string;
  /** The subscribers the message is delivered to; empty when the outbox holds no delivery of it. */
  readonly subscribers: readonly string[];

  constructor(missing: {
    readonly messageId: string;
    readonly subscriber: string;
    readonly subscribers: readonly string[];
    /** The outbox holds the message as one row, delivered to one queue. */
    readonly single?: boolean;
  }) {
    const has =
      missing.single === true
        ? 'it is delivered to one queue, not to subscribers: omit the subscriber'
        : missing.subscribers.length === 0
          ? 'the outbox holds no delivery of it'
          : `it is delivered to ${missing.subscribers.join(', ')}`;
    super({
      code: AdminErrorCode.MESSAGE_NOT_FOUND,
      httpStatus: 404,
      message: `no delivery of message ${missing.messageId} to subscriber ${missing.subscriber}: ${has}`,
    });
    this.messageId = missing.messageId;
    this.subscriber = missing.subscriber;
    this.subscribers = missing.subscribers;
  }
}

/** A delivery of a message to one subscriber, and its status: what a refusal names. */
export interface DeliveryStatus {
  readonly subscriber: string;
  readonly status: string;
}

/** The message (or the delivery named) is not in a status the action starts from. */
export class WrongStatusError extends AdminError {
  readonly messageId: string;
  /** The status the message is in (for a message delivered to subscribers: the status derived from its deliveries). */
  readonly status: string;
  /** The statuses the action starts from. */
  readonly allowed: readonly MessageStatus[];
  /** The subscriber whose delivery was refused, when the action named one. */
  readonly subscriber?: string;
  /** For a message delivered to subscribers, acted on as a whole: each delivery's status (none of them allowed). */
  readonly deliveries?: readonly DeliveryStatus[];

  constructor(refusal: {
    readonly action: string;
    readonly messageId: string;
    readonly status: string;
    readonly allowed: readonly MessageStatus[];
    readonly subscriber?: string;
    readonly deliveries?: readonly DeliveryStatus[];
  }) {
    const what =
      refusal.subscriber === undefined
        ? `message ${refusal.messageId}`
        : `the delivery of message ${refusal.messageId} to ${refusal.subscriber}`;
    const each =
      refusal.deliveries === undefined
        ? ''
        : ` (${refusal.deliveries.map((d) => `${d.subscriber} ${d.status}`).join(', ')})`;
    super({
      code: AdminErrorCode.WRONG_STATUS,
      httpStatus: 409,
      message: `${what} is ${refusal.status}${each}; ${refusal.action} needs ${refusal.allowed.join(' or ')}`,
    });
    this.messageId = refusal.messageId;
    this.status = refusal.status;
    this.allowed = refusal.allowed;
    if (refusal.subscriber !== undefined) this.subscriber = refusal.subscriber;
    if (refusal.deliveries !== undefined) this.deliveries = refusal.deliveries;
  }
}

/**
 * A replay refused because the message was skipped: the consumers' cursors of its order key moved past it and
 * they applied its successors, so a copy of it would be taken for a duplicate and never applied. It stays
 * CANCELLED; what it should have done must be done another way (a new message).
 */
export class MessageSkippedError extends AdminError {
  readonly messageId: string;
  /** When the skip was made. */
  readonly skippedAt: string;

  constructor(skipped: {
    readonly messageId: string;
    readonly orderKey: string;
    readonly seq: number;
    readonly skippedAt: string;
  }) {
    super({
      code: AdminErrorCode.MESSAGE_SKIPPED,
      httpStatus: 409,
      message:
        `message ${skipped.messageId} (seq ${skipped.seq} of ${skipped.orderKey}) was skipped at ${skipped.skippedAt}: ` +
        'its consumers moved past it and applied what followed, so a replay would never be applied; it stays CANCELLED',
    });
    this.messageId = skipped.messageId;
    this.skippedAt = skipped.skippedAt;
  }
}

/**
 * A skip of a seq the outbox does not hold, refused because the message after it was written moments ago: the
 * byOrderKey index lags writes, so the seq may exist and not show yet. Try again after `retryAfterMs`.
 */
export class GapNotSettledError extends AdminError {
  readonly orderKey: string;
  readonly seq: number;
  readonly retryAfterMs: number;

  constructor(gap: {
    readonly orderKey: string;
    readonly seq: number;
    readonly laterMessageId: string;
    readonly retryAfterMs: number;
  }) {
    super({
      code: AdminErrorCode.GAP_NOT_SETTLED,
      httpStatus: 409,
      message:
        `${gap.orderKey} seq ${gap.seq} is not in the outbox, but the message after it (${gap.laterMessageId}) was ` +
        `written moments ago and the index may not show seq ${gap.seq} yet; try again in ${Math.ceil(gap.retryAfterMs / 1000)} s`,
    });
    this.orderKey = gap.orderKey;
    this.seq = gap.seq;
    this.retryAfterMs = gap.retryAfterMs;
  }
}

/**
 * A skip refused because a consumer's cursor of the order key is behind the message before it: more messages are
 * missing there, and skipping this one would jump over them. Skip or replay the earlier ones first.
 */
export class EarlierGapError extends AdminError {
  readonly orderKey: string;
  /** The seq the operator asked to skip. */
  readonly seq: number;
  /** The consumer's inbox table whose cursor is behind. */
  readonly inboxTable: string;
  /** The last seq that consumer applied; `null` when it has applied none of the order key. */
  readonly lastSeq: number | null;

  constructor(gap: {
    readonly orderKey: string;
    readonly seq: number;
    readonly inboxTable: string;
    readonly lastSeq: number | null;
  }) {
    const first = (gap.lastSeq ?? 0) + 1;
    const missing = first === gap.seq - 1 ? `seq ${first}` : `seq ${first} to ${gap.seq - 1}`;
    super({
      code: AdminErrorCode.EARLIER_GAP,
      httpStatus: 409,
      message:
        `${gap.orderKey}: the consumer with inbox ${gap.inboxTable} is at seq ${gap.lastSeq ?? 'none'}, so ${missing} ` +
        `is missing before seq ${gap.seq}; skip or replay ${missing} first`,
    });
    this.orderKey = gap.orderKey;
    this.seq = gap.seq;
    this.inboxTable = gap.inboxTable;
    this.lastSeq = gap.lastSeq;
  }
}

/** An erase refused because some of the aggregate's messages still have deliveries ahead of them. */
export class AggregateInFlightError extends AdminError {
  readonly aggregateId: string;
  /** The messages still PENDING or SENT. */
  readonly inFlight: readonly { readonly messageId: string; readonly status: string }[];

  constructor(aggregateId: string, inFlight: readonly { messageId: string; status: string }[]) {
    super({
      code: AdminErrorCode.AGGREGATE_IN_FLIGHT,
      httpStatus: 409,
      message:
        `aggregate ${aggregateId} has ${inFlight.length} message(s) still PENDING or SENT ` +
        `(${inFlight.map((m) => `${m.messageId} ${m.status}`).join(', ')}); cancel them or wait until they are confirmed`,
    });
    this.aggregateId = aggregateId;
    this.inFlight = inFlight;
  }
}

/** The queue backend has no StartMessageMoveTask (an emulator): use the receive/send/delete redrive. */
export class MoveTaskUnavailableError extends AdminError {
  constructor() {
    super({
      code: AdminErrorCode.MOVE_TASK_UNAVAILABLE,
      httpStatus: 501,
      message:
        'this queue backend cannot start a message move task; redrive with receive/send/delete instead',
    });
  }
}
