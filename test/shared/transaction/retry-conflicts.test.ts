import { describe, expect, it } from 'vitest';
import { TransactionConditionError, TransactionConflictError } from '../../../shared/errors.ts';
import {
  type ConflictRetry,
  DEFAULT_CONFLICT_RETRY,
  retryConflicts,
} from '../../../shared/transaction/retry-conflicts.ts';

const conflict = () => new TransactionConflictError('conflict');
const RETRY: ConflictRetry = { attempts: 4, baseDelayMs: 25, maxDelayMs: 200 };

/** A write that fails with `errors` in turn, then returns how many calls it took. */
function failing(...errors: unknown[]) {
  let calls = 0;
  const write = async () => {
    const error = errors[calls];
    calls += 1;
    if (error !== undefined) throw error;
    return calls;
  };
  return { write, calls: () => calls };
}

/** A clock that records each wait instead of waiting. */
function recorded(random = 0.5) {
  const sleeps: number[] = [];
  return {
    sleeps,
    clock: {
      sleep: async (ms: number) => {
        sleeps.push(ms);
      },
      random: () => random,
    },
  };
}

describe('retryConflicts', () => {
  it('returns what the first successful write returns, without waiting', async () => {
    const { sleeps, clock } = recorded();

    await expect(retryConflicts(failing().write, RETRY, clock)).resolves.toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('retries a write that lost a race, waiting a random part of a doubling bound', async () => {
    const { sleeps, clock } = recorded(0.5);

    await expect(
      retryConflicts(failing(conflict(), conflict(), conflict()).write, RETRY, clock),
    ).resolves.toBe(4);
    expect(sleeps).toEqual([12, 25, 50]);
  });

  it('caps each wait at maxDelayMs', async () => {
    const { sleeps, clock } = recorded(0.999);
    const { write } = failing(conflict(), conflict(), conflict(), conflict());

    await retryConflicts(write, { attempts: 5, baseDelayMs: 100, maxDelayMs: 150 }, clock);

    expect(sleeps).toEqual([99, 149, 149, 149]);
  });

  it('may retry at once (full jitter can pick zero)', async () => {
    const { sleeps, clock } = recorded(0);

    await retryConflicts(failing(conflict()).write, RETRY, clock);

    expect(sleeps).toEqual([0]);
  });

  it('throws the last conflict after the last attempt', async () => {
    const last = conflict();
    const { clock } = recorded();
    const write = failing(conflict(), conflict(), last);

    await expect(retryConflicts(write.write, { ...RETRY, attempts: 3 }, clock)).rejects.toBe(last);
    expect(write.calls()).toBe(3);
  });

  it('takes no wait that would end past the time left, and throws the conflict instead', async () => {
    const { sleeps, clock } = recorded(0.999);
    let left = 300;
    const bounded = {
      sleep: async (ms: number) => {
        await clock.sleep(ms);
        left -= ms;
      },
      random: clock.random,
      remainingMs: () => left,
    };
    const last = conflict();
    const write = failing(conflict(), conflict(), conflict(), last);

    // Waits of 24, 49, 99 ms leave 128 ms: the fourth try fails, and a wait of 199 ms would end past them.
    await expect(retryConflicts(write.write, { ...RETRY, attempts: 8 }, bounded)).rejects.toBe(last);
    expect(write.calls()).toBe(4);
    expect(sleeps).toEqual([24, 49, 99]);
  });

  it('does not retry any other error', async () => {
    const { sleeps, clock } = recorded();
    const refused = new TransactionConditionError([{ index: 0, code: 'ConditionalCheckFailed' }]);
    const write = failing(refused);

    await expect(retryConflicts(write.write, RETRY, clock)).rejects.toBe(refused);
    expect(write.calls()).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('gives a hot item eight tries by default, within about two seconds of waiting', async () => {
    const { sleeps, clock } = recorded(0.999);
    const write = failing(...Array.from({ length: 8 }, conflict));

    await expect(retryConflicts(write.write, DEFAULT_CONFLICT_RETRY, clock)).rejects.toBeInstanceOf(
      TransactionConflictError,
    );
    expect(write.calls()).toBe(8);
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(2_500);
  });
});
