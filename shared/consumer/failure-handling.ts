import type { SQSRecord } from 'aws-lambda';
import { describeError, OutOfTimeError, PoisonMessageError, TransactionConflictError } from '../errors.ts';

/** SQS's longest visibility timeout: 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

/** How long a transiently failed message stays invisible before SQS redelivers it. */
export interface VisibilityBackoff {
  readonly baseSeconds: number;
  readonly maxSeconds: number;
}

/** Defaults: 10 s after the first failure, doubling, capped at 15 minutes. */
export const DEFAULT_VISIBILITY_BACKOFF: VisibilityBackoff = { baseSeconds: 10, maxSeconds: 900 };

/**
 * The visibility timeout after the `receiveCount`-th failed receive: exponential, capped, with equal
 * jitter (half fixed, half random) so retries spread out but never come back at once.
 */
export function visibilityTimeoutSeconds(
  receiveCount: number,
  backoff: VisibilityBackoff,
  random: () => number,
): number {
  // 2^30 s is far past SQS's 12-hour cap; bounding the exponent keeps 0 × 2^1024 (NaN) out of the result.
  const growth = 2 ** Math.min(30, Math.max(0, receiveCount - 1));
  const ceiling = Math.min(backoff.maxSeconds, MAX_VISIBILITY_SECONDS, backoff.baseSeconds * growth);
  return Math.max(1, Math.round(ceiling / 2 + random() * (ceiling / 2)));
}

/** The queue operations failure handling needs; SQS in production, in memory in drills. */
export interface QueueOperations {
  changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void>;
  /** Sends a message, as it was received, to a dead-letter queue with the reason it is there. */
  deadLetter(letter: DeadLetter): Promise<void>;
  /**
   * Sends a fresh copy of a received message back to its queue after `delaySeconds` (its receive count starts
   * again); the caller then acknowledges the received one.
   */
  requeue(queueUrl: string, record: SQSRecord, delaySeconds: number): Promise<void>;
}

/** Why the consumer dead-lettered a message itself. */
export type DeadLetterReason = 'POISON' | 'MAX_RECEIVES';

/** A message on its way to the dead-letter queue, and why. */
export interface DeadLetter {
  readonly queueUrl: string;
  readonly record: SQSRecord;
  readonly reason: DeadLetterReason;
  readonly lastError: string;
}

/** What failure handling needs. */
export interface FailureHandling {
  readonly queues: QueueOperations;
  readonly sourceQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** The source queue's maxReceiveCount: on the last receive the consumer dead-letters with the reason. */
  readonly maxReceiveCount: number;
  readonly backoff: VisibilityBackoff;
  readonly random: () => number;
}

/** What became of a failed record. */
export type FailureDisposition = 'DEAD_LETTERED' | 'RETRY_LATER' | 'REQUEUED';

/**
 * Decides what a failed record becomes: a poison message, or one on its last receive, goes to the DLQ now
 * with its reason and last error (so an operator can replay it knowing why it failed); a message that only
 * lost to concurrent transactions (a hot item), or that the invocation ran out of time for, is requeued as a
 * fresh copy after a short jittered delay, so contention and a slow backend never spend its receives and never
 * dead-letter it; any other failure is retried after an exponential, jittered visibility timeout instead of the
 * queue's fixed one.
 */
export async function handleFailedRecord(
  record: SQSRecord,
  error: unknown,
  handling: FailureHandling,
): Promise<FailureDisposition> {
  const lastError = describeError(error);
  if (error instanceof TransactionConflictError || error instanceof OutOfTimeError) {
    await requeueRecord(record, handling);
    return 'REQUEUED';
  }
  const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
  if (error instanceof PoisonMessageError || receiveCount >= handling.maxReceiveCount) {
    const reason: DeadLetterReason = error instanceof PoisonMessageError ? 'POISON' : 'MAX_RECEIVES';
    await handling.queues.deadLetter({ queueUrl: handling.deadLetterQueueUrl, record, reason, lastError });
    return 'DEAD_LETTERED';
  }
  const seconds = visibilityTimeoutSeconds(receiveCount, handling.backoff, handling.random);
  await handling.queues.changeVisibility(handling.sourceQueueUrl, record.receiptHandle, seconds);
  return 'RETRY_LATER';
}

/**
 * Puts a fresh copy of `record` back on its queue after a short jittered delay (1 s to the backoff's base), for the
 * caller to acknowledge the received one: its receive count starts again.
 */
export async function requeueRecord(record: SQSRecord, handling: FailureHandling): Promise<void> {
  const delaySeconds = 1 + Math.floor(handling.random() * handling.backoff.baseSeconds);
  await handling.queues.requeue(handling.sourceQueueUrl, record, delaySeconds);
}
