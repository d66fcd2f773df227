import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import { ConfigError, TransactionConditionError } from '../../../shared/errors.ts';
import { outboxWriterFromEnv } from '../../../shared/lambda/outbox-writer.ts';
import { envelope, FIXED_NOW, testMessageId, transactionCanceled } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const ORDERED = { 'order.created': { scope: 'order', gapTimeoutMs: 300_000 } };
const env = {
  OUTBOX_TABLE: 'outbox-table',
  ORDERED_TOPICS: JSON.stringify(ORDERED),
  SEQUENCE_TABLE: 'outbox-sequences',
  AWS_REGION: 'eu-west-1',
};

beforeEach(() => {
  ddb.reset();
});

describe('outboxWriterFromEnv with ordering', () => {
  it('reads ORDERED_TOPICS and SEQUENCE_TABLE', () => {
    expect(outboxWriterFromEnv(env, client)).toMatchObject({
      ordering: ORDERED,
      sequenceTable: 'outbox-sequences',
    });
  });

  it('leaves both out when neither is set', () => {
    const writer = outboxWriterFromEnv({ OUTBOX_TABLE: 'outbox-table' }, client);

    expect(writer).not.toHaveProperty('ordering');
    expect(writer).not.toHaveProperty('sequenceTable');
  });

  it.each([
    ['ORDERED_TOPICS', '{"order.created":{"scope":"order","gapTimeoutMs":10}}'],
    ['SEQUENCE_TABLE', 'no'],
  ])('fails at start with a ConfigError naming a malformed %s', (name, value) => {
    expect(() => outboxWriterFromEnv({ ...env, [name]: value }, client)).toThrow(ConfigError);
    expect(() => outboxWriterFromEnv({ ...env, [name]: value }, client)).toThrow(name);
  });
});

describe('writeWithOutbox against the SDK', () => {
  it('numbers from the counter it reads and retries, on a cancelled counter condition, with a new token', async () => {
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: { lastSeq: 4 } })
      .resolvesOnce({ Item: { lastSeq: 5 } });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]))
      .resolves({});
    const writer = { ...outboxWriterFromEnv(env, client), clock: () => FIXED_NOW };

    await writeWithOutbox(writer, { actions: [], messages: [envelope({ messageId: testMessageId(1) })] });

    const gets = ddb.commandCalls(GetCommand).map((call) => call.args[0].input);
    expect(gets).toHaveLength(2);
    expect(gets[0]).toMatchObject({
      TableName: 'outbox-sequences',
      Key: { orderKey: 'order#order-1' },
      ConsistentRead: true,
    });
    const [first, second] = ddb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input);
    expect(first?.TransactItems?.[0]?.Put?.Item).toMatchObject({ orderKey: 'order#order-1', seq: 5 });
    expect(second?.TransactItems?.[0]?.Put?.Item).toMatchObject({ orderKey: 'order#order-1', seq: 6 });
    expect(second?.TransactItems?.[1]?.Update).toMatchObject({
      TableName: 'outbox-sequences',
      ConditionExpression: '#lastSeq = :from',
      ExpressionAttributeValues: { ':from': 5, ':to': 6 },
    });
    expect(first?.ClientRequestToken).not.toBe(second?.ClientRequestToken);
  });

  it('does not retry a cancellation whose failed condition is the message Put (a reused message id)', async () => {
    ddb.on(GetCommand).resolves({});
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }]));

    const error = await writeWithOutbox(outboxWriterFromEnv(env, client), {
      actions: [],
      messages: [envelope()],
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([0]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});
