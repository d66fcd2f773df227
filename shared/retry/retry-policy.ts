import * as z from 'zod/mini';

/** How a topic's failed sends are retried: exponential backoff with full jitter, capped. */
export interface RetryPolicy {
  /** Upper bound of the first retry's delay, in milliseconds. */
  readonly baseDelayMs: number;
  /** Growth of the delay bound per attempt. */
  readonly multiplier: number;
  /** Largest delay bound, in milliseconds. */
  readonly maxDelayMs: number;
  /** Sends tried before the message becomes FAILED (the first send counts). */
  readonly maxAttempts: number;
}

/** Defaults: the first retry within seconds, the delay capped at 15 minutes, 10 attempts. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 2_000,
  multiplier: 2,
  maxDelayMs: 15 * 60_000,
  maxAttempts: 10,
};

/** The delay bound after `attempts` failed sends (1 = the first send failed), before jitter. */
export function backoffCeilingMs(policy: RetryPolicy, attempts: number): number {
  const exponent = Math.max(0, attempts - 1);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.multiplier ** exponent);
}

/**
 * The delay before the next send, with full jitter (a uniform draw in [0, ceiling]) so that a burst of
 * failures does not retry in lockstep.
 * @example
 * const delay = nextRetryDelayMs(DEFAULT_RETRY_POLICY, message.attempts, Math.random);
 */
export function nextRetryDelayMs(policy: RetryPolicy, attempts: number, random: () => number): number {
  return Math.floor(random() * backoffCeilingMs(policy, attempts));
}

/** Whether a message that has failed `attempts` sends may be tried again. */
export function hasAttemptsLeft(policy: RetryPolicy, attempts: number): boolean {
  return attempts < policy.maxAttempts;
}

/** A retry policy as configuration states it; the delay bound never starts above its cap. */
export const retryPolicySchema = z
  .strictObject({
    baseDelayMs: z.number().check(z.int(), z.positive()),
    multiplier: z.number().check(z.minimum(1)),
    maxDelayMs: z.number().check(z.int(), z.positive()),
    maxAttempts: z.number().check(z.int(), z.minimum(1), z.maximum(1_000)),
  })
  .check(
    z.refine((policy) => policy.baseDelayMs <= policy.maxDelayMs, 'baseDelayMs must not exceed maxDelayMs'),
  );
