import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { visibilityTimeoutSeconds } from '../../../shared/consumer/failure-handling.ts';
import { consumeSqsBatch, type SqsConsumer } from '../../../shared/lambda/consumer-handler.ts';
import type { ConsumeDeps } from '../../../shared/lambda/inbox-consumer.ts';
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
  BACKOFF,
  client,
  DLQ,
  ddb,
  failureHandling,
  inboxMessageIdOf,
  logger,
  type QueueMocks,
  queueMocks,
  resetConsumerMocks,
  SOURCE,
  transactionsFailFor,
} from '../../support/sqs-consumer-fixtures.ts';

const deps: ConsumeDeps = {
  client,
  inboxTable: 'inbox',
  clock: () => FIXED_NOW,
  // Conflicts are retried in the invocation without really waiting.
  sleep: async () => {},
};
const plan: PlanEffect = () => ({ reject: 'NOTHING_TO_DO' });

const good1 = envelope({ messageId: testMessageId(1) });
const flaky = envelope({ messageId: testMessageId(2) });
const good3 = envelope({ messageId: testMessageId(3) });

let queues: QueueMocks;
/** The consumer with failure handling on its queue and dead-letter queue. */
let consumer: SqsConsumer;

beforeEach(() => {
  resetConsumerMocks();
  queues = queueMocks();
  consumer = { plan, deps, logger, failures: failureHandling(queues) };
});

/** DynamoDB is unavailable for the inbox put of `messageId` only. */
function unavailableFor(messageId: string): void {
  transactionsFailFor(messageId, new Error('ProvisionedThroughputExceededException: slow down'));
}

function committedIds(): unknown[] {
  return ddb
    .commandCalls(TransactWriteCommand)
    .flatMap((call) => {
      const id = inboxMessageIdOf(call.args[0].input);
      return id === undefined ? [] : [id];
    })
    .sort();
}

describe('consumeSqsBatch with failure handling', () => {
  it('dead-letters a malformed body as POISON and acknowledges it; the rest of the batch succeeds', async () => {
    const malformed = sqsRecord(envelope(), { messageId: 'not-json', rawBody: '{"messageId":' });
    const notAnEnvelope = sqsRecord(envelope(), { messageId: 'no-envelope', rawBody: '{"hello":"world"}' });
    const event = {
      Records: [sqsRecord(good1, { messageId: 'good-1' }), malformed, notAnEnvelope, sqsRecord(good3)],
    };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(
      queues.deadLetter.mock.calls.map(([letter]) => [
        letter.queueUrl,
        letter.record.messageId,
        letter.reason,
      ]),
    ).toEqual([
      [DLQ, 'not-json', 'POISON'],
      [DLQ, 'no-envelope', 'POISON'],
    ]);
    expect(queues.deadLetter.mock.calls[0]?.[0].lastError).toMatch(
      /^PoisonMessageError: SQS message not-json/,
    );
    expect(queues.changeVisibility).not.toHaveBeenCalled();
    expect(committedIds()).toEqual([good1.messageId, good3.messageId]);
  });

  it('backs off a transient failure with ChangeMessageVisibility and reports only that record', async () => {
    unavailableFor(flaky.messageId);
    const flakyRecord = withReceiveCount(sqsRecord(flaky, { messageId: 'flaky' }), 2);
    const event = { Records: [sqsRecord(good1), flakyRecord, sqsRecord(good3)] };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'flaky' }] });
    expect(queues.changeVisibility).toHaveBeenCalledExactlyOnceWith(
      SOURCE,
      flakyRecord.receiptHandle,
      visibilityTimeoutSeconds(2, BACKOFF, () => 0.5),
    );
    expect(queues.deadLetter).not.toHaveBeenCalled();
    expect(committedIds()).toEqual([good1.messageId, flaky.messageId, good3.messageId]);
    expect(logger.warn).toHaveBeenCalledWith(
      'message failed',
      expect.objectContaining({ sqsMessageId: 'flaky', disposition: 'RETRY_LATER' }),
    );
  });

  it('requeues a record that keeps conflicting on a hot item, even on its last receive, and acknowledges it', async () => {
    transactionsFailFor(
      flaky.messageId,
      transactionCanceled([{ Code: 'None' }, { Code: 'TransactionConflict' }]),
    );
    const hot = withReceiveCount(sqsRecord(flaky, { messageId: 'hot' }), 5);

    const response = await consumeSqsBatch({ Records: [sqsRecord(good1), hot] }, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(queues.requeue).toHaveBeenCalledExactlyOnceWith(SOURCE, hot, 6);
    expect(queues.deadLetter).not.toHaveBeenCalled();
    // Tried within the invocation first: the default retry's eight attempts.
    expect(committedIds().filter((id) => id === flaky.messageId)).toHaveLength(8);
  });

  it('dead-letters a transient failure on its last receive (MAX_RECEIVES) and acknowledges it', async () => {
    unavailableFor(flaky.messageId);
    const lastReceive = withReceiveCount(sqsRecord(flaky, { messageId: 'flaky' }), 5);

    const response = await consumeSqsBatch(
      { Records: [lastReceive, sqsRecord(good3)] },
      lambdaContext(),
      consumer,
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(queues.deadLetter).toHaveBeenCalledExactlyOnceWith({
      queueUrl: DLQ,
      record: lastReceive,
      reason: 'MAX_RECEIVES',
      lastError: 'Error: ProvisionedThroughputExceededException: slow down',
    });
    expect(queues.changeVisibility).not.toHaveBeenCalled();
  });

  it('reports a poison record as failed when it cannot be dead-lettered, so SQS keeps it', async () => {
    queues.deadLetter.mockRejectedValueOnce(new Error('AccessDenied'));
    const malformed = sqsRecord(envelope(), { messageId: 'not-json', rawBody: 'nope' });

    const response = await consumeSqsBatch(
      { Records: [malformed, sqsRecord(good1)] },
      lambdaContext(),
      consumer,
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'not-json' }] });
    expect(committedIds()).toEqual([good1.messageId]);
  });

  it('still reports a transient failure when its visibility cannot be changed', async () => {
    unavailableFor(flaky.messageId);
    queues.changeVisibility.mockRejectedValueOnce(new Error('ReceiptHandleIsInvalid'));

    const response = await consumeSqsBatch(
      { Records: [sqsRecord(flaky, { messageId: 'flaky' })] },
      lambdaContext(),
      consumer,
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'flaky' }] });
  });

  it('leaves a malformed body to SQS (a batch item failure) when no failure handling is given', async () => {
    const malformed = sqsRecord(envelope(), { messageId: 'not-json', rawBody: 'nope' });

    const response = await consumeSqsBatch({ Records: [malformed] }, lambdaContext(), {
      plan,
      deps,
      logger,
    });

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'not-json' }] });
    expect(queues.deadLetter).not.toHaveBeenCalled();
  });
});
