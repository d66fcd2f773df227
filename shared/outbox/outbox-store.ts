import type { MessageStatus } from '../message/message-status.ts';
import type { Claim, Postponement, Release, SendFailure, Unreadable } from './outbox-changes.ts';
import type { OutboxItem } from './outbox-item.ts';

/**
 * Result of marking a message SENT before its send: `SENT`, with the mark's `sentAt` (send it now); losing to a
 * faster writer, a cancel or a sweeper's claim is expected, not an error (do not send it).
 */
export type MarkSentOutcome = 'SENT' | 'ALREADY_ADVANCED';

/** A message about to be sent, to mark SENT first. */
export interface SendMark {
  readonly messageId: string;
  readonly now: Date;
  /**
   * Delivery rounds started by reconciliation: each doubles the confirmation deadline, so a backlogged consumer is
   * not flooded with copies. @default 0
   */
  readonly resends?: number;
  /** The sweeper's lease owner when it claimed the message: the mark holds only under that claim. */
  readonly claimedBy?: string;
}

/** Result of recording a failed send. */
export type RecordFailureOutcome = 'RETRY_SCHEDULED' | 'FAILED' | 'ALREADY_ADVANCED';

/**
 * Result of confirming a message. APPLIED_AFTER_CANCEL: the message was cancelled, but a copy already in flight
 * was applied; recorded in its history, the status stays CANCELLED.
 */
export type ConfirmOutcome =
  | 'CONFIRMED'
  | 'ALREADY_CONFIRMED'
  | 'APPLIED_AFTER_CANCEL'
  | 'NOT_CONFIRMABLE'
  | 'NOT_FOUND';

/** The outbox's status changes, as the relay, sweeper and consumers use them. */
export interface OutboxStore {
  /**
   * PENDING → SENT, made just before the send (the mark's `sentAt` is `mark.now`): only a message marked here may be
   * sent, so a cancel or another sender that got there first stops the send.
   */
  markSent(mark: SendMark): Promise<MarkSentOutcome>;
  /**
   * Records a failed send: schedules the retry or moves the message to FAILED. For a send SQS refused after the
   * mark, `markedAt` names the mark (its `sentAt`), and the record undoes it.
   */
  recordSendFailure(failure: SendFailure): Promise<RecordFailureOutcome>;
  /** → CONFIRMED after the downstream applied the message, recording its outcome when given. */
  confirm(messageId: string, now: Date, outcome?: string): Promise<ConfirmOutcome>;
}

/** Result of a claim: only one of several concurrent sweepers gets CLAIMED. */
export type ClaimOutcome = 'CLAIMED' | 'LOST';

/**
 * A due message as the due index lists it: its id and, when the stored status is one the index can hold, its
 * status. The index carries no payload; a claim returns the whole message.
 */
export interface DueEntry {
  readonly messageId: string;
  readonly status?: MessageStatus;
  /** While SENT: its confirmation deadline. */
  readonly confirmBy?: string;
}

/** A claimed message: as stored, or — when its stored item cannot be read — its id and why. */
export type DueMessage =
  | { readonly messageId: string; readonly item: OutboxItem }
  | { readonly messageId: string; readonly unreadable: string };

/** What a claim got: the message it now holds the lease on, or nothing (another sweeper was first). */
export type ClaimResult =
  | { readonly outcome: 'CLAIMED'; readonly message: DueMessage }
  | { readonly outcome: 'LOST' };

/** Seqs `fromSeq` … `toSeq` (inclusive) of one order key. */
export interface SequenceRange {
  readonly orderKey: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** An ordered message's place in its sequence and where it stands, as the sweeper checks a predecessor. */
export interface SequencedMessage {
  readonly messageId: string;
  readonly orderKey: string;
  readonly seq: number;
  /** Absent when the stored status is not one this version knows. */
  readonly status?: MessageStatus;
  readonly topic?: string;
  readonly aggregateId?: string;
  /** While it has work left: when it is due (the end of a live claim, while claimed). */
  readonly nextAttemptAt?: string;
}

/** The most messages of one order key a single sequence look-up reads. */
export const MAX_SEQUENCE_LOOKUP = 100;

/** The sweeper's view of the outbox: due work, claims and reconciliation moves. */
export interface SweepStore extends OutboxStore {
  /**
   * The stored messages of `range.orderKey` with a seq in the range (at most {@link MAX_SEQUENCE_LOOKUP}), by seq,
   * each read strongly consistently; a seq with no message (expired, or never written) is simply missing.
   */
  findInSequence(range: SequenceRange): Promise<SequencedMessage[]>;
  /** Up to `limit` entries of one due-index shard whose `nextAttemptAt` has passed, oldest first. */
  findDue(shard: string, now: Date, limit: number): Promise<DueEntry[]>;
  /**
   * Leases a due message in `status` to `owner` until now + leaseMs, and returns it as stored (read on its own:
   * one that cannot be read comes back as unreadable).
   */
  claim(claim: Claim): Promise<ClaimResult>;
  /** Files a SENT message found due before its deadline under `confirmBy`; false when it changed meanwhile. */
  postpone(postponement: Postponement): Promise<boolean>;
  /** SENT → PENDING (reconciliation: the downstream never got it), keeping the claim. */
  requeue(messageId: string, owner: string, now: Date): Promise<boolean>;
  /** Drops a claim; the message is due again at `nextAttemptAt`. */
  release(release: Release): Promise<boolean>;
  /** A claimed message whose stored item cannot be read becomes FAILED with the reason (it can never be sent). */
  failUnreadable(unreadable: Unreadable): Promise<boolean>;
}

/** Default time a SENT message may wait for its confirmation. */
export const DEFAULT_CONFIRM_DEADLINE_MS = 5 * 60_000;

/** The longest a SENT message waits before reconciliation, however often it was resent: 12 hours. */
export const MAX_CONFIRM_DEADLINE_MS = 12 * 3_600_000;

/**
 * The confirmation deadline of a delivery round: the base deadline doubled per earlier round, capped. A
 * consumer that is merely behind (a backlog, an outage) then gets ever fewer copies of the same message.
 */
export function confirmDeadlineAfter(baseMs: number, resends: number): number {
  return Math.min(MAX_CONFIRM_DEADLINE_MS, baseMs * 2 ** Math.min(resends, 30));
}
