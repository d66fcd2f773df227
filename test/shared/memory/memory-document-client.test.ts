import {
  ConditionalCheckFailedException,
  IdempotentParameterMismatchException,
  ResourceInUseException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  NumberValue,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { type MemoryChange, MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { manualClock } from '../../support/factories.ts';

const TABLE = 'things';
const BY_DUE = 'byDue';
const BY_RANK = 'byRank';

let db: MemoryDocumentClient;

beforeEach(() => {
  db = new MemoryDocumentClient({
    [TABLE]: {
      partitionKey: 'id',
      globalIndexes: [
        { name: BY_DUE, partitionKey: 'shard', sortKey: 'dueAt' },
        { name: BY_RANK, partitionKey: 'group', sortKey: 'rank' },
      ],
    },
    other: { partitionKey: 'key' },
  });
});

async function put(item: Record<string, unknown>): Promise<void> {
  await db.send(new PutCommand({ TableName: TABLE, Item: item }));
}

async function get(id: string): Promise<Record<string, unknown> | undefined> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: { id } }));
  return result.Item as Record<string, unknown> | undefined;
}

/** The error a promise rejects with (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the command to fail');
}

async function conditionFailure(promise: Promise<unknown>): Promise<ConditionalCheckFailedException> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(ConditionalCheckFailedException);
  return error as ConditionalCheckFailedException;
}

async function cancellation(promise: Promise<unknown>): Promise<TransactionCanceledException> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(TransactionCanceledException);
  return error as TransactionCanceledException;
}

/** Ids in a GSI partition, in the order a Query returns them. */
async function queryIds(
  index: { name: string; partitionKey: string; sortKey?: string },
  partition: unknown,
  options: { upTo?: unknown; limit?: number } = {},
): Promise<unknown[]> {
  const { name: indexName, partitionKey } = index;
  const upTo = options.upTo !== undefined && index.sortKey !== undefined;
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      IndexName: indexName,
      KeyConditionExpression: upTo ? '#pk = :pk AND #sk <= :upTo' : '#pk = :pk',
      ExpressionAttributeNames: { '#pk': partitionKey, ...(upTo ? { '#sk': index.sortKey ?? '' } : {}) },
      ExpressionAttributeValues: { ':pk': partition, ...(upTo ? { ':upTo': options.upTo } : {}) },
      ...(options.limit === undefined ? {} : { Limit: options.limit }),
    }),
  );
  return ((result.Items ?? []) as Record<string, unknown>[]).map((item) => item.id);
}

const dueIds = (shard: string, options: { upTo?: string; limit?: number } = {}) =>
  queryIds({ name: BY_DUE, partitionKey: 'shard', sortKey: 'dueAt' }, shard, options);

describe('MemoryDocumentClient', () => {
  describe('Get and Put', () => {
    it('returns a stored item, and no Item for a missing key', async () => {
      await put({ id: 'a', n: 1 });

      expect(await get('a')).toEqual({ id: 'a', n: 1 });
      expect(await db.send(new GetCommand({ TableName: TABLE, Key: { id: 'zzz' } }))).toEqual({});
    });

    it('hands out copies, so changing a result or the written item does not change the table', async () => {
      const item = { id: 'a', nested: { n: 1 } };
      await put(item);
      item.nested.n = 2;
      const read = await get('a');
      (read?.nested as { n: number }).n = 3;

      expect(await get('a')).toEqual({ id: 'a', nested: { n: 1 } });
    });

    it('replaces the whole item on an unconditional Put', async () => {
      await put({ id: 'a', old: true });
      await put({ id: 'a', fresh: true });

      expect(await get('a')).toEqual({ id: 'a', fresh: true });
    });

    it('fails a conditional Put with ConditionalCheckFailedException and leaves the item as it was', async () => {
      await put({ id: 'a', n: 1 });

      const error = await conditionFailure(
        db.send(
          new PutCommand({
            TableName: TABLE,
            Item: { id: 'a', n: 2 },
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': 'id' },
          }),
        ),
      );

      expect(error.Item).toBeUndefined();
      expect(await get('a')).toEqual({ id: 'a', n: 1 });
    });

    it('carries the marshalled old item only when ReturnValuesOnConditionCheckFailure is ALL_OLD', async () => {
      await put({ id: 'a', n: 1, tags: ['x'] });

      const error = await conditionFailure(
        db.send(
          new PutCommand({
            TableName: TABLE,
            Item: { id: 'a', n: 2 },
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': 'id' },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );

      expect(error.Item).toEqual(marshall({ id: 'a', n: 1, tags: ['x'] }));
    });

    it('puts a new item when attribute_not_exists holds', async () => {
      await db.send(
        new PutCommand({
          TableName: TABLE,
          Item: { id: 'new' },
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': 'id' },
        }),
      );

      expect(await get('new')).toEqual({ id: 'new' });
    });

    it('refuses an unknown table and an item without its key', async () => {
      await expect(db.send(new GetCommand({ TableName: 'nope', Key: { id: 'a' } }))).rejects.toBeInstanceOf(
        ResourceNotFoundException,
      );
      await expect(db.send(new PutCommand({ TableName: TABLE, Item: { n: 1 } }))).rejects.toMatchObject({
        name: 'ValidationException',
      });
    });
  });

  describe('Update', () => {
    it('applies the update expression when the condition holds', async () => {
      await put({ id: 'a', status: 'PENDING', attempts: 1 });

      await db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { id: 'a' },
          UpdateExpression: 'SET #status = :to, #attempts = #attempts + :one',
          ConditionExpression: '#status = :from',
          ExpressionAttributeNames: { '#status': 'status', '#attempts': 'attempts' },
          ExpressionAttributeValues: { ':to': 'SENT', ':from': 'PENDING', ':one': 1 },
        }),
      );

      expect(await get('a')).toEqual({ id: 'a', status: 'SENT', attempts: 2 });
    });

    it('creates the item from its key when it does not exist and no condition forbids it', async () => {
      await db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { id: 'fresh' },
          UpdateExpression: 'SET #n = if_not_exists(#n, :zero) + :one',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
        }),
      );

      expect(await get('fresh')).toEqual({ id: 'fresh', n: 1 });
    });

    it('returns the new item with ReturnValues ALL_NEW', async () => {
      await put({ id: 'a', n: 1 });

      const result = await db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { id: 'a' },
          UpdateExpression: 'SET #n = :two',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':two': 2 },
          ReturnValues: 'ALL_NEW',
        }),
      );

      expect(result.Attributes).toEqual({ id: 'a', n: 2 });
    });

    it('fails on a false condition, changes nothing, and returns ALL_OLD only when asked', async () => {
      await put({ id: 'a', status: 'CONFIRMED' });
      const update = (returnOld: boolean) =>
        new UpdateCommand({
          TableName: TABLE,
          Key: { id: 'a' },
          UpdateExpression: 'SET #status = :to',
          ConditionExpression: '#status = :from',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':to': 'SENT', ':from': 'PENDING' },
          ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
        });

      expect((await conditionFailure(db.send(update(false)))).Item).toBeUndefined();
      expect((await conditionFailure(db.send(update(true)))).Item).toEqual(
        marshall({ id: 'a', status: 'CONFIRMED' }),
      );
      expect(await get('a')).toEqual({ id: 'a', status: 'CONFIRMED' });
    });

    it('fails a condition on a missing item without an Item, even with ALL_OLD, and creates nothing', async () => {
      const error = await conditionFailure(
        db.send(
          new UpdateCommand({
            TableName: TABLE,
            Key: { id: 'ghost' },
            UpdateExpression: 'SET #status = :to',
            ConditionExpression: 'attribute_exists(#id)',
            ExpressionAttributeNames: { '#status': 'status', '#id': 'id' },
            ExpressionAttributeValues: { ':to': 'SENT' },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );

      expect(error.Item).toBeUndefined();
      expect(await get('ghost')).toBeUndefined();
    });

    it('refuses an expression with a placeholder the request does not define, as DynamoDB does', async () => {
      await put({ id: 'a' });

      await expect(
        db.send(
          new UpdateCommand({
            TableName: TABLE,
            Key: { id: 'a' },
            UpdateExpression: 'SET #n = :undefined, #m = :m',
            ExpressionAttributeNames: { '#n': 'n', '#m': 'm' },
            ExpressionAttributeValues: { ':m': 1 },
          }),
        ),
      ).rejects.toMatchObject({
        name: 'ValidationException',
        message: expect.stringContaining('attribute value: :undefined'),
      });
    });
  });

  describe('Delete', () => {
    it('deletes when the condition holds and keeps the item (ALL_OLD on request) when it fails', async () => {
      await put({ id: 'a', status: 'PENDING' });
      const deleteIf = (status: string) =>
        new DeleteCommand({
          TableName: TABLE,
          Key: { id: 'a' },
          ConditionExpression: '#status = :s',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':s': status },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        });

      const error = await conditionFailure(db.send(deleteIf('SENT')));
      expect(error.Item).toEqual(marshall({ id: 'a', status: 'PENDING' }));
      expect(await get('a')).toBeDefined();

      await db.send(deleteIf('PENDING'));
      expect(await get('a')).toBeUndefined();
    });
  });

  describe('TransactWrite', () => {
    const putNew = (id: string) => ({
      Put: {
        TableName: TABLE,
        Item: { id, written: true },
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': 'id' },
      },
    });
    const decrement = (id: string, returnOld: boolean) => ({
      Update: {
        TableName: TABLE,
        Key: { id },
        UpdateExpression: 'SET #available = #available - :q',
        ConditionExpression: '#available >= :q',
        ExpressionAttributeNames: { '#available': 'available' },
        ExpressionAttributeValues: { ':q': 5 },
        ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
      },
    });

    it('commits every action when every condition holds', async () => {
      await put({ id: 'stock', available: 7 });

      await db.send(
        new TransactWriteCommand({ TransactItems: [putNew('order'), decrement('stock', false)] }),
      );

      expect(await get('order')).toEqual({ id: 'order', written: true });
      expect(await get('stock')).toEqual({ id: 'stock', available: 2 });
    });

    it('writes nothing when the condition of a later action fails (all or nothing)', async () => {
      await put({ id: 'stock', available: 3 });

      const error = await cancellation(
        db.send(new TransactWriteCommand({ TransactItems: [putNew('order'), decrement('stock', false)] })),
      );

      expect(error.CancellationReasons).toEqual([
        { Code: 'None' },
        { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
      ]);
      expect(await get('order')).toBeUndefined();
      expect(await get('stock')).toEqual({ id: 'stock', available: 3 });
    });

    it('reports one reason per action, with the marshalled old item where ALL_OLD was asked', async () => {
      await put({ id: 'order', written: true });
      await put({ id: 'stock', available: 3 });
      await put({ id: 'other-stock', available: 9 });

      const error = await cancellation(
        db.send(
          new TransactWriteCommand({
            TransactItems: [putNew('order'), decrement('other-stock', true), decrement('stock', true)],
          }),
        ),
      );

      expect(error.CancellationReasons).toEqual([
        { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
        { Code: 'None' },
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: marshall({ id: 'stock', available: 3 }),
        },
      ]);
      expect(await get('other-stock')).toEqual({ id: 'other-stock', available: 9 });
    });

    it('checks a ConditionCheck action without writing it', async () => {
      await put({ id: 'customer', active: false });
      const check = {
        ConditionCheck: {
          TableName: TABLE,
          Key: { id: 'customer' },
          ConditionExpression: '#active = :yes',
          ExpressionAttributeNames: { '#active': 'active' },
          ExpressionAttributeValues: { ':yes': true },
        },
      };
      const error = await cancellation(
        db.send(new TransactWriteCommand({ TransactItems: [check, putNew('order')] })),
      );
      expect(error.CancellationReasons?.map((reason) => reason.Code)).toEqual([
        'ConditionalCheckFailed',
        'None',
      ]);
      expect(await get('order')).toBeUndefined();

      await put({ id: 'customer', active: true });
      await db.send(new TransactWriteCommand({ TransactItems: [check, putNew('order')] }));
      expect(await get('order')).toBeDefined();
      expect(await get('customer')).toEqual({ id: 'customer', active: true });
    });

    it('refuses two actions on one item with a ValidationException and writes nothing', async () => {
      await put({ id: 'stock', available: 10 });

      await expect(
        db.send(
          new TransactWriteCommand({
            TransactItems: [putNew('order'), decrement('stock', false), decrement('stock', false)],
          }),
        ),
      ).rejects.toMatchObject({ name: 'ValidationException' });

      expect(await get('order')).toBeUndefined();
      expect(await get('stock')).toEqual({ id: 'stock', available: 10 });
    });

    it('treats the same key in two different tables as two items', async () => {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { id: 'k' } } },
            { Put: { TableName: 'other', Item: { key: 'k' } } },
          ],
        }),
      );

      expect(db.items('other')).toEqual([{ key: 'k' }]);
    });
  });

  describe('Query on a global secondary index', () => {
    it('holds only items that have both index keys (sparse)', async () => {
      await put({ id: 'both', shard: '0', dueAt: '2024-05-01T12:00:00.000Z' });
      await put({ id: 'no-sort-key', shard: '0' });
      await put({ id: 'no-partition-key', dueAt: '2024-05-01T12:00:00.000Z' });

      expect(await dueIds('0')).toEqual(['both']);
    });

    it('drops an item whose index key is REMOVEd, and adds it back when the key returns', async () => {
      await put({ id: 'a', shard: '0', dueAt: '2024-05-01T12:00:00.000Z' });
      const update = (expression: string, values?: Record<string, unknown>) =>
        db.send(
          new UpdateCommand({
            TableName: TABLE,
            Key: { id: 'a' },
            UpdateExpression: expression,
            ExpressionAttributeNames: { '#dueAt': 'dueAt' },
            ...(values ? { ExpressionAttributeValues: values } : {}),
          }),
        );

      await update('REMOVE #dueAt');
      expect(await dueIds('0')).toEqual([]);

      await update('SET #dueAt = :at', { ':at': '2024-05-01T13:00:00.000Z' });
      expect(await dueIds('0')).toEqual(['a']);
    });

    it('moves an item between partitions when its partition key changes, and forgets a deleted one', async () => {
      await put({ id: 'a', shard: '0', dueAt: '2024-05-01T12:00:00.000Z' });
      await put({ id: 'a', shard: '1', dueAt: '2024-05-01T12:00:00.000Z' });
      await put({ id: 'b', shard: '1', dueAt: '2024-05-01T12:00:00.000Z' });

      expect(await dueIds('0')).toEqual([]);
      expect((await dueIds('1')).sort()).toEqual(['a', 'b']);

      await db.send(new DeleteCommand({ TableName: TABLE, Key: { id: 'b' } }));
      expect(await dueIds('1')).toEqual(['a']);
    });

    it('returns items sorted by the sort key, whatever the write order', async () => {
      await put({ id: 'third', shard: '0', dueAt: '2024-05-01T12:00:02.000Z' });
      await put({ id: 'first', shard: '0', dueAt: '2024-05-01T11:59:59.999Z' });
      await put({ id: 'second', shard: '0', dueAt: '2024-05-01T12:00:00.000Z' });

      expect(await dueIds('0')).toEqual(['first', 'second', 'third']);
    });

    it('sorts a numeric sort key by number and a string sort key by character code, as DynamoDB does', async () => {
      for (const [id, rank] of [
        ['nine', 9],
        ['hundred', 100],
        ['ten', 10],
        ['minus-one', -1],
      ] as const) {
        await put({ id, group: 'numbers', rank });
      }
      for (const [id, rank] of [
        ['lower-a', 'a'],
        ['upper-b', 'B'],
        ['upper-a', 'A'],
      ] as const) {
        await put({ id, group: 'letters', rank });
      }

      expect(await queryIds({ name: BY_RANK, partitionKey: 'group' }, 'numbers')).toEqual([
        'minus-one',
        'nine',
        'ten',
        'hundred',
      ]);
      expect(await queryIds({ name: BY_RANK, partitionKey: 'group' }, 'letters')).toEqual([
        'upper-a',
        'upper-b',
        'lower-a',
      ]);
    });

    it('honours the key condition on the sort key and the Limit', async () => {
      for (let minute = 0; minute < 5; minute += 1) {
        await put({ id: `m${minute}`, shard: '0', dueAt: `2024-05-01T12:0${minute}:00.000Z` });
      }
      await put({ id: 'elsewhere', shard: '1', dueAt: '2024-05-01T12:00:00.000Z' });

      expect(await dueIds('0', { upTo: '2024-05-01T12:02:00.000Z' })).toEqual(['m0', 'm1', 'm2']);
      expect(await dueIds('0', { upTo: '2024-05-01T12:02:00.000Z', limit: 2 })).toEqual(['m0', 'm1']);
      expect(await dueIds('0', { limit: 4 })).toEqual(['m0', 'm1', 'm2', 'm3']);
      expect(await dueIds('2')).toEqual([]);
    });

    it('refuses an index the table does not have', async () => {
      await expect(
        db.send(
          new QueryCommand({
            TableName: TABLE,
            IndexName: 'nope',
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': 'shard' },
            ExpressionAttributeValues: { ':pk': '0' },
          }),
        ),
      ).rejects.toMatchObject({ name: 'ValidationException' });
    });
  });

  describe('Query on the table and Scan', () => {
    it('finds an item by its partition key', async () => {
      await put({ id: 'a' });
      await put({ id: 'b' });

      const result = await db.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: '#id = :id',
          ExpressionAttributeNames: { '#id': 'id' },
          ExpressionAttributeValues: { ':id': 'b' },
        }),
      );
      expect(result.Items).toEqual([{ id: 'b' }]);
    });

    it('scans every item, or only counts them with Select COUNT', async () => {
      await put({ id: 'a' });
      await put({ id: 'b' });

      expect((await db.send(new ScanCommand({ TableName: TABLE }))).Count).toBe(2);
      expect(await db.send(new ScanCommand({ TableName: TABLE, Select: 'COUNT' }))).toEqual({
        Count: 2,
        ScannedCount: 2,
      });
    });
  });

  it('refuses a command it does not implement instead of pretending it worked', async () => {
    await expect(
      db.send(new BatchWriteCommand({ RequestItems: { [TABLE]: [{ PutRequest: { Item: { id: 'a' } } }] } })),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    expect(db.items(TABLE)).toEqual([]);
  });

  describe('onChange', () => {
    it('reports INSERT, MODIFY and REMOVE with the old and new images of committed writes only', async () => {
      const changes: MemoryChange[] = [];
      db.onChange((change) => changes.push(change));

      await put({ id: 'a', n: 1 });
      await db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { id: 'a' },
          UpdateExpression: 'SET #n = :two',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':two': 2 },
        }),
      );
      await conditionFailure(
        db.send(
          new PutCommand({
            TableName: TABLE,
            Item: { id: 'a', n: 3 },
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': 'id' },
          }),
        ),
      );
      await db.send(new DeleteCommand({ TableName: TABLE, Key: { id: 'a' } }));
      await db.send(new DeleteCommand({ TableName: TABLE, Key: { id: 'never-existed' } }));

      expect(changes).toEqual([
        {
          tableName: TABLE,
          eventName: 'INSERT',
          oldImage: undefined,
          newImage: { id: 'a', n: 1 },
          operation: 'PutItem',
        },
        {
          tableName: TABLE,
          eventName: 'MODIFY',
          oldImage: { id: 'a', n: 1 },
          newImage: { id: 'a', n: 2 },
          operation: 'UpdateItem',
        },
        {
          tableName: TABLE,
          eventName: 'REMOVE',
          oldImage: { id: 'a', n: 2 },
          newImage: undefined,
          operation: 'DeleteItem',
        },
      ]);
    });

    it('reports each item of a committed transaction and nothing of a cancelled one', async () => {
      const changes: MemoryChange[] = [];
      db.onChange((change) => changes.push(change));
      const putIfNew = (table: string, item: Record<string, unknown>, key: string) => ({
        Put: {
          TableName: table,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#k)',
          ExpressionAttributeNames: { '#k': key },
        },
      });

      await db.send(
        new TransactWriteCommand({
          TransactItems: [putIfNew(TABLE, { id: 'a' }, 'id'), putIfNew('other', { key: 'b' }, 'key')],
        }),
      );
      await cancellation(
        db.send(
          new TransactWriteCommand({
            TransactItems: [putIfNew(TABLE, { id: 'c' }, 'id'), putIfNew('other', { key: 'b' }, 'key')],
          }),
        ),
      );

      expect(changes.map((change) => change.operation)).toEqual(['TransactWriteItems', 'TransactWriteItems']);
      expect(changes.map((change) => [change.tableName, change.eventName, change.newImage])).toEqual([
        [TABLE, 'INSERT', { id: 'a' }],
        ['other', 'INSERT', { key: 'b' }],
      ]);
    });
  });
});

describe("MemoryDocumentClient with composite keys, paging and DynamoDB's checks", () => {
  const EVENTS = 'events';
  let events: MemoryDocumentClient;
  const clock = manualClock();

  beforeEach(() => {
    events = new MemoryDocumentClient(
      {
        [EVENTS]: {
          partitionKey: 'stream',
          sortKey: 'seq',
          attributeTypes: { stream: 'S', seq: 'N', kind: 'S' },
          globalIndexes: [
            { name: 'byKind', partitionKey: 'kind', projection: { type: 'KEYS_ONLY' } },
            {
              name: 'byKindWithSize',
              partitionKey: 'kind',
              sortKey: 'seq',
              projection: { type: 'INCLUDE', nonKeyAttributes: ['size'] },
            },
          ],
        },
      },
      { clock: clock.now },
    );
  });

  async function add(stream: string, seq: number, extra: Record<string, unknown> = {}): Promise<void> {
    await events.send(new PutCommand({ TableName: EVENTS, Item: { stream, seq, ...extra } }));
  }

  async function query(input: Partial<QueryCommand['input']> = {}): Promise<Record<string, unknown>> {
    return events.send(
      new QueryCommand({
        TableName: EVENTS,
        KeyConditionExpression: '#s = :s',
        ExpressionAttributeNames: { '#s': 'stream' },
        ExpressionAttributeValues: { ':s': 'a' },
        ...input,
      }),
    );
  }

  const seqs = (page: Record<string, unknown>) =>
    ((page.Items ?? []) as { seq: number }[]).map((item) => item.seq);

  it('keeps one item per partition and sort key, and reads a partition in sort-key order both ways', async () => {
    for (const seq of [3, 1, 2]) await add('a', seq);
    await add('a', 2, { replaced: true });
    await add('b', 1);

    expect(seqs(await query())).toEqual([1, 2, 3]);
    expect(seqs(await query({ ScanIndexForward: false }))).toEqual([3, 2, 1]);
    expect(events.items(EVENTS)).toHaveLength(4);
    expect(
      (await events.send(new GetCommand({ TableName: EVENTS, Key: { stream: 'a', seq: 2 } }))).Item,
    ).toEqual({ stream: 'a', seq: 2, replaced: true });
  });

  it('filters an index query on the index entries: an attribute the index does not project matches nothing', async () => {
    await add('a', 1, { kind: 'x', size: 3, colour: 'red' });
    const byIndex = (index: string, attribute: string, value: unknown) =>
      events.send(
        new QueryCommand({
          TableName: EVENTS,
          IndexName: index,
          KeyConditionExpression: '#k = :k',
          FilterExpression: '#a = :v',
          ExpressionAttributeNames: { '#k': 'kind', '#a': attribute },
          ExpressionAttributeValues: { ':k': 'x', ':v': value },
        }),
      );

    expect((await byIndex('byKindWithSize', 'size', 3)).Items).toHaveLength(1);
    expect((await byIndex('byKindWithSize', 'colour', 'red')).Items).toEqual([]);
    expect((await byIndex('byKind', 'size', 3)).Items).toEqual([]);
  });

  it('pages a query with Limit and ExclusiveStartKey, in either direction', async () => {
    for (const seq of [1, 2, 3, 4, 5]) await add('a', seq);

    const first = await query({ Limit: 2 });
    const second = await query({
      Limit: 2,
      ExclusiveStartKey: first.LastEvaluatedKey as Record<string, unknown>,
    });
    const back = await query({
      Limit: 2,
      ScanIndexForward: false,
      ExclusiveStartKey: { stream: 'a', seq: 4 },
    });
    const exact = await query({ Limit: 5 });
    const beyond = await query({
      Limit: 5,
      ExclusiveStartKey: exact.LastEvaluatedKey as Record<string, unknown>,
    });
    const all = await query({ Limit: 6 });

    expect([seqs(first), first.LastEvaluatedKey]).toEqual([[1, 2], { stream: 'a', seq: 2 }]);
    expect(seqs(second)).toEqual([3, 4]);
    expect(seqs(back)).toEqual([3, 2]);
    // DynamoDB answers a LastEvaluatedKey whenever a page stopped at Limit, so paging can end on an empty page.
    expect(exact.LastEvaluatedKey).toEqual({ stream: 'a', seq: 5 });
    expect([beyond.Items, beyond.LastEvaluatedKey]).toEqual([[], undefined]);
    expect(all.LastEvaluatedKey).toBeUndefined();
  });

  it('filters after Limit, projects paths, and counts with Select COUNT', async () => {
    for (const seq of [1, 2, 3, 4])
      await add('a', seq, { size: seq * 10, detail: { colour: 'red', tags: ['x', 'y'] } });

    const filtered = await query({
      FilterExpression: '#size >= :min',
      ProjectionExpression: 'seq, detail.colour, detail.tags[1]',
      ExpressionAttributeNames: { '#s': 'stream', '#size': 'size' },
      ExpressionAttributeValues: { ':s': 'a', ':min': 20 },
      Limit: 3,
    });
    const counted = await query({ Select: 'COUNT' });

    expect(filtered.Items).toEqual([
      { seq: 2, detail: { colour: 'red', tags: ['y'] } },
      { seq: 3, detail: { colour: 'red', tags: ['y'] } },
    ]);
    expect([filtered.Count, filtered.ScannedCount]).toEqual([2, 3]);
    expect(counted).toEqual({ Count: 4, ScannedCount: 4 });
  });

  it('answers only the projected attributes of an index, and refuses ALL_ATTRIBUTES on one that does not hold them', async () => {
    await add('a', 1, { kind: 'click', size: 5, other: 'x' });
    const byKind = (IndexName: string, extra: Partial<QueryCommand['input']> = {}) =>
      events.send(
        new QueryCommand({
          TableName: EVENTS,
          IndexName,
          KeyConditionExpression: 'kind = :k',
          ExpressionAttributeValues: { ':k': 'click' },
          ...extra,
        }),
      );

    expect((await byKind('byKind')).Items).toEqual([{ stream: 'a', seq: 1, kind: 'click' }]);
    expect((await byKind('byKindWithSize')).Items).toEqual([{ stream: 'a', seq: 1, kind: 'click', size: 5 }]);
    await expect(byKind('byKind', { Select: 'ALL_ATTRIBUTES' })).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('scans in pages of Limit items and in segments, each item once', async () => {
    for (let seq = 0; seq < 12; seq += 1) await add(seq % 2 === 0 ? 'a' : 'b', seq);

    const seen: number[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await events.send(
        new ScanCommand({ TableName: EVENTS, Limit: 5, ExclusiveStartKey: start }),
      );
      seen.push(...seqs(page));
      start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
    } while (start !== undefined);
    const segments = await Promise.all(
      [0, 1, 2, 3].map((Segment) =>
        events.send(new ScanCommand({ TableName: EVENTS, Segment, TotalSegments: 4 })),
      ),
    );

    expect(seen.sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    expect(segments.flatMap(seqs).sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
  });

  it('stops a page after 1 MB of items read, with the key to continue from', async () => {
    const big = 'x'.repeat(300 * 1024);
    for (const seq of [1, 2, 3, 4, 5]) await add('a', seq, { big });

    const page = await query();

    expect(seqs(page)).toEqual([1, 2, 3, 4]);
    expect(page.LastEvaluatedKey).toEqual({ stream: 'a', seq: 4 });
  });

  it('returns the old item of a Put and a Delete with ReturnValues ALL_OLD, and updated attributes of an Update', async () => {
    await add('a', 1, { n: 1, keep: true });

    const updated = await events.send(
      new UpdateCommand({
        TableName: EVENTS,
        Key: { stream: 'a', seq: 1 },
        UpdateExpression: 'SET n = n + :one REMOVE keep',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    const replaced = await events.send(
      new PutCommand({ TableName: EVENTS, Item: { stream: 'a', seq: 1 }, ReturnValues: 'ALL_OLD' }),
    );
    const deleted = await events.send(
      new DeleteCommand({ TableName: EVENTS, Key: { stream: 'a', seq: 1 }, ReturnValues: 'ALL_OLD' }),
    );

    expect(updated.Attributes).toEqual({ n: 1, keep: true });
    expect(replaced.Attributes).toEqual({ stream: 'a', seq: 1, n: 2 });
    expect(deleted.Attributes).toEqual({ stream: 'a', seq: 1 });
  });

  it('keeps numbers exact: a NumberValue stays one, and sums do not round', async () => {
    const huge = new NumberValue('123456789012345678901234567890');
    await add('a', 1, { huge, amount: 0.1 });

    await events.send(
      new UpdateCommand({
        TableName: EVENTS,
        Key: { stream: 'a', seq: 1 },
        UpdateExpression: 'SET amount = amount + :more, huge = huge + :one',
        ExpressionAttributeValues: { ':more': 0.2, ':one': 1 },
      }),
    );
    const Item = (await events.send(new GetCommand({ TableName: EVENTS, Key: { stream: 'a', seq: 1 } })))
      .Item as Record<string, unknown> | undefined;

    expect(Item?.amount).toBe(0.3);
    expect(Item?.huge).toEqual(new NumberValue('123456789012345678901234567891'));
    expect(Item?.huge).toBeInstanceOf(NumberValue);
  });

  it('refuses what DynamoDB refuses: wrong key types, a partial key, key updates, unused placeholders, big items', async () => {
    const refusals = [
      () => events.send(new PutCommand({ TableName: EVENTS, Item: { stream: 'a', seq: '1' } })),
      () => events.send(new PutCommand({ TableName: EVENTS, Item: { stream: 'a', seq: 1, kind: 7 } })),
      () => events.send(new PutCommand({ TableName: EVENTS, Item: { stream: '', seq: 1 } })),
      () => events.send(new GetCommand({ TableName: EVENTS, Key: { stream: 'a' } })),
      () => events.send(new GetCommand({ TableName: EVENTS, Key: { stream: 'a', seq: 1, extra: 1 } })),
      () =>
        events.send(
          new UpdateCommand({
            TableName: EVENTS,
            Key: { stream: 'a', seq: 1 },
            UpdateExpression: 'SET seq = :two',
            ExpressionAttributeValues: { ':two': 2 },
          }),
        ),
      () =>
        events.send(
          new PutCommand({
            TableName: EVENTS,
            Item: { stream: 'a', seq: 1 },
            ConditionExpression: 'attribute_not_exists(#s)',
            ExpressionAttributeNames: { '#s': 'stream', '#unused': 'x' },
          }),
        ),
      () =>
        events.send(
          new PutCommand({
            TableName: EVENTS,
            Item: { stream: 'a', seq: 1 },
            ExpressionAttributeValues: { ':v': 1 },
          }),
        ),
      () =>
        events.send(
          new PutCommand({ TableName: EVENTS, Item: { stream: 'a', seq: 1, big: 'x'.repeat(401 * 1024) } }),
        ),
      () => query({ KeyConditionExpression: 'seq = :s', ExpressionAttributeNames: undefined }),
      () => query({ Limit: 0 }),
    ];

    for (const [index, refusal] of refusals.entries()) {
      await expect(refusal(), `refusal ${index}`).rejects.toMatchObject({ name: 'ValidationException' });
    }
    expect(events.items(EVENTS)).toEqual([]);
  });

  it('applies a transaction token once within 10 minutes, refuses it with other actions, and forgets it after', async () => {
    await add('a', 1, { n: 0 });
    const increment = (by: number) =>
      events.send(
        new TransactWriteCommand({
          ClientRequestToken: 'once',
          TransactItems: [
            {
              Update: {
                TableName: EVENTS,
                Key: { stream: 'a', seq: 1 },
                UpdateExpression: 'SET n = n + :by',
                ExpressionAttributeValues: { ':by': by },
              },
            },
          ],
        }),
      );
    const n = async () =>
      (
        (await events.send(new GetCommand({ TableName: EVENTS, Key: { stream: 'a', seq: 1 } }))).Item as
          | Record<string, unknown>
          | undefined
      )?.n;

    await increment(1);
    await increment(1);
    const mismatch = increment(2);
    await expect(mismatch).rejects.toBeInstanceOf(IdempotentParameterMismatchException);
    expect(await n()).toBe(1);
    clock.advance(10 * 60_000);
    await increment(2);
    expect(await n()).toBe(3);
  });

  it('refuses a transaction of more than 100 actions', async () => {
    const puts = Array.from({ length: 101 }, (_, seq) => ({
      Put: { TableName: EVENTS, Item: { stream: 'a', seq } },
    }));

    await expect(events.send(new TransactWriteCommand({ TransactItems: puts }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('creates, changes and deletes tables: a new index is filled from the items already there', async () => {
    await add('a', 1, { colour: 'red' });

    expect(() => events.createTable(EVENTS, { partitionKey: 'x' })).toThrow(ResourceInUseException);
    events.updateTable(EVENTS, {
      partitionKey: 'stream',
      sortKey: 'seq',
      globalIndexes: [{ name: 'byColour', partitionKey: 'colour' }],
    });
    const { Items } = await events.send(
      new QueryCommand({
        TableName: EVENTS,
        IndexName: 'byColour',
        KeyConditionExpression: 'colour = :red',
        ExpressionAttributeValues: { ':red': 'red' },
      }),
    );
    expect(Items).toEqual([{ stream: 'a', seq: 1, colour: 'red' }]);
    expect(() => events.updateTable(EVENTS, { partitionKey: 'other' })).toThrow(/key schema/);
    expect([events.tableNames(), events.itemCount(EVENTS), events.tableSchema('nope')]).toEqual([
      [EVENTS],
      1,
      undefined,
    ]);

    events.deleteTable(EVENTS);
    await expect(query()).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
