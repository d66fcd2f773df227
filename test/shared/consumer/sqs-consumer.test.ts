import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { consumeSqsBatch, type SqsConsumer } from '../../../shared/lambda/consumer-handler.ts';
import type { ConsumeDeps } from '../../../shared/lambda/inbox-consumer.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  sqsRecord,
  testMessageId,
  transactionCanceled,
} from '../../support/factories.ts';
import {
  client,
  ddb,
  logger,
  resetConsumerMocks,
  transactedIds,
  transactionsFailFor,
} from '../../support/sqs-consumer-fixtures.ts';

const deps: ConsumeDeps = {
  client,
  inboxTable: 'inbox',
  confirmer: new DynamoOutboxStore({ client, tableName: 'outbox' }),
  clock: () => FIXED_NOW,
};
const plan: PlanEffect = (message) => ({
  apply: [
    {
      Update: {
        TableName: 'inventory',
        Key: { sku: `sku-of-${message.aggregateId}` },
        UpdateExpression: 'SET #a = #a - :q',
        ConditionExpression: '#a >= :q',
        ExpressionAttributeNames: { '#a': 'available' },
        ExpressionAttributeValues: { ':q': 1 },
      },
    },
  ],
  onConditionFailure: 'REJECTED_OUT_OF_STOCK',
});
const consumer: SqsConsumer = { plan, deps, logger };

const first = envelope({ messageId: testMessageId(1), aggregateId: 'order-1' });
const second = envelope({ messageId: testMessageId(2), aggregateId: 'order-2' });
const third = envelope({ messageId: testMessageId(3), aggregateId: 'order-3' });
const messages = [first, second, third];

function confirmedIds(): unknown[] {
  return ddb
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input.Key?.messageId)
    .sort();
}

beforeEach(() => {
  resetConsumerMocks();
});

describe('consumeSqsBatch', () => {
  it('consumes every record and reports no failure', async () => {
    const event = { Records: messages.map((m) => sqsRecord(m)) };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(transactedIds()).toEqual(messages.map((m) => m.messageId));
    expect(confirmedIds()).toEqual(messages.map((m) => m.messageId));
  });

  it('reports only the record whose transaction conflicted; the others in the batch succeed', async () => {
    transactionsFailFor(
      second.messageId,
      transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]),
    );
    const event = { Records: messages.map((m) => sqsRecord(m, { messageId: `sqs-${m.aggregateId}` })) };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'sqs-order-2' }] });
    expect(confirmedIds()).toEqual([first.messageId, third.messageId]);
  });

  it('reports a record whose transaction failed for another reason', async () => {
    transactionsFailFor(testMessageId(1), new Error('ProvisionedThroughputExceededException'));
    const event = { Records: messages.map((m) => sqsRecord(m, { messageId: `sqs-${m.aggregateId}` })) };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'sqs-order-1' }] });
  });

  it('fails a record with a malformed body alone', async () => {
    const event = {
      Records: [
        sqsRecord(first, { messageId: 'good-1' }),
        sqsRecord(envelope(), { messageId: 'not-json', rawBody: '{"messageId":' }),
        sqsRecord(envelope(), { messageId: 'not-an-envelope', rawBody: JSON.stringify({ hello: 'world' }) }),
        sqsRecord(third, { messageId: 'good-3' }),
      ],
    };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual([
      'not-an-envelope',
      'not-json',
    ]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('acknowledges a duplicate delivery without reporting it as a failure', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(
        transactionCanceled([{ Code: 'ConditionalCheckFailed', Item: { outcome: { S: 'APPLIED' } } }, {}]),
      );

    const response = await consumeSqsBatch({ Records: [sqsRecord(first)] }, lambdaContext(), consumer);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(logger.info).toHaveBeenCalledWith(
      'consumed message',
      expect.objectContaining({ kind: 'DUPLICATE', outcome: 'APPLIED' }),
    );
  });

  it('reports every record of a batch that failed entirely instead of throwing', async () => {
    ddb.on(TransactWriteCommand).rejects(new Error('DynamoDB unavailable'));
    const event = { Records: messages.map((m) => sqsRecord(m, { messageId: `sqs-${m.aggregateId}` })) };

    const response = await consumeSqsBatch(event, lambdaContext(), consumer);

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual([
      'sqs-order-1',
      'sqs-order-2',
      'sqs-order-3',
    ]);
  });
});
