import { backoffCeilingMs, type RetryPolicy } from '../retry/retry-policy.ts';
import { confirmDeadlineAfter } from './outbox-store.ts';

/** What decides how long after it was written a message can still be delivered. */
export interface RedeliveryLimits {
  /** The topic's retry policy: sends per round and the number of reconciliation rounds. */
  readonly policy: RetryPolicy;
  /** The base confirmation deadline (CONFIRM_DEADLINE_MS); each round doubles it, capped at 12 h. */
  readonly confirmDeadlineMs: number;
  /** How long a delivered copy can wait in its queue or dead-letter queue before it is received (or redriven). */
  readonly queueRetentionMs: number;
}

/**
 * The longest time after a message is written that a copy of it may still reach its consumer: the last
 * delivery round starts after every earlier round's confirmation deadline and its own send retries, and a
 * copy sent then can wait in the queue, or in the dead-letter queue until an operator redrives it, for the
 * queue's retention. A consumer's inbox must keep its rows longer than this, or a late copy applies twice.
 * @example
 * redeliveryHorizonMs({ policy: DEFAULT_RETRY_POLICY, confirmDeadlineMs: 300_000, queueRetentionMs: 14 * 86_400_000 });
 */
export function redeliveryHorizonMs(limits: RedeliveryLimits): number {
  const { policy, confirmDeadlineMs, queueRetentionMs } = limits;
  let sendRetries = 0;
  for (let attempt = 1; attempt < policy.maxAttempts; attempt += 1)
    sendRetries += backoffCeilingMs(policy, attempt);
  // Rounds 0 … maxAttempts - 1 end with their deadlines before the last round (maxAttempts) starts; every round
  // may also spend its send retries.
  let rounds = 0;
  for (let round = 0; round < policy.maxAttempts; round += 1)
    rounds += confirmDeadlineAfter(confirmDeadlineMs, round);
  return rounds + (policy.maxAttempts + 1) * sendRetries + queueRetentionMs;
}
