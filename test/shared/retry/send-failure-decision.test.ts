import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import { decideAfterSendFailure } from '../../../shared/retry/send-failure-decision.ts';
import { FIXED_NOW } from '../../support/factories.ts';

const policy: RetryPolicy = { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 10_000, maxAttempts: 3 };

describe('decideAfterSendFailure', () => {
  it('schedules a retry with a backed-off, jittered delay while attempts remain', () => {
    const decision = decideAfterSendFailure({ policy, seenAttempts: 1, now: FIXED_NOW, random: () => 0.5 });

    // Second failed send: ceiling 2 000 ms, half of it.
    expect(decision).toEqual({
      kind: 'retry',
      attempts: 2,
      refusals: 1,
      nextAttemptAt: new Date(FIXED_NOW.getTime() + 1_000),
    });
  });

  it('counts the failed send as an attempt', () => {
    expect(
      decideAfterSendFailure({ policy, seenAttempts: 0, now: FIXED_NOW, random: () => 0 }).attempts,
    ).toBe(1);
  });

  it('gives up (fail) when the failed send was the last allowed attempt', () => {
    expect(decideAfterSendFailure({ policy, seenAttempts: 2, now: FIXED_NOW, random: () => 0.5 })).toEqual({
      kind: 'fail',
      attempts: 3,
      refusals: 1,
    });
  });

  it('gives up when the message was refused as often as the policy allows over every delivery round', () => {
    // A fresh round (attempts 0, as reconciliation starts one) of a message SQS refused twice before: the third
    // refusal is its last, however many rounds there were.
    expect(
      decideAfterSendFailure({ policy, seenAttempts: 0, seenRefusals: 2, now: FIXED_NOW, random: () => 0.5 }),
    ).toEqual({ kind: 'fail', attempts: 1, refusals: 3 });
  });

  it('gives up for a message already past the maximum', () => {
    expect(decideAfterSendFailure({ policy, seenAttempts: 7, now: FIXED_NOW, random: () => 0.5 })).toEqual({
      kind: 'fail',
      attempts: 8,
      refusals: 1,
    });
  });

  it('never schedules a retry before now or beyond the capped delay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (seen, draw) => {
          const decision = decideAfterSendFailure({
            policy,
            seenAttempts: seen,
            now: FIXED_NOW,
            random: () => draw,
          });
          expect(decision.kind).toBe('retry');
          if (decision.kind !== 'retry') return;
          const delay = decision.nextAttemptAt.getTime() - FIXED_NOW.getTime();
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(policy.maxDelayMs);
        },
      ),
    );
  });
});
