import { backoffCeilingMs, type RetryPolicy } from '../retry/retry-policy.ts';
import { confirmDeadlineAfter } from './outbox-store.ts';

/** What decides how long after it was written a message can still be delivered. */
export interface RedeliveryLimits {
  /** The topic's retry policy: sends per round and the number of reconciliation rounds. */
  readonly policy: RetryPolicy;
  /** The base confirmation deadline (CONFIRM_DEADLINE_MS); each round doubles it, capped at 12 h. */
  readonly confirmDeadlineMs: number;
  /** How long a delivered copy can wait in its queue before it is received. */
  readonly queueRetentionMs: number;
  /**
   * How long a copy can then wait in the dead-letter queue before an operator redrives it. The consumer
   * dead-letters a copy with a fresh send, whose retention starts then, so the two retentions add up.
   * @default 0 - no dead-letter queue
   */
  readonly deadLetterRetentionMs?: number;
}

/**
 * The longest time after a message is written that a copy of it may still reach its consumer: the last
 * delivery round starts after every earlier round's confirmation deadline and its own send retries, a copy sent
 * then can wait in the queue for its retention, be dead-lettered (a fresh send) just before it expires, and wait in
 * the dead-letter queue for that queue's retention until an operator redrives it. A consumer's inbox must keep its
 * rows longer than this, or a late copy applies twice. A redrive sends the copy back with a fresh retention in the
 * queue, so with a dead-letter queue the horizon counts the queue's retention once more. It counts one pass through
 * the dead-letter queue: a redriven copy that is dead-lettered again and redriven again can outlive it.
 * @example
 * redeliveryHorizonMs({
 *   policy: DEFAULT_RETRY_POLICY,
 *   confirmDeadlineMs: 300_000,
 *   queueRetentionMs: 4 * 86_400_000,
 *   deadLetterRetentionMs: 14 * 86_400_000,
 * });
 */
export function redeliveryHorizonMs(limits: RedeliveryLimits): number {
  const { policy, confirmDeadlineMs, queueRetentionMs, deadLetterRetentionMs = 0 } = limits;
  let sendRetries = 0;
  for (let attempt = 1; attempt < policy.maxAttempts; attempt += 1)
    sendRetries += backoffCeilingMs(policy, attempt);
  // Rounds 0 … maxAttempts - 1 end with their deadlines before the last round (maxAttempts) starts; every round
  // may also spend its send retries.
  let rounds = 0;
  for (let round = 0; round < policy.maxAttempts; round += 1)
    rounds += confirmDeadlineAfter(confirmDeadlineMs, round);
  const redriven = deadLetterRetentionMs > 0 ? queueRetentionMs : 0;
  return (
    rounds + (policy.maxAttempts + 1) * sendRetries + queueRetentionMs + deadLetterRetentionMs + redriven
  );
}
