import type { SendFailureDecision } from '../outbox/transition-updates.ts';
import { hasAttemptsLeft, nextRetryDelayMs, type RetryPolicy } from './retry-policy.ts';

/** A failed send of a message that had `seenAttempts` attempts before it, under its topic's policy. */
export interface FailedSend {
  readonly policy: RetryPolicy;
  readonly seenAttempts: number;
  readonly now: Date;
  /** Uniform in [0, 1): the jitter. */
  readonly random: () => number;
}

/**
 * What to do after a failed send: schedule the next one with backoff, or give up (FAILED) when the
 * policy's attempts are used.
 */
export function decideAfterSendFailure({
  policy,
  seenAttempts,
  now,
  random,
}: FailedSend): SendFailureDecision {
  const attempts = seenAttempts + 1;
  if (!hasAttemptsLeft(policy, attempts)) return { kind: 'fail', attempts };
  return {
    kind: 'retry',
    attempts,
    nextAttemptAt: new Date(now.getTime() + nextRetryDelayMs(policy, attempts, random)),
  };
}
