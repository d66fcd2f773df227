import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  GetItemCommand,
  IdempotentParameterMismatchException,
  ListTablesCommand,
  QueryCommand as LowLevelQueryCommand,
  PutItemCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  TransactGetItemsCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  NumberValue,
  PutCommand,
  paginateQuery,
  paginateScan,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EmbeddedClients, embeddedClients, rejectionOf } from './embedded-clients.ts';

let aws: EmbeddedClients;
let table: string;
let tableCount = 0;

beforeAll(async () => {
  aws = await embeddedClients();
});

afterAll(async () => {
  await aws?.close();
});

/** A table keyed by `pk` + numeric `sk`, with a sparse `due` index and a keys-only `byOwner` index. */
function tableInput(name: string): CreateTableCommandInput {
  return {
    TableName: name,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'N' },
      { AttributeName: 'shard', AttributeType: 'S' },
      { AttributeName: 'dueAt', AttributeType: 'S' },
      { AttributeName: 'owner', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: 'due',
        KeySchema: [
          { AttributeName: 'shard', KeyType: 'HASH' },
          { AttributeName: 'dueAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: 'byOwner',
        KeySchema: [{ AttributeName: 'owner', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
    BillingMode: 'PAY_PER_REQUEST',
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}

beforeEach(async () => {
  tableCount += 1;
  table = `things-${tableCount}`;
  await aws.dynamodb.send(new CreateTableCommand(tableInput(table)));
});

async function put(item: Record<string, unknown>): Promise<void> {
  await aws.documents.send(new PutCommand({ TableName: table, Item: item }));
}

async function get(pk: string, sk: number): Promise<Record<string, unknown> | undefined> {
  return (await aws.documents.send(new GetCommand({ TableName: table, Key: { pk, sk } }))).Item;
}

describe('DynamoDB on the embedded backend', () => {
  describe('tables', () => {
    it('describes a created table with its keys, indexes and stream, and lists it', async () => {
      const { Table } = await aws.dynamodb.send(new DescribeTableCommand({ TableName: table }));

      expect(Table).toMatchObject({
        TableName: table,
        TableStatus: 'ACTIVE',
        TableArn: `arn:aws:dynamodb:us-east-1:123456789012:table/${table}`,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        ItemCount: 0,
      });
      expect(Table?.GlobalSecondaryIndexes?.map((index) => [index.IndexName, index.IndexStatus])).toEqual([
        ['due', 'ACTIVE'],
        ['byOwner', 'ACTIVE'],
      ]);
      expect(Table?.LatestStreamArn).toMatch(new RegExp(`:table/${table}/stream/\\d{4}-\\d\\d-\\d\\dT`));
      expect(Table?.CreationDateTime).toBeInstanceOf(Date);
      expect((await aws.dynamodb.send(new ListTablesCommand({}))).TableNames).toContain(table);
    });

    it('refuses a table that exists, an unknown table and a key schema the definitions do not match', async () => {
      expect(await rejectionOf(aws.dynamodb.send(new CreateTableCommand(tableInput(table))))).toBeInstanceOf(
        ResourceInUseException,
      );
      expect(
        await rejectionOf(aws.dynamodb.send(new DescribeTableCommand({ TableName: 'no-such-table' }))),
      ).toBeInstanceOf(ResourceNotFoundException);
      expect(
        await rejectionOf(
          aws.documents.send(new GetCommand({ TableName: 'no-such-table', Key: { pk: 'a' } })),
        ),
      ).toBeInstanceOf(ResourceNotFoundException);
      const unused = await rejectionOf(
        aws.dynamodb.send(
          new CreateTableCommand({
            TableName: 'unused-definition',
            AttributeDefinitions: [
              { AttributeName: 'id', AttributeType: 'S' },
              { AttributeName: 'extra', AttributeType: 'S' },
            ],
            KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          }),
        ),
      );
      expect(unused.name).toBe('ValidationException');
    });

    it('adds an index backfilled from the items, sets time to live, and deletes the table', async () => {
      await put({ pk: 'a', sk: 1, colour: 'red' });
      await aws.dynamodb.send(
        new UpdateTableCommand({
          TableName: table,
          AttributeDefinitions: [{ AttributeName: 'colour', AttributeType: 'S' }],
          GlobalSecondaryIndexUpdates: [
            {
              Create: {
                IndexName: 'byColour',
                KeySchema: [{ AttributeName: 'colour', KeyType: 'HASH' }],
                Projection: { ProjectionType: 'ALL' },
              },
            },
          ],
        }),
      );
      const { Items } = await aws.documents.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'byColour',
          KeyConditionExpression: 'colour = :red',
          ExpressionAttributeValues: { ':red': 'red' },
        }),
      );
      expect(Items).toEqual([{ pk: 'a', sk: 1, colour: 'red' }]);

      await aws.dynamodb.send(
        new UpdateTimeToLiveCommand({
          TableName: table,
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        }),
      );
      const { TimeToLiveDescription } = await aws.dynamodb.send(
        new DescribeTimeToLiveCommand({ TableName: table }),
      );
      expect(TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });

      await aws.dynamodb.send(new DeleteTableCommand({ TableName: table }));
      expect(
        await rejectionOf(aws.dynamodb.send(new DescribeTableCommand({ TableName: table }))),
      ).toBeInstanceOf(ResourceNotFoundException);
    });
  });

  describe('items', () => {
    it('round-trips every attribute type, numbers exactly', async () => {
      const item = {
        pk: 'a',
        sk: 1,
        text: 'héllo',
        decimal: 0.1,
        negative: -42,
        huge: new NumberValue('123456789012345678901234567890.5'),
        flag: true,
        nothing: null,
        bytes: new Uint8Array([0, 1, 255]),
        strings: new Set(['x', 'y']),
        numbers: new Set([1, 2.5]),
        list: [1, 'two', { three: [3] }],
        map: { nested: { deep: 'yes' } },
      };
      await aws.documents.send(new PutCommand({ TableName: table, Item: item }));

      const { Item } = await aws.dynamodb.send(
        new GetItemCommand({ TableName: table, Key: { pk: { S: 'a' }, sk: { N: '1' } } }),
      );

      expect(Item).toEqual(marshall(item));
      expect(Item?.huge).toEqual({ N: '123456789012345678901234567890.5' });
    });

    it('adds decimals exactly, as DynamoDB does (0.1 + 0.2 = 0.3)', async () => {
      await put({ pk: 'a', sk: 1, total: 0.1 });

      const { Attributes } = await aws.dynamodb.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: 'a' }, sk: { N: '1' } },
          // TOTAL is a reserved word: DynamoDB wants it behind a name placeholder.
          UpdateExpression: 'SET #total = #total + :more',
          ExpressionAttributeNames: { '#total': 'total' },
          ExpressionAttributeValues: { ':more': { N: '0.2' } },
          ReturnValues: 'UPDATED_NEW',
        }),
      );

      expect(Attributes).toEqual({ total: { N: '0.3' } });
    });

    it('returns the old or new attributes that ReturnValues asks for', async () => {
      await put({ pk: 'a', sk: 1, n: 1, keep: 'k' });
      const update = (returnValues: 'ALL_OLD' | 'ALL_NEW' | 'UPDATED_OLD' | 'UPDATED_NEW') =>
        aws.documents.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: 'a', sk: 1 },
            UpdateExpression: 'SET n = n + :one',
            ExpressionAttributeValues: { ':one': 1 },
            ReturnValues: returnValues,
          }),
        );

      expect((await update('UPDATED_OLD')).Attributes).toEqual({ n: 1 });
      expect((await update('UPDATED_NEW')).Attributes).toEqual({ n: 3 });
      expect((await update('ALL_OLD')).Attributes).toEqual({ pk: 'a', sk: 1, n: 3, keep: 'k' });
      expect((await update('ALL_NEW')).Attributes).toEqual({ pk: 'a', sk: 1, n: 5, keep: 'k' });
      const replaced = await aws.documents.send(
        new PutCommand({ TableName: table, Item: { pk: 'a', sk: 1 }, ReturnValues: 'ALL_OLD' }),
      );
      expect(replaced.Attributes).toEqual({ pk: 'a', sk: 1, n: 5, keep: 'k' });
      const deleted = await aws.documents.send(
        new DeleteCommand({ TableName: table, Key: { pk: 'a', sk: 1 }, ReturnValues: 'ALL_OLD' }),
      );
      expect(deleted.Attributes).toEqual({ pk: 'a', sk: 1 });
      expect(await get('a', 1)).toBeUndefined();
    });

    it('fails a false condition with ConditionalCheckFailedException, carrying the old item only when asked', async () => {
      const old = { pk: 'a', sk: 1, status: 'SENT', bytes: new Uint8Array([7]) };
      await put(old);
      const putIfNew = (returnOld: boolean) =>
        aws.documents.send(
          new PutCommand({
            TableName: table,
            Item: { pk: 'a', sk: 1, status: 'NEW' },
            ConditionExpression: 'attribute_not_exists(pk)',
            ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
          }),
        );

      const plain = await rejectionOf(putIfNew(false));
      const withOld = await rejectionOf(putIfNew(true));
      const update = await rejectionOf(
        aws.dynamodb.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: { S: 'a' }, sk: { N: '1' } },
            UpdateExpression: 'SET #status = :to',
            ConditionExpression: '#status = :from',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':to': { S: 'CONFIRMED' }, ':from': { S: 'PENDING' } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      const remove = await rejectionOf(
        aws.dynamodb.send(
          new DeleteItemCommand({
            TableName: table,
            Key: { pk: { S: 'a' }, sk: { N: '1' } },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );

      expect(plain).toBeInstanceOf(ConditionalCheckFailedException);
      expect(plain.Item).toBeUndefined();
      expect(withOld).toBeInstanceOf(ConditionalCheckFailedException);
      expect(withOld.Item).toEqual(marshall(old));
      expect(update.Item).toEqual(marshall(old));
      expect(remove).toBeInstanceOf(ConditionalCheckFailedException);
      expect(await get('a', 1)).toEqual(old);
    });

    it('refuses what DynamoDB refuses with ValidationException', async () => {
      const refusals = [
        // No sort key in the item.
        () => aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'a' } })),
        // The sort key is a number in the table's definition.
        () => aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: 'one' } })),
        // An empty string as a key.
        () => aws.documents.send(new PutCommand({ TableName: table, Item: { pk: '', sk: 1 } })),
        // A placeholder nobody uses.
        () =>
          aws.documents.send(
            new PutCommand({
              TableName: table,
              Item: { pk: 'a', sk: 1 },
              ExpressionAttributeValues: { ':x': 1 },
            }),
          ),
        // A key attribute cannot be updated.
        () =>
          aws.documents.send(
            new UpdateCommand({
              TableName: table,
              Key: { pk: 'a', sk: 1 },
              UpdateExpression: 'SET sk = :two',
              ExpressionAttributeValues: { ':two': 2 },
            }),
          ),
        // An index key of the wrong type.
        () =>
          aws.documents.send(
            new PutCommand({ TableName: table, Item: { pk: 'a', sk: 1, shard: 7, dueAt: 'x' } }),
          ),
        // An index the table does not have.
        () =>
          aws.documents.send(
            new QueryCommand({
              TableName: table,
              IndexName: 'nope',
              KeyConditionExpression: 'pk = :a',
              ExpressionAttributeValues: { ':a': 'a' },
            }),
          ),
        // A malformed expression.
        () =>
          aws.documents.send(
            new UpdateCommand({ TableName: table, Key: { pk: 'a', sk: 1 }, UpdateExpression: 'SET = 1' }),
          ),
        // A number set with a duplicate, and a number DynamoDB cannot hold.
        () =>
          aws.dynamodb.send(
            new PutItemCommand({
              TableName: table,
              Item: { pk: { S: 'a' }, sk: { N: '1' }, s: { NS: ['1', '1.0'] } },
            }),
          ),
        () =>
          aws.dynamodb.send(
            new PutItemCommand({
              TableName: table,
              Item: { pk: { S: 'a' }, sk: { N: '1' }, n: { N: '1e999' } },
            }),
          ),
      ];

      for (const [index, refusal] of refusals.entries()) {
        expect((await rejectionOf(refusal())).name, `refusal ${index}`).toBe('ValidationException');
      }
      expect(await get('a', 1)).toBeUndefined();
    });
  });

  describe('transactions', () => {
    const putNew = (sk: number) => ({
      Put: {
        TableName: table,
        Item: { pk: 'order', sk, written: true },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    const take = (quantity: number) => ({
      Update: {
        TableName: table,
        Key: { pk: 'stock', sk: 0 },
        UpdateExpression: 'SET available = available - :q',
        ConditionExpression: 'available >= :q',
        ExpressionAttributeValues: { ':q': quantity },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    });

    it('commits every action when every condition holds', async () => {
      await put({ pk: 'stock', sk: 0, available: 5 });

      await aws.documents.send(new TransactWriteCommand({ TransactItems: [putNew(1), take(2)] }));

      expect(await get('order', 1)).toEqual({ pk: 'order', sk: 1, written: true });
      expect(await get('stock', 0)).toEqual({ pk: 'stock', sk: 0, available: 3 });
    });

    it('writes nothing when one condition fails, and reports each action with the old item where asked', async () => {
      await put({ pk: 'stock', sk: 0, available: 1 });

      const error = await rejectionOf(
        aws.documents.send(new TransactWriteCommand({ TransactItems: [putNew(1), take(2)] })),
      );

      expect(error).toBeInstanceOf(TransactionCanceledException);
      expect(error.message).toContain('[None, ConditionalCheckFailed]');
      expect(error.CancellationReasons).toEqual([
        { Code: 'None' },
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: marshall({ pk: 'stock', sk: 0, available: 1 }),
        },
      ]);
      expect(await get('order', 1)).toBeUndefined();
      expect(await get('stock', 0)).toEqual({ pk: 'stock', sk: 0, available: 1 });
    });

    it('checks a ConditionCheck action without writing it', async () => {
      await put({ pk: 'customer', sk: 0, active: false });
      const check = {
        ConditionCheck: {
          TableName: table,
          Key: { pk: { S: 'customer' }, sk: { N: '0' } },
          ConditionExpression: 'active = :yes',
          ExpressionAttributeValues: { ':yes': { BOOL: true } },
        },
      };

      const error = await rejectionOf(
        aws.dynamodb.send(
          new TransactWriteItemsCommand({
            TransactItems: [
              check,
              { Put: { TableName: table, Item: { pk: { S: 'order' }, sk: { N: '1' } } } },
            ],
          }),
        ),
      );

      expect(error.CancellationReasons).toEqual([
        { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
        { Code: 'None' },
      ]);
      expect(await get('order', 1)).toBeUndefined();
    });

    it('applies a ClientRequestToken once, and refuses it with other parameters', async () => {
      await put({ pk: 'stock', sk: 0, available: 5 });
      const send = (quantity: number) =>
        aws.documents.send(
          new TransactWriteCommand({ TransactItems: [take(quantity)], ClientRequestToken: 'token-1' }),
        );

      await send(1);
      await send(1);

      expect(await get('stock', 0)).toEqual({ pk: 'stock', sk: 0, available: 4 });
      expect(await rejectionOf(send(2))).toBeInstanceOf(IdempotentParameterMismatchException);
    });

    it('refuses two actions on one item with ValidationException', async () => {
      await put({ pk: 'stock', sk: 0, available: 5 });

      const error = await rejectionOf(
        aws.documents.send(new TransactWriteCommand({ TransactItems: [take(1), take(1)] })),
      );

      expect(error.name).toBe('ValidationException');
      expect(await get('stock', 0)).toEqual({ pk: 'stock', sk: 0, available: 5 });
    });

    it('reads items with TransactGetItems and in batches with BatchGetItem / BatchWriteItem', async () => {
      await aws.dynamodb.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [table]: [1, 2, 3].map((sk) => ({
              PutRequest: { Item: { pk: { S: 'b' }, sk: { N: String(sk) } } },
            })),
          },
        }),
      );
      await aws.dynamodb.send(
        new BatchWriteItemCommand({
          RequestItems: { [table]: [{ DeleteRequest: { Key: { pk: { S: 'b' }, sk: { N: '2' } } } }] },
        }),
      );
      const key = (sk: number) => ({ pk: { S: 'b' }, sk: { N: String(sk) } });

      const batch = await aws.dynamodb.send(
        new BatchGetItemCommand({ RequestItems: { [table]: { Keys: [key(1), key(2), key(3)] } } }),
      );
      const transaction = await aws.dynamodb.send(
        new TransactGetItemsCommand({
          TransactItems: [1, 2].map((sk) => ({ Get: { TableName: table, Key: key(sk) } })),
        }),
      );

      expect(batch.Responses?.[table]).toEqual([key(1), key(3)]);
      expect(batch.UnprocessedKeys).toEqual({});
      expect(transaction.Responses).toEqual([{ Item: key(1) }, {}]);
    });
  });

  describe('queries and scans', () => {
    beforeEach(async () => {
      for (const sk of [5, 1, 4, 2, 3]) {
        await put({ pk: 'p', sk, size: sk * 10, owner: sk % 2 === 0 ? 'even' : 'odd' });
      }
      await put({ pk: 'other', sk: 1 });
    });

    it('reads a partition in sort-key order, forwards and backwards, with a key condition on the sort key', async () => {
      const query = (forward: boolean) =>
        aws.documents.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :p AND sk BETWEEN :low AND :high',
            ExpressionAttributeValues: { ':p': 'p', ':low': 2, ':high': 4 },
            ScanIndexForward: forward,
          }),
        );

      expect((await query(true)).Items?.map((item) => item.sk)).toEqual([2, 3, 4]);
      expect((await query(false)).Items?.map((item) => item.sk)).toEqual([4, 3, 2]);
    });

    it('pages with Limit and ExclusiveStartKey, filters after the limit, projects and counts', async () => {
      const pages = [];
      for await (const page of paginateQuery(
        { client: aws.documents, pageSize: 2 },
        { TableName: table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'p' } },
      )) {
        pages.push(page.Items?.map((item) => item.sk));
      }
      const filtered = await aws.documents.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :p',
          FilterExpression: '#size > :min',
          ProjectionExpression: 'sk, #size',
          ExpressionAttributeNames: { '#size': 'size' },
          ExpressionAttributeValues: { ':p': 'p', ':min': 20 },
          Limit: 4,
        }),
      );
      const counted = await aws.dynamodb.send(
        new LowLevelQueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': { S: 'p' } },
          Select: 'COUNT',
        }),
      );

      expect(pages).toEqual([[1, 2], [3, 4], [5]]);
      expect(filtered.Items).toEqual([
        { sk: 3, size: 30 },
        { sk: 4, size: 40 },
      ]);
      expect([filtered.Count, filtered.ScannedCount]).toEqual([2, 4]);
      expect(filtered.LastEvaluatedKey).toEqual({ pk: 'p', sk: 4 });
      expect(counted.Items).toBeUndefined();
      expect(counted.Count).toBe(5);
    });

    it('queries a sparse global secondary index as the outbox sweeper does, and projects a keys-only one', async () => {
      await put({ pk: 'm', sk: 1, shard: '3', dueAt: '2024-05-01T12:00:02.000Z' });
      await put({ pk: 'm', sk: 2, shard: '3', dueAt: '2024-05-01T12:00:01.000Z' });
      await put({ pk: 'm', sk: 3, shard: '3' });
      await put({ pk: 'm', sk: 4, shard: '3', dueAt: '2024-05-01T13:00:00.000Z' });

      const due = await aws.documents.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'due',
          KeyConditionExpression: '#shard = :shard AND #next <= :now',
          ExpressionAttributeNames: { '#shard': 'shard', '#next': 'dueAt' },
          ExpressionAttributeValues: { ':shard': '3', ':now': '2024-05-01T12:30:00.000Z' },
          Limit: 10,
        }),
      );
      const owners = await aws.documents.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'byOwner',
          KeyConditionExpression: '#owner = :even',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':even': 'even' },
        }),
      );
      const allAttributes = await rejectionOf(
        aws.documents.send(
          new QueryCommand({
            TableName: table,
            IndexName: 'byOwner',
            KeyConditionExpression: '#owner = :even',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':even': 'even' },
            Select: 'ALL_ATTRIBUTES',
          }),
        ),
      );

      expect(due.Items?.map((item) => item.sk)).toEqual([2, 1]);
      expect(owners.Items).toEqual([
        { pk: 'p', sk: 2, owner: 'even' },
        { pk: 'p', sk: 4, owner: 'even' },
      ]);
      expect(allAttributes.name).toBe('ValidationException');
    });

    it('scans every item once across pages and segments, and counts them', async () => {
      for (let sk = 10; sk < 30; sk += 1) await put({ pk: `s${sk}`, sk });
      const scanned: string[] = [];
      for await (const page of paginateScan({ client: aws.documents, pageSize: 7 }, { TableName: table })) {
        scanned.push(...(page.Items ?? []).map((item) => `${item.pk}/${item.sk}`));
      }
      const segments = await Promise.all(
        [0, 1, 2].map((segment) =>
          aws.documents.send(new ScanCommand({ TableName: table, Segment: segment, TotalSegments: 3 })),
        ),
      );
      const counted = await aws.documents.send(new ScanCommand({ TableName: table, Select: 'COUNT' }));

      expect(scanned).toHaveLength(26);
      expect(new Set(scanned).size).toBe(26);
      expect(segments.reduce((total, segment) => total + (segment.Count ?? 0), 0)).toBe(26);
      expect([counted.Count, counted.Items]).toEqual([26, undefined]);
    });
  });
});
