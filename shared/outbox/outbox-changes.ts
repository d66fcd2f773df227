import type { MessageStatus } from '../message/message-status.ts';

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
