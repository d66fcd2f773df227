import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import {
  ConfigError,
  InvalidMessageError,
  MessageTooLargeError,
  TransactionConditionError,
  TransactionConflictError,
  TransactionLimit,
  TransactionLimitError,
} from '../../../shared/errors.ts';
import { dueShardOf } from '../../../shared/outbox/outbox-item.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import { envelope, FIXED_NOW, testMessageId, transactionCanceled } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const options = { client, outboxTable: 'outbox', clock: () => FIXED_NOW };

const orderPut: TransactWriteAction = {
  Put: {
    TableName: 'orders',
    Item: { orderId: 'order-1', customerId: 'c' },
    ConditionExpression: 'attribute_not_exists(orderId)',
  },
};
const auditPut: TransactWriteAction = { Put: { TableName: 'audit', Item: { id: 'audit-1' } } };

function sentTransactItems(): TransactWriteAction[] {
  const calls = ddb.commandCalls(TransactWriteCommand);
  expect(calls).toHaveLength(1);
  return calls[0]?.args[0].input.TransactItems ?? [];
}

beforeEach(() => {
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
});

describe('writeWithOutbox', () => {
  it('writes the business actions first, then one outbox Put per message, in ONE transaction', async () => {
    const first = envelope({ messageId: testMessageId(1) });
    const second = envelope({ messageId: testMessageId(2), headers: { traceparent: 't' } });

    await writeWithOutbox(options, { actions: [orderPut, auditPut], messages: [first, second] });

    const items = sentTransactItems();
    expect(items).toHaveLength(4);
    expect(items[0]).toEqual(orderPut);
    expect(items[1]).toEqual(auditPut);
    expect(items[2]?.Put?.Item).toMatchObject({ messageId: first.messageId });
    expect(items[3]?.Put?.Item).toMatchObject({ messageId: second.messageId, headers: { traceparent: 't' } });
  });

  it('stores each message PENDING, with no attempts, in the due index after the stream grace period', async () => {
    const message = envelope();

    await writeWithOutbox(options, { actions: [orderPut], messages: [message] });

    expect(sentTransactItems()[1]).toEqual({
      Put: {
        TableName: 'outbox',
        Item: {
          ...message,
          status: 'PENDING',
          attempts: 0,
          dueShard: dueShardOf(message.messageId),
          nextAttemptAt: '2024-05-01T12:01:00.000Z',
          updatedAt: '2024-05-01T12:00:00.000Z',
        },
        ConditionExpression: 'attribute_not_exists(#messageId)',
        ExpressionAttributeNames: { '#messageId': 'messageId' },
      },
    });
  });

  it('uses the configured grace period and number of due shards', async () => {
    const message = envelope();

    await writeWithOutbox(
      { ...options, streamGraceMs: 5_000, dueShards: 1 },
      { actions: [orderPut], messages: [message] },
    );

    expect(sentTransactItems()[1]?.Put?.Item).toMatchObject({
      nextAttemptAt: '2024-05-01T12:00:05.000Z',
      dueShard: '0',
    });
  });

  it('refuses a write without messages and sends nothing', async () => {
    await expect(writeWithOutbox(options, { actions: [orderPut], messages: [] })).rejects.toThrow(RangeError);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('maps a failed condition on the business action to TransactionConditionError [0]', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }]));

    const error = await writeWithOutbox(options, { actions: [orderPut], messages: [envelope()] }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([0]);
  });

  it('maps a transaction conflict to TransactionConflictError', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));

    await expect(
      writeWithOutbox(options, { actions: [orderPut], messages: [envelope()] }),
    ).rejects.toBeInstanceOf(TransactionConflictError);
  });

  it('counts the outbox Puts against the 100-action limit and then sends nothing', async () => {
    const actions = Array.from(
      { length: 100 },
      (_, i): TransactWriteAction => ({ Put: { TableName: 'orders', Item: { orderId: `o-${i}` } } }),
    );

    const error = await writeWithOutbox(options, { actions, messages: [envelope()] }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TransactionLimitError);
    expect((error as TransactionLimitError).limit).toBe(TransactionLimit.ACTIONS);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('refuses a message whose outbox item exceeds 400 KB, naming the outbox Put, and sends nothing', async () => {
    // A queue that takes 1 MiB messages: the item limit is the one that binds.
    const error = await writeWithOutbox(
      { ...options, maxMessageBytes: 1024 * 1024 },
      {
        actions: [orderPut],
        messages: [envelope({ payload: { blob: 'x'.repeat(401 * 1024) } })],
      },
    ).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionLimitError);
    expect((error as TransactionLimitError).limit).toBe(TransactionLimit.ITEM_SIZE);
    expect((error as TransactionLimitError).message).toContain('action 1 (Put outbox)');
    expect(ddb.calls()).toHaveLength(0);
  });

  describe('refuses, before anything is written, a message that could not be delivered unchanged', () => {
    it.each([
      ['a BigInt', { total: 10n }, 'payload.total'],
      ['a Set', { skus: new Set(['A']) }, 'payload.skus'],
      ['a Map', { lines: new Map([['A', 1]]) }, 'payload.lines'],
      ['a typed array', { bytes: new Uint8Array([1]) }, 'payload.bytes'],
      ['NaN', { price: Number.NaN }, 'payload.price'],
      ['an unsafe integer', { id: 2 ** 60 }, 'payload.id'],
      ['a lone surrogate', { name: '\udfff' }, 'payload.name'],
    ])('a payload with %s: InvalidMessageError naming %s', async (_kind, payload, path) => {
      const write = writeWithOutbox(options, { actions: [orderPut], messages: [envelope({ payload })] });

      await expect(write).rejects.toBeInstanceOf(InvalidMessageError);
      await expect(write).rejects.toMatchObject({ path, code: 'INVALID_MESSAGE' });
      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    });

    it.each(['outbox.erase', 'outbox.skip', 'outbox.anything'])(
      'a message of %s, a topic of the outbox’s own namespace: InvalidMessageError naming the topic',
      async (topic) => {
        // Built by hand, as a producer bypassing createMessage would: the writer checks each envelope itself.
        const write = writeWithOutbox(options, { actions: [orderPut], messages: [envelope({ topic })] });

        await expect(write).rejects.toBeInstanceOf(InvalidMessageError);
        await expect(write).rejects.toMatchObject({ path: 'topic' });
        await expect(write).rejects.toThrow(/namespace is reserved/);
        expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
      },
    );

    it('a message larger on the wire than SQS accepts: MessageTooLargeError with both sizes', async () => {
      const message = envelope({ payload: { note: 'x'.repeat(300 * 1024) } });

      const write = writeWithOutbox(options, { actions: [orderPut], messages: [message] });

      await expect(write).rejects.toBeInstanceOf(MessageTooLargeError);
      await expect(write).rejects.toMatchObject({ maximumBytes: 262_144 });
      await expect(write).rejects.toThrow(/is \d+ bytes on the wire; SQS accepts at most 262144/);
      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    });

    it('counts the attributes against the limit too, and takes a larger queue limit when given one', async () => {
      const message = envelope({ payload: { note: 'x'.repeat(300 * 1024) } });

      await writeWithOutbox(
        { ...options, maxMessageBytes: 1024 * 1024 },
        { actions: [], messages: [message] },
      );

      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    });

    it.each([0, -1, 65, 1.5, Number.NaN])(
      'a due-shard count of %s: ConfigError naming DUE_SHARDS',
      async (dueShards) => {
        const write = writeWithOutbox(
          { ...options, dueShards },
          { actions: [orderPut], messages: [envelope()] },
        );

        await expect(write).rejects.toBeInstanceOf(ConfigError);
        await expect(write).rejects.toThrow(/DUE_SHARDS must be an integer from 1 to 64/);
        expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
      },
    );
  });
});
