import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffCeilingMs,
  DEFAULT_RETRY_POLICY,
  hasAttemptsLeft,
  nextRetryDelayMs,
  type RetryPolicy,
} from '../../../shared/retry/retry-policy.ts';
import { decideAfterSendFailure } from '../../../shared/retry/send-failure-decision.ts';

/** Any policy RETRY_POLICIES accepts: positive whole delays, base ≤ max, multiplier ≥ 1, 1–1 000 attempts. */
const policy: fc.Arbitrary<RetryPolicy> = fc
  .record({
    baseDelayMs: fc.integer({ min: 1, max: 3_600_000 }),
    spread: fc.integer({ min: 0, max: 86_400_000 }),
    multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
    maxAttempts: fc.integer({ min: 1, max: 1_000 }),
  })
  .map(({ baseDelayMs, spread, multiplier, maxAttempts }) => ({
    baseDelayMs,
    multiplier,
    maxDelayMs: baseDelayMs + spread,
    maxAttempts,
  }));

const attempts = fc.integer({ min: 0, max: 2_000 });
const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const instant = fc.date({
  min: new Date('2000-01-01T00:00:00.000Z'),
  max: new Date('2100-01-01T00:00:00.000Z'),
  noInvalidDate: true,
});

describe('backoff properties', () => {
  it('backoffCeilingMs never decreases from one attempt to the next and stays within [base, max]', () => {
    fc.assert(
      fc.property(policy, attempts, (p, n) => {
        const ceiling = backoffCeilingMs(p, n);
        expect(backoffCeilingMs(p, n + 1)).toBeGreaterThanOrEqual(ceiling);
        expect(ceiling).toBeGreaterThanOrEqual(p.baseDelayMs);
        expect(ceiling).toBeLessThanOrEqual(p.maxDelayMs);
      }),
      { numRuns: 500 },
    );
  });

  it('backoffCeilingMs stays at the cap once it has reached it', () => {
    fc.assert(
      fc.property(policy, attempts, fc.integer({ min: 1, max: 500 }), (p, n, later) => {
        fc.pre(backoffCeilingMs(p, n) === p.maxDelayMs);
        expect(backoffCeilingMs(p, n + later)).toBe(p.maxDelayMs);
      }),
      { numRuns: 300 },
    );
  });

  it('backoffCeilingMs reaches the cap when the delay grows (multiplier > 1) and attempts go on', () => {
    fc.assert(
      fc.property(policy, (p) => {
        fc.pre(p.multiplier >= 1.01);
        // 1.01^2 000 ≈ 4e8: past any cap of this policy space.
        expect(backoffCeilingMs(p, 2_001)).toBe(p.maxDelayMs);
      }),
      { numRuns: 300 },
    );
  });

  it('backoffCeilingMs is the base delay for ever when the multiplier is 1', () => {
    fc.assert(
      fc.property(policy, attempts, (p, n) => {
        expect(backoffCeilingMs({ ...p, multiplier: 1 }, n)).toBe(p.baseDelayMs);
      }),
    );
  });

  it('nextRetryDelayMs is a whole number of milliseconds within [0, ceiling]', () => {
    fc.assert(
      fc.property(policy, attempts, draw, (p, n, r) => {
        const delay = nextRetryDelayMs(p, n, () => r);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(backoffCeilingMs(p, n));
      }),
      { numRuns: 500 },
    );
  });

  it('decideAfterSendFailure never schedules a retry in the past, nor past the backed-off ceiling', () => {
    fc.assert(
      fc.property(fc.record({ p: policy, seen: attempts, r: draw, now: instant }), ({ p, seen, r, now }) => {
        const decision = decideAfterSendFailure({ policy: p, seenAttempts: seen, now, random: () => r });
        expect(decision.attempts).toBe(seen + 1);
        if (decision.kind === 'retry') {
          expect(decision.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
          expect(decision.nextAttemptAt.getTime()).toBeLessThanOrEqual(
            now.getTime() + backoffCeilingMs(p, seen + 1),
          );
        }
      }),
      { numRuns: 500 },
    );
  });

  it('decideAfterSendFailure gives up exactly when the failed send used the last attempt', () => {
    fc.assert(
      fc.property(policy, attempts, (p, seen) => {
        const decision = decideAfterSendFailure({
          policy: p,
          seenAttempts: seen,
          now: new Date(0),
          random: () => 0.5,
        });
        expect(decision.kind).toBe(hasAttemptsLeft(p, seen + 1) ? 'retry' : 'fail');
        expect(decision.kind === 'fail').toBe(seen + 1 >= p.maxAttempts);
      }),
      { numRuns: 300 },
    );
  });

  it('tries a message exactly maxAttempts times before it fails, however the draws fall', () => {
    fc.assert(
      fc.property(
        policy.filter((p) => p.maxAttempts <= 50),
        fc.array(draw, { minLength: 50, maxLength: 50 }),
        (p, draws) => {
          let seen = 0;
          let now = new Date(0);
          for (;;) {
            const decision = decideAfterSendFailure({
              policy: p,
              seenAttempts: seen,
              now,
              random: () => draws[seen] ?? 0,
            });
            seen = decision.attempts;
            if (decision.kind === 'fail') break;
            now = decision.nextAttemptAt;
          }
          expect(seen).toBe(p.maxAttempts);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps the default policy’s whole retry schedule under a few hours', () => {
    const worstCase = Array.from({ length: DEFAULT_RETRY_POLICY.maxAttempts - 1 }, (_, n) =>
      backoffCeilingMs(DEFAULT_RETRY_POLICY, n + 1),
    ).reduce((sum, ceiling) => sum + ceiling, 0);

    expect(worstCase).toBeLessThan(3 * 3_600_000);
  });
});
