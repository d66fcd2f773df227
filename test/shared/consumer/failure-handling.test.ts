import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_VISIBILITY_BACKOFF,
  type FailureHandling,
  handleFailedRecord,
  type QueueOperations,
  type VisibilityBackoff,
  visibilityTimeoutSeconds,
} from '../../../shared/consumer/failure-handling.ts';
import { OutOfTimeError, PoisonMessageError, TransactionConflictError } from '../../../shared/errors.ts';
import { sqsRecord, withReceiveCount } from '../../support/factories.ts';

const SQS_MAX_VISIBILITY_SECONDS = 43_200;
const backoff: VisibilityBackoff = { baseSeconds: 10, maxSeconds: 900 };
const top = () => 1;

/** The visibility bound after the `receiveCount`-th failed receive, before jitter. */
function ceilingOf(receiveCount: number, b: VisibilityBackoff): number {
  const growth = b.baseSeconds === 0 ? 0 : b.baseSeconds * 2 ** Math.max(0, receiveCount - 1);
  return Math.min(b.maxSeconds, SQS_MAX_VISIBILITY_SECONDS, growth);
}

describe('visibilityTimeoutSeconds', () => {
  it('doubles with every failed receive', () => {
    expect([1, 2, 3, 4, 5].map((count) => visibilityTimeoutSeconds(count, backoff, top))).toEqual([
      10, 20, 40, 80, 160,
    ]);
  });

  it('is capped at maxSeconds', () => {
    expect(visibilityTimeoutSeconds(7, backoff, top)).toBe(640);
    expect(visibilityTimeoutSeconds(8, backoff, top)).toBe(900);
    expect(visibilityTimeoutSeconds(500, backoff, top)).toBe(900);
  });

  it('never exceeds SQS’s 12-hour maximum, whatever maxSeconds says', () => {
    const generous = { baseSeconds: 60, maxSeconds: 1_000_000 };
    expect(visibilityTimeoutSeconds(30, generous, top)).toBe(SQS_MAX_VISIBILITY_SECONDS);
    expect(visibilityTimeoutSeconds(5_000, generous, top)).toBe(SQS_MAX_VISIBILITY_SECONDS);
  });

  it('is never below one second', () => {
    expect(visibilityTimeoutSeconds(1, { baseSeconds: 0, maxSeconds: 900 }, () => 0)).toBe(1);
    // 0 × 2^1024 would be NaN: a receive count past 1 024 (no redrive policy) must still give a number.
    expect(visibilityTimeoutSeconds(1_100, { baseSeconds: 0, maxSeconds: 900 }, () => 0)).toBe(1);
    expect(visibilityTimeoutSeconds(1, { baseSeconds: 1, maxSeconds: 900 }, () => 0)).toBe(1);
  });

  it('keeps half of the bound fixed and jitters the other half (equal jitter)', () => {
    expect(visibilityTimeoutSeconds(3, backoff, () => 0)).toBe(20);
    expect(visibilityTimeoutSeconds(3, backoff, () => 0.5)).toBe(30);
  });

  it('treats a missing or zero receive count like the first receive', () => {
    expect(visibilityTimeoutSeconds(0, backoff, top)).toBe(10);
  });

  it('defaults to 10 s after the first failure, capped at 15 minutes', () => {
    expect(visibilityTimeoutSeconds(1, DEFAULT_VISIBILITY_BACKOFF, top)).toBe(10);
    expect(visibilityTimeoutSeconds(100, DEFAULT_VISIBILITY_BACKOFF, top)).toBe(900);
  });

  it('stays a whole number of seconds within [max(1, ceiling / 2), max(1, ceiling)] for any input', () => {
    fc.assert(
      fc.property(
        fc.record({
          receiveCount: fc.integer({ min: 0, max: 2_000 }),
          baseSeconds: fc.integer({ min: 0, max: 10_000 }),
          maxSeconds: fc.integer({ min: 1, max: 100_000 }),
          draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        }),
        ({ receiveCount, baseSeconds, maxSeconds, draw }) => {
          const b = { baseSeconds, maxSeconds };
          const seconds = visibilityTimeoutSeconds(receiveCount, b, () => draw);
          const ceiling = ceilingOf(receiveCount, b);
          expect(Number.isInteger(seconds)).toBe(true);
          expect(seconds).toBeGreaterThanOrEqual(Math.max(1, Math.floor(ceiling / 2)));
          expect(seconds).toBeLessThanOrEqual(Math.max(1, ceiling));
          expect(seconds).toBeLessThanOrEqual(SQS_MAX_VISIBILITY_SECONDS);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never shrinks from one receive to the next for the same draw', () => {
    fc.assert(
      fc.property(
        fc.record({
          receiveCount: fc.integer({ min: 1, max: 60 }),
          baseSeconds: fc.integer({ min: 1, max: 600 }),
          maxSeconds: fc.integer({ min: 1, max: 50_000 }),
          draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        }),
        ({ receiveCount, baseSeconds, maxSeconds, draw }) => {
          const b = { baseSeconds, maxSeconds };
          expect(visibilityTimeoutSeconds(receiveCount + 1, b, () => draw)).toBeGreaterThanOrEqual(
            visibilityTimeoutSeconds(receiveCount, b, () => draw),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('handleFailedRecord', () => {
  const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
  const DLQ = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created-dlq';

  function handling(overrides: Partial<FailureHandling> = {}) {
    const queues = {
      changeVisibility: vi.fn<QueueOperations['changeVisibility']>(async () => {}),
      deadLetter: vi.fn<QueueOperations['deadLetter']>(async () => {}),
      requeue: vi.fn<QueueOperations['requeue']>(async () => {}),
    };
    const settings: FailureHandling = {
      queues,
      sourceQueueUrl: SOURCE,
      deadLetterQueueUrl: DLQ,
      maxReceiveCount: 5,
      backoff,
      random: () => 0.5,
      ...overrides,
    };
    return { queues, settings };
  }

  it('dead-letters a poison message at once with reason POISON, without touching its visibility', async () => {
    const { queues, settings } = handling();
    const record = sqsRecord();

    const disposition = await handleFailedRecord(record, new PoisonMessageError('not an envelope'), settings);

    expect(disposition).toBe('DEAD_LETTERED');
    expect(queues.deadLetter).toHaveBeenCalledExactlyOnceWith({
      queueUrl: DLQ,
      record: record,
      reason: 'POISON',
      lastError: 'PoisonMessageError: not an envelope',
    });
    expect(queues.changeVisibility).not.toHaveBeenCalled();
  });

  it.each([5, 6])(
    'dead-letters a record on receive %i of 5 with reason MAX_RECEIVES and the last error',
    async (receiveCount) => {
      const { queues, settings } = handling();
      const record = withReceiveCount(sqsRecord(), receiveCount);

      const disposition = await handleFailedRecord(record, new Error('DynamoDB unavailable'), settings);

      expect(disposition).toBe('DEAD_LETTERED');
      expect(queues.deadLetter).toHaveBeenCalledExactlyOnceWith({
        queueUrl: DLQ,
        record: record,
        reason: 'MAX_RECEIVES',
        lastError: 'Error: DynamoDB unavailable',
      });
      expect(queues.changeVisibility).not.toHaveBeenCalled();
    },
  );

  it.each([1, 5, 50])(
    'requeues, never dead-letters, a message that only lost to concurrent transactions (receive %i of 5)',
    async (receiveCount) => {
      const { queues, settings } = handling({ random: () => 0.5 });
      const record = withReceiveCount(sqsRecord(), receiveCount);

      const disposition = await handleFailedRecord(record, new TransactionConflictError('hot SKU'), settings);

      expect(disposition).toBe('REQUEUED');
      // A fresh copy after 1 + ⌊0.5 × 10⌋ s; its receive count starts again, so contention spends none.
      expect(queues.requeue).toHaveBeenCalledExactlyOnceWith(SOURCE, record, 6);
      expect(queues.deadLetter).not.toHaveBeenCalled();
      expect(queues.changeVisibility).not.toHaveBeenCalled();
    },
  );

  it('requeues, never dead-letters, a record the invocation ran out of time for, even on its last receive', async () => {
    const { queues, settings } = handling({ random: () => 0.5 });
    const record = withReceiveCount(sqsRecord(), 5);

    const disposition = await handleFailedRecord(
      record,
      new OutOfTimeError('the invocation reached its wrap-up point'),
      settings,
    );

    // The backend was slow, not the message: a fresh copy, its receive count starting again.
    expect(disposition).toBe('REQUEUED');
    expect(queues.requeue).toHaveBeenCalledExactlyOnceWith(SOURCE, record, 6);
    expect(queues.deadLetter).not.toHaveBeenCalled();
  });

  it('names a poison message POISON even on its last receive', async () => {
    const { queues, settings } = handling();

    await handleFailedRecord(withReceiveCount(sqsRecord(), 5), new PoisonMessageError('bad'), settings);

    expect(queues.deadLetter.mock.calls[0]?.[0].reason).toBe('POISON');
  });

  it('backs a transient failure off on the source queue with the computed visibility timeout', async () => {
    const { queues, settings } = handling();
    const record = withReceiveCount(sqsRecord(), 3);

    const disposition = await handleFailedRecord(record, new Error('throttled'), settings);

    expect(disposition).toBe('RETRY_LATER');
    expect(queues.changeVisibility).toHaveBeenCalledExactlyOnceWith(
      SOURCE,
      record.receiptHandle,
      visibilityTimeoutSeconds(3, backoff, () => 0.5),
    );
    expect(queues.changeVisibility.mock.calls[0]?.[2]).toBe(30);
    expect(queues.deadLetter).not.toHaveBeenCalled();
  });

  it('treats an unreadable receive count as the first receive', async () => {
    const { queues, settings } = handling({ maxReceiveCount: 2 });

    await handleFailedRecord(withReceiveCount(sqsRecord(), Number.NaN), new Error('x'), settings);

    expect(queues.changeVisibility).toHaveBeenCalledWith(SOURCE, expect.any(String), 8);
  });

  it('describes a thrown non-Error value as text', async () => {
    const { queues, settings } = handling({ maxReceiveCount: 1 });

    await handleFailedRecord(sqsRecord(), 'plain string failure', settings);

    expect(queues.deadLetter.mock.calls[0]?.[0].lastError).toBe('plain string failure');
  });

  it('lets a failure to dead-letter escape, so SQS keeps the message', async () => {
    const { queues, settings } = handling();
    queues.deadLetter.mockRejectedValueOnce(new Error('AccessDenied'));

    await expect(handleFailedRecord(sqsRecord(), new PoisonMessageError('bad'), settings)).rejects.toThrow(
      'AccessDenied',
    );
  });
});
