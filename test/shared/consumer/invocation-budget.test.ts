import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { assertTimeLeft, invocationBudget } from '../../../shared/consumer/invocation-budget.ts';
import { OutOfTimeError } from '../../../shared/errors.ts';

/** A Lambda context's clock: `timeoutMs` from now on the (fake) clock. */
function lambdaClock(timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  return { getRemainingTimeInMillis: () => deadline - Date.now() };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('invocationBudget', () => {
  it('keeps 5 s of a 30 s invocation back and is spent 25 s in', async () => {
    const budget = invocationBudget(lambdaClock(30_000));
    let spent = false;
    void budget.spent.then(() => {
      spent = true;
    });

    expect(budget.remainingMs()).toBe(25_000);
    await vi.advanceTimersByTimeAsync(24_999);
    expect(spent).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(spent).toBe(true);
    expect(budget.remainingMs()).toBe(0);
  });

  it('keeps a fifth of a short invocation back, so a short timeout still leaves most of its time for work', () => {
    expect(invocationBudget(lambdaClock(3_000)).remainingMs()).toBe(2_400);
  });

  it('is spent at once when the invocation has no time left', async () => {
    const budget = invocationBudget(lambdaClock(0));
    let spent = false;
    void budget.spent.then(() => {
      spent = true;
    });

    await vi.advanceTimersByTimeAsync(0);
    expect(spent).toBe(true);
  });

  it('waits again when the timer fires before the context says the time is up', async () => {
    // 26 s of work at the start; 20 s in, the context reports a second more than the timers assumed.
    let drift = 0;
    const deadline = Date.now() + 30_000;
    const budget = invocationBudget({ getRemainingTimeInMillis: () => deadline - Date.now() + drift });
    let spent = false;
    void budget.spent.then(() => {
      spent = true;
    });

    await vi.advanceTimersByTimeAsync(20_000);
    drift = 1_000;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(spent).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(spent).toBe(true);
  });

  it('stops its timer when closed', () => {
    const budget = invocationBudget(lambdaClock(30_000));
    budget.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('assertTimeLeft', () => {
  it('lets a step start while time is left, or without a bound', () => {
    expect(() => assertTimeLeft(() => 1, 'confirming m-1')).not.toThrow();
    expect(() => assertTimeLeft(undefined, 'confirming m-1')).not.toThrow();
  });

  it('refuses a step once the wrap-up point is reached, naming it', () => {
    expect(() => assertTimeLeft(() => 0, 'confirming m-1')).toThrow(OutOfTimeError);
    expect(() => assertTimeLeft(() => -5, 'confirming m-1')).toThrow(/before confirming m-1/);
  });
});
