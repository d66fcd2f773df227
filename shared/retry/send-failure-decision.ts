import type { SendFailureDecision } from '../outbox/transition-updates.ts';
import { hasAttemptsLeft, nextRetryDelayMs, type RetryPolicy } from './retry-policy.ts';

/**
 * What to do after a failed send of a message that had `seenAttempts` attempts before it: schedule the
 * next one with backoff, or give up (FAILED) when the policy's attempts are used.
 */
export function decideAfterSendFailure(
  policy: RetryPolicy,
  seenAttempts: number,
  now: Date,
  random: () => number,
): SendFailureDecision {
  const attempts = seenAttempts + 1;
  if (!hasAttemptsLeft(policy, attempts)) return { kind: 'fail', attempts };
  return {
    kind: 'retry',
    attempts,
    nextAttemptAt: new Date(now.getTime() + nextRetryDelayMs(policy, attempts, random)),
  };
}
