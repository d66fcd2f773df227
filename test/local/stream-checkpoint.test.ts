import { describe, expect, it } from 'vitest';
import {
  compareSequenceNumbers,
  decideCheckpoint,
  INITIAL_CURSOR,
  nextBatchLimit,
  type RetrySettings,
  type ShardCursor,
  skipTo,
} from '../../infra/dev/local/events/stream-checkpoint.ts';

const settings: RetrySettings = { batchSize: 4, retryAttempts: 2, bisectBatchOnError: false };
const bisecting: RetrySettings = { ...settings, bisectBatchOnError: true };
const batch = ['101', '102', '103', '104'];
const at = (checkpoint: string | undefined, more: Partial<ShardCursor> = {}): ShardCursor => ({
  ...INITIAL_CURSOR,
  checkpoint,
  ...more,
});

describe('decideCheckpoint', () => {
  it('checkpoints the last record of a successful batch', () => {
    expect(decideCheckpoint(at('100'), { batch: batch, outcome: { kind: 'succeeded' } }, settings)).toEqual({
      cursor: at('104'),
      discarded: [],
    });
  });

  it('treats an empty batchItemFailures list as success', () => {
    expect(
      decideCheckpoint(at('100'), { batch: batch, outcome: { kind: 'partial', itemIds: [] } }, settings)
        .cursor.checkpoint,
    ).toBe('104');
  });

  it('checkpoints just before the lowest reported failure and retries from it', () => {
    const decision = decideCheckpoint(
      at('100'),
      { batch: batch, outcome: { kind: 'partial', itemIds: ['104', '102'] } },
      settings,
    );
    expect(decision).toEqual({ cursor: at('101', { failures: 1 }), discarded: [] });
  });

  it('counts a retry when the same head record fails again', () => {
    const decision = decideCheckpoint(
      at('100', { failures: 1 }),
      { batch: batch, outcome: { kind: 'partial', itemIds: ['101'] } },
      settings,
    );
    expect(decision.cursor).toEqual(at('100', { failures: 2 }));
  });

  it('treats an identifier that is not in the batch as a failure of the whole batch', () => {
    const decision = decideCheckpoint(
      at('100'),
      { batch: batch, outcome: { kind: 'partial', itemIds: ['999'] } },
      settings,
    );
    expect(decision.cursor).toEqual(at('100', { failures: 1 }));
  });

  it('retries a failed batch from the same checkpoint', () => {
    expect(
      decideCheckpoint(at(undefined), { batch: batch, outcome: { kind: 'failed' } }, settings).cursor,
    ).toEqual(at(undefined, { failures: 1 }));
  });

  it('gives up after retryAttempts retries and discards the batch past the checkpoint', () => {
    const decision = decideCheckpoint(
      at('100', { failures: 2 }),
      { batch: batch, outcome: { kind: 'failed' } },
      settings,
    );
    expect(decision).toEqual({ cursor: at('104'), discarded: batch });
  });

  it('discards only the records from the lowest reported failure on', () => {
    const decision = decideCheckpoint(
      at('100', { failures: 2 }),
      { batch: batch, outcome: { kind: 'partial', itemIds: ['101', '103'] } },
      settings,
    );
    expect(decision.discarded).toEqual(batch);
    const later = decideCheckpoint(
      at('101', { failures: 2 }),
      { batch: batch.slice(1), outcome: { kind: 'partial', itemIds: ['102'] } },
      settings,
    );
    expect(later.discarded).toEqual(['102', '103', '104']);
  });

  it('retries forever with retryAttempts -1', () => {
    const forever = { ...settings, retryAttempts: -1 };
    expect(
      decideCheckpoint(
        at('100', { failures: 10_000 }),
        { batch: batch, outcome: { kind: 'failed' } },
        forever,
      ).discarded,
    ).toEqual([]);
  });

  it('halves a failing batch without spending a retry, down to a single record', () => {
    let cursor = at('100');
    cursor = decideCheckpoint(cursor, { batch: batch, outcome: { kind: 'failed' } }, bisecting).cursor;
    expect(cursor).toEqual(at('100', { batchLimit: 2, bisectUntil: '104' }));
    expect(nextBatchLimit(cursor, bisecting)).toBe(2);
    cursor = decideCheckpoint(
      cursor,
      { batch: ['101', '102'], outcome: { kind: 'failed' } },
      bisecting,
    ).cursor;
    expect(cursor).toEqual(at('100', { batchLimit: 1, bisectUntil: '104' }));
    cursor = decideCheckpoint(cursor, { batch: ['101'], outcome: { kind: 'failed' } }, bisecting).cursor;
    expect(cursor.failures).toBe(1);
  });

  it('isolates the poison record and returns to full batches after the split range', () => {
    let cursor = at('100', { batchLimit: 1, bisectUntil: '104', failures: 2 });
    const gaveUp = decideCheckpoint(cursor, { batch: ['101'], outcome: { kind: 'failed' } }, bisecting);
    expect(gaveUp.discarded).toEqual(['101']);
    cursor = gaveUp.cursor;
    expect(cursor).toEqual(at('101', { batchLimit: 1, bisectUntil: '104' }));
    cursor = decideCheckpoint(cursor, { batch: ['102'], outcome: { kind: 'succeeded' } }, bisecting).cursor;
    cursor = decideCheckpoint(cursor, { batch: ['103'], outcome: { kind: 'succeeded' } }, bisecting).cursor;
    cursor = decideCheckpoint(cursor, { batch: ['104'], outcome: { kind: 'succeeded' } }, bisecting).cursor;
    expect(cursor).toEqual(at('104'));
    expect(nextBatchLimit(cursor, bisecting)).toBe(4);
  });

  it('does not bisect on a partial batch response: the failure is already pinpointed', () => {
    const decision = decideCheckpoint(
      at('100'),
      { batch: batch, outcome: { kind: 'partial', itemIds: ['103'] } },
      bisecting,
    );
    expect(decision.cursor.batchLimit).toBeUndefined();
  });
});

describe('skipTo', () => {
  it('moves the checkpoint past filtered-out records and clears the retry count', () => {
    expect(skipTo(at('100', { failures: 3 }), '150')).toEqual(at('150'));
  });
});

describe('compareSequenceNumbers', () => {
  it('compares numbers beyond double precision', () => {
    expect(compareSequenceNumbers('1100000000017454423010', '1100000000017454423009')).toBe(1);
    expect(compareSequenceNumbers('99', '100')).toBe(-1);
    expect(compareSequenceNumbers('7', '7')).toBe(0);
  });
});
