import { hasAttemptsLeft, nextRetryDelayMs, type RetryPolicy } from './retry-policy.ts';

/** What a failed send does to a message: retry later, or give up. */
export type SendFailureDecision =
  | {
      readonly kind: 'retry';
      readonly attempts: number;
      /** The message's refused sends with this one, when this failure is a refusal. */
      readonly refusals?: number;
      readonly nextAttemptAt: Date;
    }
  | { readonly kind: 'fail'; readonly attempts: number; readonly refusals?: number };

/** A failed send of a message that had `seenAttempts` attempts before it, under its topic's policy. */
export interface FailedSend {
  readonly policy: RetryPolicy;
  readonly seenAttempts: number;
  /** Sends of the message refused before this one, over every delivery round. @default 0 */
  readonly seenRefusals?: number;
  readonly now: Date;
  /** Uniform in [0, 1): the jitter. */
  readonly random: () => number;
}

/**
 * What to do after a failed send: schedule the next one with backoff, or give up (FAILED) when the policy's
 * attempts are used — in this delivery round, or in refused sends over all of them.
 */
export function decideAfterSendFailure({
  policy,
  seenAttempts,
  seenRefusals = 0,
  now,
  random,
}: FailedSend): SendFailureDecision {
  const attempts = seenAttempts + 1;
  const refusals = seenRefusals + 1;
  if (!hasAttemptsLeft(policy, attempts) || !hasAttemptsLeft(policy, refusals)) {
    return { kind: 'fail', attempts, refusals };
  }
  return {
    kind: 'retry',
    attempts,
    refusals,
    nextAttemptAt: new Date(now.getTime() + nextRetryDelayMs(policy, attempts, random)),
  };
}
