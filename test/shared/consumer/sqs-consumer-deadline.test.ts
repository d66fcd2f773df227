import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { consumeSqsEvent, type SqsConsumer } from '../../../shared/lambda/consumer-handler.ts';
import type { ConsumeDeps } from '../../../shared/lambda/inbox-consumer.ts';
import type { ConfirmOutcome } from '../../../shared/outbox/outbox-store.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  sqsRecord,
  testMessageId,
  transactionCanceled,
  withReceiveCount,
} from '../../support/factories.ts';
import {
  client,
  ddb,
  failureHandling,
  inboxMessageIdOf,
  logger,
  type QueueMocks,
  queueMocks,
  resetConsumerMocks,
  SOURCE,
  transactedIds,
} from '../../support/sqs-consumer-fixtures.ts';

const plan: PlanEffect = () => ({ apply: [], onConditionFailure: 'REJECTED' });

const TIMEOUT_MS = 30_000;

const slow = envelope({ messageId: testMessageId(1) });
const quick = envelope({ messageId: testMessageId(2) });
const behind = envelope({ messageId: testMessageId(3) });

let queues: QueueMocks;
let confirmed: string[];
let consumer: SqsConsumer;

/** A Lambda context whose remaining time runs down with the (fake) clock from `timeoutMs`. */
function runningContext(timeoutMs = TIMEOUT_MS): Context {
  const deadline = Date.now() + timeoutMs;
  return { ...lambdaContext(), getRemainingTimeInMillis: () => deadline - Date.now() };
}

/** Messages whose transaction never answers: the backend is stuck on them. */
function stuckOn(...messageIds: string[]): void {
  ddb.on(TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => {
    return messageIds.includes(String(inboxMessageIdOf(input))) ? new Promise(() => {}) : Promise.resolve({});
  });
}

/** Starts a batch and reports whether it has returned yet, and with what. */
function started(batch: Promise<{ response: SQSBatchResponse }>) {
  const state: { response?: SQSBatchResponse } = {};
  void batch.then(({ response }) => {
    state.response = response;
  });
  return state;
}

beforeEach(() => {
  vi.useFakeTimers({ now: FIXED_NOW });
  resetConsumerMocks();
  queues = queueMocks();
  confirmed = [];
  const deps: ConsumeDeps = {
    client,
    inboxTable: 'inbox',
    clock: () => new Date(),
    confirmer: {
      confirm: async (messageId: string): Promise<ConfirmOutcome> => {
        confirmed.push(messageId);
        return 'CONFIRMED';
      },
    },
  };
  consumer = {
    plan,
    deps,
    logger,
    failures: failureHandling(queues),
    conflictKeys: (message) => [message.messageId],
  };
});

afterEach(() => {
  vi.useRealTimers();
});

describe('consumeSqsEvent keeps to the invocation time', () => {
  it('hands back a record the backend is stuck on at the wrap-up point and returns before the timeout', async () => {
    stuckOn(slow.messageId);
    const slowRecord = withReceiveCount(sqsRecord(slow, { messageId: 'slow' }), 4);
    const batch = started(
      consumeSqsEvent({ Records: [slowRecord, sqsRecord(quick)] }, runningContext(), consumer),
    );

    // 5 s before the 30 s timeout: the wrap-up point.
    await vi.advanceTimersByTimeAsync(24_999);
    expect(batch.response).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);

    // Acknowledged, not failed: a failed record, or a stopped invocation, would spend its receive (its fifth).
    expect(batch.response).toEqual({ batchItemFailures: [] });
    expect(queues.requeue).toHaveBeenCalledExactlyOnceWith(SOURCE, slowRecord, 6);
    expect(queues.changeVisibility).not.toHaveBeenCalled();
    expect(confirmed).toEqual([quick.messageId]);
    expect(logger.warn).toHaveBeenCalledWith(
      'message handed back',
      expect.objectContaining({ sqsMessageId: 'slow', disposition: 'REQUEUED' }),
    );
  });

  it('does not start a record whose turn comes after the wrap-up point, and hands it back too', async () => {
    stuckOn(slow.messageId);
    // Both touch one item: the second waits for the first.
    const sharing: SqsConsumer = { ...consumer, conflictKeys: () => ['SKU-1'] };
    const batch = started(
      consumeSqsEvent(
        { Records: [sqsRecord(slow, { messageId: 'slow' }), sqsRecord(behind, { messageId: 'behind' })] },
        runningContext(),
        sharing,
      ),
    );

    await vi.advanceTimersByTimeAsync(25_000);

    expect(batch.response).toEqual({ batchItemFailures: [] });
    expect(queues.requeue.mock.calls.map(([, record]) => record.messageId)).toEqual(['slow', 'behind']);
    expect(transactedIds()).toEqual([slow.messageId]);
  });

  it('stops retrying a hot item before the wrap-up point and requeues it rather than outlive the invocation', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'None' }, { Code: 'TransactionConflict' }]));
    const hot: SqsConsumer = {
      ...consumer,
      // Waits of up to 1 s, 2 s, 4 s…; the jitter takes almost all of each.
      deps: {
        ...consumer.deps,
        conflictRetry: { attempts: 8, baseDelayMs: 1_000, maxDelayMs: 8_000 },
        random: () => 0.999,
      },
    };
    // 6 s in all, a fifth of it kept back: 4.8 s to work in. Tries at 0, 0.999 s and 2.997 s; the next wait would
    // end at 6.993 s, past the wrap-up point.
    const batch = started(
      consumeSqsEvent({ Records: [sqsRecord(slow, { messageId: 'hot' })] }, runningContext(6_000), hot),
    );

    await vi.advanceTimersByTimeAsync(2_997);

    expect(batch.response).toEqual({ batchItemFailures: [] });
    expect(transactedIds()).toEqual([slow.messageId, slow.messageId, slow.messageId]);
    expect(queues.requeue).toHaveBeenCalledOnce();
    expect(logger.warn).toHaveBeenCalledWith(
      'message failed',
      expect.objectContaining({ sqsMessageId: 'hot', disposition: 'REQUEUED' }),
    );
  });

  it('reports a record it had no time for as failed when there is no failure handling to hand it back', async () => {
    stuckOn(slow.messageId);
    const { failures: _none, ...bare } = consumer;
    const batch = started(
      consumeSqsEvent({ Records: [sqsRecord(slow, { messageId: 'slow' })] }, runningContext(), bare),
    );

    await vi.advanceTimersByTimeAsync(25_000);

    expect(batch.response).toEqual({ batchItemFailures: [{ itemIdentifier: 'slow' }] });
  });

  it('confirms nothing for a record handed back, even when its transaction answers afterwards', async () => {
    let answer: (value: unknown) => void = () => {};
    ddb.on(TransactWriteCommand).callsFake(
      () =>
        new Promise((resolve) => {
          answer = resolve;
        }),
    );
    const batch = started(
      consumeSqsEvent({ Records: [sqsRecord(slow, { messageId: 'slow' })] }, runningContext(), consumer),
    );
    await vi.advanceTimersByTimeAsync(25_000);
    expect(batch.response).toEqual({ batchItemFailures: [] });

    answer({});
    await vi.advanceTimersByTimeAsync(1_000);

    // Past the wrap-up point no step starts: the copy put back confirms it (its inbox row is there).
    expect(confirmed).toEqual([]);
    expect(logger.info).not.toHaveBeenCalled();
  });
});
