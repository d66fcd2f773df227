import { TransactionConflictError } from '../errors.ts';

/** How a transaction that lost to a concurrent one is retried within the same invocation. */
export interface ConflictRetry {
  /** Tries in all, the first included. */
  readonly attempts: number;
  /** Upper bound of the first wait, in ms; it doubles per retry. */
  readonly baseDelayMs: number;
  /** Largest wait, in ms. */
  readonly maxDelayMs: number;
}

/**
 * Defaults for a hot item (many orders for one SKU): 8 tries over at most about two seconds, full jitter so the
 * contenders spread out instead of colliding again in lockstep.
 */
export const DEFAULT_CONFLICT_RETRY: ConflictRetry = { attempts: 8, baseDelayMs: 20, maxDelayMs: 500 };

/** What {@link retryConflicts} waits with. */
export interface RetryClock {
  readonly sleep: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the jitter. */
  readonly random: () => number;
  /**
   * Milliseconds left for tries (a consumer's invocation before its wrap-up point): no wait is taken that would end
   * past it, and the conflict is thrown instead, for the caller to hand the work back while it still can.
   * @default no bound but the attempts
   */
  readonly remainingMs?: () => number;
}

/**
 * Runs `write` and, while DynamoDB cancels it for a conflict with a concurrent transaction
 * ({@link TransactionConflictError}), runs it again after a short jittered wait; any other outcome is returned or
 * thrown at once. After the last try, or when the clock's time left would run out during the wait, the conflict is
 * thrown, for the caller to retry later.
 * @example
 * await retryConflicts(() => transactWrite(client, actions), DEFAULT_CONFLICT_RETRY, { sleep, random: Math.random });
 */
export async function retryConflicts<T>(
  write: () => Promise<T>,
  retry: ConflictRetry,
  clock: RetryClock,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof TransactionConflictError) || attempt >= retry.attempts) throw error;
      const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
      const wait = Math.floor(clock.random() * ceiling);
      // A try that would start past the time left is not made: on a slow backend the conflicts of a hot item would
      // otherwise outlast the invocation, and a stopped invocation spends a receive of every record in its batch.
      if (clock.remainingMs !== undefined && clock.remainingMs() - wait <= 0) throw error;
      await clock.sleep(wait);
    }
  }
}
