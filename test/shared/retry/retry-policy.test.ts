import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffCeilingMs,
  DEFAULT_RETRY_POLICY,
  hasAttemptsLeft,
  nextRetryDelayMs,
  type RetryPolicy,
} from '../../../shared/retry/retry-policy.ts';

const policy: RetryPolicy = { baseDelayMs: 1_000, multiplier: 3, maxDelayMs: 60_000, maxAttempts: 5 };

describe('backoffCeilingMs', () => {
  it('starts at the base delay after the first failed send', () => {
    expect(backoffCeilingMs(policy, 1)).toBe(1_000);
  });

  it('grows by the multiplier with every further failed send', () => {
    expect(backoffCeilingMs(policy, 2)).toBe(3_000);
    expect(backoffCeilingMs(policy, 3)).toBe(9_000);
    expect(backoffCeilingMs(policy, 4)).toBe(27_000);
  });

  it('is capped at the maximum delay', () => {
    expect(backoffCeilingMs(policy, 5)).toBe(60_000);
    expect(backoffCeilingMs(policy, 50)).toBe(60_000);
  });

  it('treats zero attempts like the first', () => {
    expect(backoffCeilingMs(policy, 0)).toBe(1_000);
  });

  it('never decreases and never exceeds the cap, for any policy', () => {
    fc.assert(
      fc.property(
        fc.record({
          baseDelayMs: fc.integer({ min: 1, max: 10_000 }),
          multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
          maxDelayMs: fc.integer({ min: 1, max: 3_600_000 }),
          attempts: fc.integer({ min: 1, max: 60 }),
        }),
        ({ baseDelayMs, multiplier, maxDelayMs, attempts }) => {
          const p = { baseDelayMs, multiplier, maxDelayMs, maxAttempts: 10 };
          expect(backoffCeilingMs(p, attempts)).toBeLessThanOrEqual(maxDelayMs);
          expect(backoffCeilingMs(p, attempts + 1)).toBeGreaterThanOrEqual(backoffCeilingMs(p, attempts));
        },
      ),
    );
  });

  it('caps the default policy at 15 minutes', () => {
    expect(backoffCeilingMs(DEFAULT_RETRY_POLICY, 1)).toBe(2_000);
    expect(backoffCeilingMs(DEFAULT_RETRY_POLICY, 30)).toBe(15 * 60_000);
  });
});

describe('nextRetryDelayMs', () => {
  it('draws the delay uniformly from [0, ceiling] (full jitter)', () => {
    expect(nextRetryDelayMs(policy, 3, () => 0)).toBe(0);
    expect(nextRetryDelayMs(policy, 3, () => 0.5)).toBe(4_500);
    expect(nextRetryDelayMs(policy, 3, () => 0.999_999)).toBe(8_999);
  });

  it('stays within [0, ceiling] for any random draw and attempt count', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempts, draw) => {
          const delay = nextRetryDelayMs(policy, attempts, () => draw);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(backoffCeilingMs(policy, attempts));
          expect(Number.isInteger(delay)).toBe(true);
        },
      ),
    );
  });
});

describe('hasAttemptsLeft', () => {
  it('allows sends until maxAttempts have been tried', () => {
    expect(hasAttemptsLeft(policy, 4)).toBe(true);
    expect(hasAttemptsLeft(policy, 5)).toBe(false);
    expect(hasAttemptsLeft(policy, 6)).toBe(false);
  });
});
