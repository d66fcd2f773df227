import { OutOfTimeError } from '../errors.ts';

/** What an invocation's time is read from: the Lambda context's clock. */
export interface InvocationClock {
  /** Milliseconds until the function is stopped (Lambda's `context.getRemainingTimeInMillis()`). */
  getRemainingTimeInMillis(): number;
}

/** How much of an invocation's time the consumer keeps back to hand unfinished records back. */
export interface WrapUpReserve {
  /** The most kept back, in ms. */
  readonly maxMs: number;
  /** The share of the invocation's time kept back when that is less (a short timeout keeps most of its time). */
  readonly share: number;
}

/**
 * Defaults: 5 s, or a fifth of the invocation's time when that is less. Handing a record back is one SendMessage
 * per record, sent together; 5 s covers it even when SQS is slow, and a 30 s consumer keeps 25 s of work.
 */
export const DEFAULT_WRAP_UP_RESERVE: WrapUpReserve = { maxMs: 5_000, share: 0.2 };

/** The time an invocation may still start work in; it ends at the wrap-up point, before the function's timeout. */
export interface InvocationBudget {
  /** Milliseconds left before the wrap-up point; 0 or less once it is reached. */
  remainingMs(): number;
  /** Resolves at the wrap-up point (never, once {@link InvocationBudget.close} was called). */
  readonly spent: Promise<void>;
  /** Stops the timer: the invocation finished in time. */
  close(): void;
}

/**
 * The budget of an invocation that `clock` times: the time left until the function's timeout, less the reserve
 * the consumer needs to hand back the records it has not finished. Past the wrap-up point no work starts, and
 * what is still running is handed back, so the function returns before Lambda stops it: a stopped invocation
 * returns no partial batch response, and SQS would count a receive against every record of the batch.
 * @example
 * const budget = invocationBudget(context);
 * try { await Promise.race([work(), budget.spent]); } finally { budget.close(); }
 */
export function invocationBudget(
  clock: InvocationClock,
  reserve: WrapUpReserve = DEFAULT_WRAP_UP_RESERVE,
): InvocationBudget {
  const total = Math.max(0, clock.getRemainingTimeInMillis());
  const keptBack = Math.min(reserve.maxMs, total * reserve.share);
  const remainingMs = () => clock.getRemainingTimeInMillis() - keptBack;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const spent = new Promise<void>((resolve) => {
    const wait = () => {
      const left = remainingMs();
      // The context's clock is the truth: a timer that fires early (or a clock that moved slower) waits again.
      if (left <= 0) resolve();
      else timer = setTimeout(wait, left);
    };
    wait();
  });
  return {
    remainingMs,
    spent,
    close: () => {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * Throws an {@link OutOfTimeError} naming `step` when `remainingMs` says the wrap-up point has been reached, so a
 * step of a record already handed back never starts; without a bound it does nothing.
 */
export function assertTimeLeft(remainingMs: (() => number) | undefined, step: string): void {
  if (remainingMs !== undefined && remainingMs() <= 0) {
    throw new OutOfTimeError(`the invocation reached its wrap-up point before ${step}; handed back`);
  }
}
