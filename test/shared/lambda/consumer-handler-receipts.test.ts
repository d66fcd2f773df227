import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { createConsumerHandler } from '../../../shared/lambda/consumer-handler.ts';
import { readReceiptBody } from '../../../shared/receipts/receipt.ts';
import {
  decrementPlan,
  envelope,
  FIXED_NOW,
  lambdaContext,
  sqsRecord,
  testMessageId,
  transactionCanceled,
} from '../../support/factories.ts';
import { ddb, HANDLER_ENV, resetHandlerMocks, sqs } from '../../support/sqs-consumer-fixtures.ts';

const RECEIPTS = 'https://sqs.eu-west-1.amazonaws.com/111111111111/orders-receipts';
const env = {
  ...HANDLER_ENV,
  INBOX_TABLE: 'inventory-inbox',
  RECEIPT_QUEUE_URL: RECEIPTS,
  SUBSCRIBER: 'inventory',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

const stockPlan = decrementPlan({ table: 'stock', onConditionFailure: 'REJECTED_OUT_OF_STOCK' });

/** Every receipt sent to the receipt queue, in the order sent. */
function sentReceipts() {
  return sqs
    .commandCalls(SendMessageBatchCommand)
    .filter((call) => call.args[0].input.QueueUrl === RECEIPTS)
    .flatMap((call) => call.args[0].input.Entries ?? [])
    .flatMap((entry) => readReceiptBody(entry.MessageBody as string).receipts);
}

beforeEach(() => {
  resetHandlerMocks();
  vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('createConsumerHandler with RECEIPT_QUEUE_URL', () => {
  it("confirms by a receipt signed SUBSCRIBER, and never writes the producer's outbox", async () => {
    const message = envelope({ messageId: testMessageId(1), aggregateId: 'SKU-9' });

    const response = await createConsumerHandler({ plan: () => stockPlan }).withEnv(env)(
      { Records: [sqsRecord(message)] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(sentReceipts()).toEqual([
      {
        messageId: message.messageId,
        subscriber: 'inventory',
        outcome: 'APPLIED',
        appliedAt: FIXED_NOW.toISOString(),
      },
    ]);
    expect(ddb.commandCalls(UpdateCommand)).toEqual([]);
    const tables = ddb
      .commandCalls(TransactWriteCommand)
      .flatMap((call) => call.args[0].input.TransactItems ?? [])
      .map((item) => item.Put?.TableName ?? item.Update?.TableName);
    expect(tables).toEqual(['inventory-inbox', 'stock']);
  });

  it('sends the receipt again for a duplicate, with the outcome the inbox recorded the first time', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(
        transactionCanceled([
          { Code: 'ConditionalCheckFailed', Item: { outcome: { S: 'REJECTED_OUT_OF_STOCK' } } },
          {},
        ]),
      );
    const message = envelope({ messageId: testMessageId(2) });

    await createConsumerHandler({ plan: () => stockPlan }).withEnv(env)(
      { Records: [sqsRecord(message)] },
      lambdaContext(),
    );

    expect(sentReceipts()).toMatchObject([
      { messageId: message.messageId, outcome: 'REJECTED_OUT_OF_STOCK' },
    ]);
  });

  it('sends the receipts of records applied in parallel as one SQS message', async () => {
    const messages = [1, 2, 3].map((n) => envelope({ messageId: testMessageId(n), aggregateId: `SKU-${n}` }));
    const handler = createConsumerHandler({
      plan: () => stockPlan,
      conflictKeys: (message) => [message.aggregateId],
    }).withEnv(env);

    await handler({ Records: messages.map((message) => sqsRecord(message)) }, lambdaContext());

    expect(
      sentReceipts()
        .map((receipt) => receipt.messageId)
        .sort(),
    ).toEqual(messages.map((m) => m.messageId).sort());
    const entries = sqs
      .commandCalls(SendMessageBatchCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(entries).toHaveLength(1);
  });

  it('fails the record whose receipt the queue refused, so SQS redelivers it and the receipt is sent again', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('AccessDenied'));
    const message = envelope({ messageId: testMessageId(4) });
    const record = sqsRecord(message);

    const response = await createConsumerHandler({ plan: () => stockPlan }).withEnv(env)(
      { Records: [record] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
  });

  it('refuses RECEIPT_QUEUE_URL without SUBSCRIBER, and beside OUTBOX_TABLE, with a ConfigError naming them', () => {
    const handler = createConsumerHandler({ plan: () => stockPlan });

    expect(() => handler.withEnv({ ...env, SUBSCRIBER: undefined })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, SUBSCRIBER: undefined })).toThrow('SUBSCRIBER is not set');
    expect(() => handler.withEnv({ ...env, SUBSCRIBER: 'Inventory' })).toThrow('SUBSCRIBER');
    expect(() => handler.withEnv({ ...env, OUTBOX_TABLE: 'orders-outbox' })).toThrow(
      'RECEIPT_QUEUE_URL and OUTBOX_TABLE are both set: a consumer confirms by receipt or in the outbox, not both',
    );
  });
});
