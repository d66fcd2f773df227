/**
 * How a stream mapping moves through a shard after each invocation, as Lambda does it: the checkpoint,
 * retries of a failing batch, bisecting on error, partial batch responses and giving up when retries are
 * exhausted. Pure, so each rule is unit-tested without an emulator.
 */

/** The mapping settings that decide retries. */
export interface RetrySettings {
  readonly batchSize: number;
  /** Retries after the first failed invocation; -1 retries until the records expire. */
  readonly retryAttempts: number;
  readonly bisectBatchOnError: boolean;
}

/** Where a shard's reader stands. */
export interface ShardCursor {
  /** Sequence number of the last record handled (processed, filtered out or discarded); none at the start. */
  readonly checkpoint: string | undefined;
  /** Failed invocations of the batch that starts right after the checkpoint. */
  readonly failures: number;
  /** While bisecting: the most records per batch, until the checkpoint passes {@link bisectUntil}. */
  readonly batchLimit: number | undefined;
  /** While bisecting: the last sequence number of the batch that was split. */
  readonly bisectUntil: string | undefined;
}

/** How an invocation ended. */
export type InvocationOutcome =
  | { readonly kind: 'succeeded' }
  /** The function returned `batchItemFailures`; `itemIds` are their `itemIdentifier`s. */
  | { readonly kind: 'partial'; readonly itemIds: readonly string[] }
  /** The function threw, timed out or returned a malformed response. */
  | { readonly kind: 'failed' };

/** What to do after an invocation: the new cursor, and the records to give up on (sent to on-failure). */
export interface CheckpointDecision {
  readonly cursor: ShardCursor;
  /** Sequence numbers, in order, of the records Lambda would discard now; empty when none. */
  readonly discarded: readonly string[];
}

/** The cursor of a shard nobody has read yet. */
export const INITIAL_CURSOR: ShardCursor = {
  checkpoint: undefined,
  failures: 0,
  batchLimit: undefined,
  bisectUntil: undefined,
};

/** The most records the next batch may hold. */
export function nextBatchLimit(cursor: ShardCursor, settings: RetrySettings): number {
  return Math.min(settings.batchSize, cursor.batchLimit ?? settings.batchSize);
}

/** Compares two stream sequence numbers (decimal strings longer than a double holds). */
export function compareSequenceNumbers(a: string, b: string): number {
  const difference = BigInt(a) - BigInt(b);
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
}

/** The cursor after records up to `sequenceNumber` were handled without invoking (filtered out or too old). */
export function skipTo(cursor: ShardCursor, sequenceNumber: string): ShardCursor {
  return settle({ ...cursor, checkpoint: sequenceNumber, failures: 0 });
}

/** A batch the function was invoked with, and how the invocation ended. */
export interface InvokedBatch {
  /** Sequence numbers of the batch's records, in shard order, never empty. */
  readonly batch: readonly string[];
  readonly outcome: InvocationOutcome;
}

/**
 * The cursor after invoking the function with a batch.
 * @example
 * decideCheckpoint(cursor, { batch: ['1', '2', '3'], outcome: { kind: 'partial', itemIds: ['2'] } }, settings);
 * // → checkpoint '1'; the next batch starts at '2'
 */
export function decideCheckpoint(
  cursor: ShardCursor,
  invoked: InvokedBatch,
  settings: RetrySettings,
): CheckpointDecision {
  const { batch, outcome } = invoked;
  const last = batch[batch.length - 1];
  if (last === undefined) return { cursor, discarded: [] };
  if (outcome.kind === 'succeeded' || (outcome.kind === 'partial' && outcome.itemIds.length === 0)) {
    return { cursor: settle({ ...cursor, checkpoint: last, failures: 0 }), discarded: [] };
  }
  if (outcome.kind === 'partial') {
    const indexes = outcome.itemIds.map((id) => batch.indexOf(id));
    // Lambda treats an identifier that is not in the batch (or empty) as a failure of the whole batch.
    if (indexes.every((index) => index >= 0))
      return partialFailure(cursor, { batch, lowestFailed: Math.min(...indexes) }, settings);
  }
  return wholeFailure(cursor, batch, settings);
}

/** Checkpoint before the lowest failed record and retry from it; the records before it are done. */
function partialFailure(
  cursor: ShardCursor,
  failed: { readonly batch: readonly string[]; readonly lowestFailed: number },
  settings: RetrySettings,
): CheckpointDecision {
  const { batch, lowestFailed } = failed;
  const checkpoint = lowestFailed === 0 ? cursor.checkpoint : batch[lowestFailed - 1];
  // The retry count belongs to the record at the head: progress past it starts a new count.
  const failures = lowestFailed === 0 ? cursor.failures + 1 : 1;
  const next = { ...cursor, checkpoint, failures };
  return exhausted(failures, settings)
    ? giveUp(next, batch.slice(lowestFailed))
    : { cursor: next, discarded: [] };
}

function wholeFailure(
  cursor: ShardCursor,
  batch: readonly string[],
  settings: RetrySettings,
): CheckpointDecision {
  const last = batch[batch.length - 1] ?? '';
  if (settings.bisectBatchOnError && batch.length > 1) {
    // Splitting a batch does not count against the retry quota (Lambda docs); retry the first half.
    const bisectUntil =
      cursor.bisectUntil !== undefined && compareSequenceNumbers(cursor.bisectUntil, last) > 0
        ? cursor.bisectUntil
        : last;
    return { cursor: { ...cursor, batchLimit: Math.ceil(batch.length / 2), bisectUntil }, discarded: [] };
  }
  const failures = cursor.failures + 1;
  const next = { ...cursor, failures };
  return exhausted(failures, settings) ? giveUp(next, batch) : { cursor: next, discarded: [] };
}

/** The first invocation is not a retry: `retryAttempts` retries allow `retryAttempts + 1` invocations. */
function exhausted(failures: number, settings: RetrySettings): boolean {
  return settings.retryAttempts >= 0 && failures > settings.retryAttempts;
}

function giveUp(cursor: ShardCursor, discarded: readonly string[]): CheckpointDecision {
  const last = discarded[discarded.length - 1];
  return { cursor: settle({ ...cursor, checkpoint: last ?? cursor.checkpoint, failures: 0 }), discarded };
}

/** Ends bisecting once the checkpoint has passed the batch that was split. */
function settle(cursor: ShardCursor): ShardCursor {
  const { checkpoint, bisectUntil } = cursor;
  if (bisectUntil === undefined || checkpoint === undefined) return cursor;
  if (compareSequenceNumbers(checkpoint, bisectUntil) < 0) return cursor;
  return { ...cursor, batchLimit: undefined, bisectUntil: undefined };
}
