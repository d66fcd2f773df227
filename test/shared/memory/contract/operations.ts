import {
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { testMessageId } from '../../../support/factories.ts';
import {
  type ContractBackend,
  type ContractSession,
  itUnlessMoto,
  rejectionOf,
  storedItem,
} from './contract-backend.ts';

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/**
 * Each DynamoDB operation and option the library uses, called directly: GetItem (ConsistentRead,
 * ProjectionExpression), PutItem, UpdateItem with conditions and ReturnValuesOnConditionCheckFailure, Query on
 * both outbox indexes (`<=` key conditions, Limit, pages), Scan, and TransactWriteItems (Put / Update /
 * ConditionCheck, cancellation reasons with ALL_OLD items).
 */
export function describeOperations(backend: ContractBackend): void {
  let session: ContractSession;

  beforeEach(async () => {
    session = await backend.open();
  });

  const put = (table: keyof ContractSession['tables'], item: Record<string, unknown>) =>
    session.client.send(new PutCommand({ TableName: session.tables[table], Item: item }));
  const order = (orderId: string) =>
    storedItem(session, { TableName: session.tables.orders, Key: { orderId } });

  describe('GetItem and PutItem', () => {
    const ORDER = {
      orderId: 'o-1',
      status: 'NEW',
      details: { note: 'x', code: 7 },
      entries: [{ sku: 'a' }, { sku: 'b' }],
    };
    const project = (orderId: string, projection: Record<string, unknown>) =>
      session.client.send(
        new GetCommand({
          TableName: session.tables.orders,
          Key: { orderId },
          ConsistentRead: true,
          ...projection,
        }),
      );

    it('reads an item consistently, projected to the named paths, and no Item for a missing key', async () => {
      await put('orders', ORDER);

      const { Item } = await project('o-1', {
        ProjectionExpression: '#status, #details.#note, entries[1].sku, #missing',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#details': 'details',
          '#note': 'note',
          '#missing': 'gone',
        },
      });
      const missing = await project('o-2', {});

      expect(Item).toEqual({ status: 'NEW', details: { note: 'x' }, entries: [{ sku: 'b' }] });
      expect(missing.Item).toBeUndefined();
    });

    itUnlessMoto(backend, 'moto reports a name placeholder before a list index as unused')(
      'projects a list element through name placeholders',
      async () => {
        await put('orders', ORDER);

        const { Item } = await project('o-1', {
          ProjectionExpression: '#entries[1].#sku',
          ExpressionAttributeNames: { '#entries': 'entries', '#sku': 'sku' },
        });

        expect(Item).toEqual({ entries: [{ sku: 'b' }] });
      },
    );

    it('replaces the whole item, returns the old one with ALL_OLD, and drops undefined attributes', async () => {
      await put('orders', { orderId: 'o-1', total: 1, note: 'old' });

      const { Attributes } = await session.client.send(
        new PutCommand({
          TableName: session.tables.orders,
          Item: { orderId: 'o-1', total: 2, note: undefined },
          ReturnValues: 'ALL_OLD',
        }),
      );

      expect(Attributes).toEqual({ orderId: 'o-1', total: 1, note: 'old' });
      const stored = await order('o-1');
      expect(stored).toEqual({ orderId: 'o-1', total: 2 });
      expect(Object.keys(stored ?? {}).sort()).toEqual(['orderId', 'total']);
    });
  });

  describe('UpdateItem', () => {
    const reserve = (quantity: number, extra: Record<string, unknown> = {}) =>
      new UpdateCommand({
        TableName: session.tables.inventory,
        Key: { sku: 'SKU-1' },
        UpdateExpression:
          'SET #available = #available - :quantity, #reserved = if_not_exists(#reserved, :zero) + :quantity',
        ConditionExpression: 'attribute_exists(#sku) AND #available >= :quantity',
        ExpressionAttributeNames: { '#sku': 'sku', '#available': 'available', '#reserved': 'reserved' },
        ExpressionAttributeValues: { ':quantity': quantity, ':zero': 0 },
        ...extra,
      });
    const stock = () => storedItem(session, { TableName: session.tables.inventory, Key: { sku: 'SKU-1' } });

    it('applies the update when the condition holds, and returns the new item with ALL_NEW', async () => {
      await put('inventory', { sku: 'SKU-1', available: 5 });

      const { Attributes } = await session.client.send(reserve(2, { ReturnValues: 'ALL_NEW' }));

      expect(Attributes).toEqual({ sku: 'SKU-1', available: 3, reserved: 2 });
      expect(await stock()).toEqual({ sku: 'SKU-1', available: 3, reserved: 2 });
    });

    it('fails a false condition with ConditionalCheckFailedException, with the marshalled old item only when asked', async () => {
      await put('inventory', { sku: 'SKU-1', available: 1 });

      const plain = await rejectionOf(session.client.send(reserve(2)));
      const withOld = await rejectionOf(
        session.client.send(reserve(2, { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
      );

      expect(plain).toMatchObject({
        name: 'ConditionalCheckFailedException',
        message: 'The conditional request failed',
      });
      expect(plain.Item).toBeUndefined();
      expect(withOld).toMatchObject({
        name: 'ConditionalCheckFailedException',
        Item: { sku: { S: 'SKU-1' }, available: { N: '1' } },
      });
      expect(await stock()).toEqual({ sku: 'SKU-1', available: 1 });
    });

    it('fails a condition on a missing item without an Item, even with ALL_OLD, and creates nothing', async () => {
      const error = await rejectionOf(
        session.client.send(reserve(1, { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
      );

      expect(error.name).toBe('ConditionalCheckFailedException');
      expect(error.Item).toBeUndefined();
      expect(await stock()).toBeUndefined();
    });

    it('creates the item from its key when no condition forbids it', async () => {
      await session.client.send(
        new UpdateCommand({
          TableName: session.tables.orders,
          Key: { orderId: 'o-1' },
          UpdateExpression: 'SET #total = :total',
          ExpressionAttributeNames: { '#total': 'total' },
          ExpressionAttributeValues: { ':total': 7 },
        }),
      );

      expect(await order('o-1')).toEqual({ orderId: 'o-1', total: 7 });
    });
  });

  describe('Query on the outbox indexes', () => {
    const at = (minute: number) => `2024-05-01T12:0${minute}:00.000Z`;

    beforeEach(async () => {
      // Written out of order; message 5 has finished (no due keys: not in the sparse index).
      for (const [id, minute] of [
        [3, 3],
        [1, 1],
        [4, 4],
        [2, 2],
      ] as const) {
        await put('outbox', {
          messageId: testMessageId(id),
          aggregateId: 'order-1',
          dueShard: '0',
          nextAttemptAt: at(minute),
        });
      }
      await put('outbox', { messageId: testMessageId(5), aggregateId: 'order-1', status: 'CONFIRMED' });
      await put('outbox', {
        messageId: testMessageId(6),
        aggregateId: 'order-2',
        dueShard: '1',
        nextAttemptAt: at(0),
      });
    });

    const due = (upTo: string, page: Partial<QueryCommandInput> = {}) =>
      session.client.send(
        new QueryCommand({
          TableName: session.tables.outbox,
          IndexName: 'due',
          KeyConditionExpression: '#shard = :shard AND #nextAttemptAt <= :now',
          ExpressionAttributeNames: { '#shard': 'dueShard', '#nextAttemptAt': 'nextAttemptAt' },
          ExpressionAttributeValues: { ':shard': '0', ':now': upTo },
          ...page,
        }),
      );
    const ids = (items: readonly Record<string, unknown>[] | undefined) =>
      (items ?? []).map((item) => item.messageId);

    it('reads a due-index partition in sort-key order up to a time, holding only items with both index keys', async () => {
      const { Items, Count } = await due(at(3));

      expect(ids(Items)).toEqual([1, 2, 3].map(testMessageId));
      expect(Count).toBe(3);
    });

    it('pages with Limit: the last key is the table key plus the index keys, and the last page has none', async () => {
      const first = await due(at(3), { Limit: 2 });
      const second = await due(at(3), { Limit: 2, ExclusiveStartKey: first.LastEvaluatedKey });

      expect(ids(first.Items)).toEqual([1, 2].map(testMessageId));
      expect(first.LastEvaluatedKey).toEqual({
        messageId: testMessageId(2),
        dueShard: '0',
        nextAttemptAt: at(2),
      });
      expect(ids(second.Items)).toEqual([testMessageId(3)]);
      expect(second.LastEvaluatedKey).toBeUndefined();
    });

    itUnlessMoto(backend, 'moto omits the key when a full page ends the partition')(
      'answers a LastEvaluatedKey for a page that stopped at its Limit, even with nothing left to read',
      async () => {
        const first = await due(at(4), { Limit: 4 });
        const next = await due(at(4), { Limit: 4, ExclusiveStartKey: first.LastEvaluatedKey });

        // DynamoDB stops at the Limit without looking further, so it cannot know that nothing is left.
        expect(first.LastEvaluatedKey).toEqual({
          messageId: testMessageId(4),
          dueShard: '0',
          nextAttemptAt: at(4),
        });
        expect(next).toMatchObject({ Items: [], Count: 0 });
        expect(next.LastEvaluatedKey).toBeUndefined();
      },
    );

    it("lists an aggregate's messages by id on the byAggregate index, finished ones included", async () => {
      const { Items } = await session.client.send(
        new QueryCommand({
          TableName: session.tables.outbox,
          IndexName: 'byAggregate',
          KeyConditionExpression: '#aggregateId = :aggregateId',
          ExpressionAttributeNames: { '#aggregateId': 'aggregateId' },
          ExpressionAttributeValues: { ':aggregateId': 'order-1' },
        }),
      );

      expect(ids(Items)).toEqual([1, 2, 3, 4, 5].map(testMessageId));
    });

    it('refuses a consistent read of a global secondary index', async () => {
      const error = await rejectionOf(due(at(4), { ConsistentRead: true }));

      expect(error).toMatchObject({
        name: 'ValidationException',
        message: 'Consistent reads are not supported on global secondary indexes',
      });
    });
  });

  describe('Scan', () => {
    it('reads every item exactly once across pages of Limit items', async () => {
      for (let id = 1; id <= 5; id += 1) await put('orders', { orderId: `o-${id}` });
      const seen: unknown[] = [];
      let start: Record<string, unknown> | undefined;
      let pages = 0;
      do {
        const page = await session.client.send(
          new ScanCommand({ TableName: session.tables.orders, Limit: 2, ExclusiveStartKey: start }),
        );
        seen.push(...(page.Items ?? []).map((item) => item.orderId));
        expect(page.ScannedCount).toBe(page.Items?.length);
        start = page.LastEvaluatedKey;
        pages += 1;
      } while (start !== undefined && pages < 10);

      expect(seen.sort()).toEqual(['o-1', 'o-2', 'o-3', 'o-4', 'o-5']);
      expect(pages).toBe(3);
    });
  });

  describe('TransactWriteItems', () => {
    beforeEach(async () => {
      await put('inventory', { sku: 'SKU-1', available: 5 });
      await put('orders', { orderId: 'o-1', total: 1 });
    });

    const newOrder = (orderId: string) => ({
      Put: {
        TableName: session.tables.orders,
        Item: { orderId, total: 3 },
        ConditionExpression: 'attribute_not_exists(#orderId)',
        ExpressionAttributeNames: { '#orderId': 'orderId' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    });
    const takeStock = (quantity: number) => ({
      Update: {
        TableName: session.tables.inventory,
        Key: { sku: 'SKU-1' },
        UpdateExpression: 'SET #available = #available - :quantity',
        ConditionExpression: '#available >= :quantity',
        ExpressionAttributeNames: { '#available': 'available' },
        ExpressionAttributeValues: { ':quantity': quantity },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    });
    const orderExists = (orderId: string) => ({
      ConditionCheck: {
        TableName: session.tables.orders,
        Key: { orderId },
        ConditionExpression: 'attribute_exists(#orderId)',
        ExpressionAttributeNames: { '#orderId': 'orderId' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    });
    const transact = (items: TransactItems) =>
      session.client.send(new TransactWriteCommand({ TransactItems: [...items] }));

    it('commits a Put, an Update and a ConditionCheck together when every condition holds', async () => {
      await transact([newOrder('o-2'), takeStock(2), orderExists('o-1')]);

      expect(await order('o-2')).toEqual({ orderId: 'o-2', total: 3 });
      expect(
        await storedItem(session, { TableName: session.tables.inventory, Key: { sku: 'SKU-1' } }),
      ).toEqual({
        sku: 'SKU-1',
        available: 3,
      });
      expect(await order('o-1')).toEqual({ orderId: 'o-1', total: 1 });
    });

    it('writes nothing when a condition fails, and gives every action its reason with the old item where asked', async () => {
      const error = await rejectionOf(
        transact([newOrder('o-2'), takeStock(9), orderExists('o-3'), newOrder('o-1')]),
      );

      expect(error.name).toBe('TransactionCanceledException');
      expect(error.message).toContain(
        'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, ConditionalCheckFailed, ConditionalCheckFailed]',
      );
      expect(error.CancellationReasons).toEqual([
        { Code: 'None' },
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: { sku: { S: 'SKU-1' }, available: { N: '5' } },
        },
        // No item to return: o-3 does not exist.
        { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: { orderId: { S: 'o-1' }, total: { N: '1' } },
        },
      ]);
      expect(await order('o-2')).toBeUndefined();
      expect(
        await storedItem(session, { TableName: session.tables.inventory, Key: { sku: 'SKU-1' } }),
      ).toEqual({
        sku: 'SKU-1',
        available: 5,
      });
    });

    it('refuses two actions on one item, and more than 100 actions, writing nothing', async () => {
      const twice = await rejectionOf(transact([newOrder('o-2'), orderExists('o-2')]));
      const tooMany = await rejectionOf(
        transact(
          Array.from({ length: 101 }, (_, index) => ({
            Put: { TableName: session.tables.orders, Item: { orderId: `n-${index}` } },
          })),
        ),
      );

      expect(twice).toMatchObject({
        name: 'ValidationException',
        message: 'Transaction request cannot include multiple operations on one item',
      });
      expect(tooMany.name).toBe('ValidationException');
      expect(tooMany.message).toMatch(/transactItems.*less than or equal to 100/);
      expect(await order('o-2')).toBeUndefined();
      expect(await order('n-0')).toBeUndefined();
    });

    itUnlessMoto(backend, 'moto accepts an empty TransactItems and does nothing')(
      'refuses a transaction without actions',
      async () => {
        const error = await rejectionOf(transact([]));

        expect(error.name).toBe('ValidationException');
        expect(error.message).toMatch(/transactItems.*greater than or equal to 1/);
      },
    );

    itUnlessMoto(backend, 'moto ignores ClientRequestToken')(
      'applies a ClientRequestToken once within 10 minutes, and refuses it with other actions',
      async () => {
        const withToken = (quantity: number) =>
          session.client.send(
            new TransactWriteCommand({
              ClientRequestToken: 'order-o-2',
              TransactItems: [takeStock(quantity)],
            }),
          );

        await withToken(1);
        await withToken(1);
        const mismatch = await rejectionOf(withToken(2));

        expect(mismatch.name).toBe('IdempotentParameterMismatchException');
        expect(
          await storedItem(session, { TableName: session.tables.inventory, Key: { sku: 'SKU-1' } }),
        ).toEqual({
          sku: 'SKU-1',
          available: 4,
        });
      },
    );
  });
}
