import type { MessageStatus } from '../message/message-status.ts';
import type { SendFailureDecision } from '../retry/send-failure-decision.ts';

/*
 * What a change of an outbox message takes: the inputs of the store ports' moves, which the outbox table's
 * adapter turns into its conditional writes.
 */

/** Who makes a change, and how messages are spread over the index shards. */
export interface ChangeContext {
  /** Recorded as the history entry's `by`: `relay`, `sweeper`, `consumer`, or the operator. */
  readonly by?: string;
  /** Partitions of the due index, which the attention index shares. @default 8 */
  readonly dueShards?: number;
}

/** An operator's move of one message, made from the status the operator saw. */
export interface OperatorMove extends ChangeContext {
  readonly messageId: string;
  /** The status the message was read in; the update holds only if it still is. */
  readonly from: MessageStatus;
  readonly now: Date;
  /** The operator (IAM caller ARN, or `local:<user>`): the history entry's `by`. */
  readonly by: string;
  /** Why, in the operator's words. */
  readonly reason: string;
}

/** A cancel, which also sets when the cancelled message expires. */
export interface CancelMove extends OperatorMove {
  /** Days until TTL removes the cancelled message. @default 30 */
  readonly retentionDays?: number;
  /** The cancel is a skip's: the message is marked skipped (`skippedAt`), never to be replayed. @default false */
  readonly skip?: boolean;
}

/** A sweeper's claim on one due message. */
export interface Claim {
  readonly messageId: string;
  /**
   * The status the message was read in; the claim holds only if it is still in it. Absent for a message whose
   * item could not be read: then any status with work left (PENDING or SENT).
   */
  readonly status?: MessageStatus;
  /** Unique per sweeper run: the lease owner. */
  readonly owner: string;
  readonly now: Date;
  /** How long the claim lasts; a crashed owner's messages fall due again after it. */
  readonly leaseMs: number;
  /**
   * Claim it before it falls due, as long as nobody holds a live claim on it: a consumer waits for it (an
   * ordered message's gap), so its confirmation deadline is not waited for.
   */
  readonly early?: boolean;
}

/** A claimed message given back without a status change, due again at `nextAttemptAt`. */
export interface Release {
  readonly messageId: string;
  readonly owner: string;
  readonly now: Date;
  readonly nextAttemptAt: Date;
}

/** A SENT message the sweeper found due before its confirmation deadline, to file under that deadline. */
export interface Postponement {
  readonly messageId: string;
  /** The deadline the due index showed; the update holds only if it is still the message's. */
  readonly confirmBy: string;
  readonly now: Date;
}

/** A claimed message whose stored item cannot be read, and why. */
export interface Unreadable {
  readonly messageId: string;
  readonly owner: string;
  readonly now: Date;
  readonly reason: string;
}

/** A failed send to record on its message. */
export interface SendFailure {
  readonly messageId: string;
  /** The attempts the message had when it was read; the record holds only if nobody counted one since. */
  readonly seenAttempts: number;
  readonly decision: SendFailureDecision;
  /** Why the send failed, for `lastError`. */
  readonly error: string;
  readonly now: Date;
  /**
   * The `sentAt` of the sender's own mark, when SQS refused a message the sender had marked SENT for the send: the
   * record holds only while the message is still SENT under that mark. Absent: the message was never marked (no
   * queue is routed, it cannot be sent as stored, its attempts are spent) and must still be PENDING.
   */
  readonly markedAt?: string;
}
