import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import type { QueueOperations } from '../../../shared/consumer/failure-handling.ts';
import { consumeSqsEvent, type SqsConsumer } from '../../../shared/lambda/consumer-handler.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  sqsRecord,
  transactionCanceled,
} from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const plan: PlanEffect = (message) => ({
  apply: [
    { ConditionCheck: { TableName: 'stock', Key: { sku: message.aggregateId }, ConditionExpression: 'a' } },
  ],
  onConditionFailure: 'REJECTED',
});
const logger = { info: vi.fn(), warn: vi.fn() };
const queues: QueueOperations = { changeVisibility: vi.fn(), deadLetter: vi.fn(), requeue: vi.fn() };
const consumer: SqsConsumer = {
  plan,
  logger,
  deps: {
    client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
    inboxTable: 'inbox',
    clock: () => FIXED_NOW,
    sleep: async () => {},
  },
  failures: {
    queues,
    sourceQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
    deadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq',
    maxReceiveCount: 5,
    backoff: { baseSeconds: 10, maxSeconds: 900 },
    random: () => 0.5,
  },
};

beforeEach(() => {
  ddb.reset();
  logger.info.mockReset();
  logger.warn.mockReset();
});

describe('consumeSqsEvent', () => {
  it('counts a message requeued after losing every transaction conflict under its topic', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));
    const message = envelope({ topic: 'order.created', aggregateId: 'SKU-1' });

    const { response, topics } = await consumeSqsEvent(
      { Records: [sqsRecord(message)] },
      lambdaContext(),
      consumer,
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(topics['order.created']).toMatchObject({ requeued: 1, applied: 0, deadLettered: 0 });
  });

  it('names the message, its topic and aggregate in the log line of a failed message', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));
    const message = envelope({ topic: 'order.created', aggregateId: 'SKU-1' });

    await consumeSqsEvent({ Records: [sqsRecord(message)] }, lambdaContext(), consumer);

    expect(logger.warn).toHaveBeenCalledWith(
      'message failed',
      expect.objectContaining({ messageId: message.messageId, topic: 'order.created', aggregateId: 'SKU-1' }),
    );
  });

  it('names the message, its topic and aggregate in the log line of a consumed message', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const message = envelope({ aggregateId: 'SKU-2' });

    await consumeSqsEvent({ Records: [sqsRecord(message)] }, lambdaContext(), consumer);

    expect(logger.info).toHaveBeenCalledWith(
      'consumed message',
      expect.objectContaining({ messageId: message.messageId, topic: message.topic, aggregateId: 'SKU-2' }),
    );
  });
});
