import {
  CreateTableCommand,
  DescribeTableCommand,
  type StreamViewType,
  TransactionCanceledException,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
  ResourceNotFoundException,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import { DeleteCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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

async function createTable(viewType: StreamViewType): Promise<string> {
  tableCount += 1;
  const name = `streamed-${tableCount}`;
  await aws.dynamodb.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: viewType },
    }),
  );
  return name;
}

beforeEach(async () => {
  table = await createTable('NEW_AND_OLD_IMAGES');
});

async function streamOf(tableName: string): Promise<{ streamArn: string; shardId: string }> {
  const { Table } = await aws.dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  const streamArn = Table?.LatestStreamArn ?? '';
  const { StreamDescription } = await aws.streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  return { streamArn, shardId: StreamDescription?.Shards?.[0]?.ShardId ?? '' };
}

async function iterator(
  tableName: string,
  position: { type: ShardIteratorType; sequenceNumber?: string },
): Promise<string> {
  const { streamArn, shardId } = await streamOf(tableName);
  const { ShardIterator } = await aws.streams.send(
    new GetShardIteratorCommand({
      StreamArn: streamArn,
      ShardId: shardId,
      ShardIteratorType: position.type,
      ...(position.sequenceNumber === undefined ? {} : { SequenceNumber: position.sequenceNumber }),
    }),
  );
  return ShardIterator ?? '';
}

async function records(shardIterator: string, limit?: number) {
  return aws.streams.send(
    new GetRecordsCommand({ ShardIterator: shardIterator, ...(limit === undefined ? {} : { Limit: limit }) }),
  );
}

async function writeThree(): Promise<void> {
  await aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: '1', n: 1 } }));
  await aws.documents.send(
    new UpdateCommand({
      TableName: table,
      Key: { pk: 'a', sk: '1' },
      UpdateExpression: 'SET n = :two',
      ExpressionAttributeValues: { ':two': 2 },
    }),
  );
  await aws.documents.send(new DeleteCommand({ TableName: table, Key: { pk: 'a', sk: '1' } }));
}

describe('DynamoDB Streams on the embedded backend', () => {
  it('reports INSERT, MODIFY and REMOVE in write order, with keys and both images', async () => {
    const before = Math.floor(Date.now() / 1000);
    await writeThree();

    const { Records } = await records(await iterator(table, { type: 'TRIM_HORIZON' }));

    expect(Records?.map((record) => record.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    expect(Records?.map((record) => [record.dynamodb?.NewImage, record.dynamodb?.OldImage])).toEqual([
      [marshall({ pk: 'a', sk: '1', n: 1 }), undefined],
      [marshall({ pk: 'a', sk: '1', n: 2 }), marshall({ pk: 'a', sk: '1', n: 1 })],
      [undefined, marshall({ pk: 'a', sk: '1', n: 2 })],
    ]);
    const sequenceNumbers = (Records ?? []).map((record) => BigInt(record.dynamodb?.SequenceNumber ?? '0'));
    expect(sequenceNumbers).toEqual([...sequenceNumbers].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(sequenceNumbers).size).toBe(3);
    for (const record of Records ?? []) {
      expect(record).toMatchObject({
        eventSource: 'aws:dynamodb',
        eventVersion: '1.1',
        awsRegion: 'us-east-1',
      });
      expect(record.dynamodb).toMatchObject({
        Keys: marshall({ pk: 'a', sk: '1' }),
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      });
      const created = (record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? 0) / 1000;
      expect(created).toBeGreaterThanOrEqual(before);
      expect(created).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    }
  });

  it('resumes after a sequence number, from one, and from the latest record', async () => {
    await writeThree();
    const all = (await records(await iterator(table, { type: 'TRIM_HORIZON' }))).Records ?? [];
    const second = all[1]?.dynamodb?.SequenceNumber ?? '';

    const after = await records(
      await iterator(table, { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: second }),
    );
    const at = await records(await iterator(table, { type: 'AT_SEQUENCE_NUMBER', sequenceNumber: second }));
    const latest = await iterator(table, { type: 'LATEST' });
    await aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'b', sk: '1' } }));
    const fromLatest = await records(latest);

    expect(after.Records?.map((record) => record.eventName)).toEqual(['REMOVE']);
    expect(at.Records?.map((record) => record.eventName)).toEqual(['MODIFY', 'REMOVE']);
    expect(fromLatest.Records?.map((record) => record.dynamodb?.Keys)).toEqual([
      marshall({ pk: 'b', sk: '1' }),
    ]);
  });

  it('continues with NextShardIterator, a Limit at a time, and sees later writes', async () => {
    await writeThree();

    const first = await records(await iterator(table, { type: 'TRIM_HORIZON' }), 2);
    const second = await records(first.NextShardIterator ?? '', 2);
    const empty = await records(second.NextShardIterator ?? '');
    await aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'c', sk: '1' } }));
    const later = await records(empty.NextShardIterator ?? '');

    expect(first.Records?.map((record) => record.eventName)).toEqual(['INSERT', 'MODIFY']);
    expect(second.Records?.map((record) => record.eventName)).toEqual(['REMOVE']);
    expect(empty.Records).toEqual([]);
    expect(empty.NextShardIterator).toBeDefined();
    expect(later.Records?.map((record) => record.eventName)).toEqual(['INSERT']);
  });

  it('writes the records of a committed transaction and none of a cancelled one', async () => {
    const putIfNew = (sk: string) => ({
      Put: { TableName: table, Item: { pk: 't', sk }, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    await aws.documents.send(new TransactWriteCommand({ TransactItems: [putIfNew('1'), putIfNew('2')] }));
    const cancelled = await rejectionOf(
      aws.documents.send(new TransactWriteCommand({ TransactItems: [putIfNew('3'), putIfNew('1')] })),
    );

    const { Records } = await records(await iterator(table, { type: 'TRIM_HORIZON' }));

    expect(cancelled).toBeInstanceOf(TransactionCanceledException);
    expect(Records?.map((record) => record.dynamodb?.Keys?.sk?.S)).toEqual(['1', '2']);
  });

  it('carries only what the stream view type says', async () => {
    const keysOnly = await createTable('KEYS_ONLY');
    const newOnly = await createTable('NEW_IMAGE');
    for (const name of [keysOnly, newOnly]) {
      await aws.documents.send(new PutCommand({ TableName: name, Item: { pk: 'a', sk: '1', n: 1 } }));
      await aws.documents.send(new PutCommand({ TableName: name, Item: { pk: 'a', sk: '1', n: 2 } }));
    }

    const [keys, images] = await Promise.all(
      [keysOnly, newOnly].map(
        async (name) => (await records(await iterator(name, { type: 'TRIM_HORIZON' }))).Records,
      ),
    );

    expect(keys?.map((record) => record.dynamodb)).toEqual([
      expect.objectContaining({ Keys: marshall({ pk: 'a', sk: '1' }), StreamViewType: 'KEYS_ONLY' }),
      expect.objectContaining({ Keys: marshall({ pk: 'a', sk: '1' }), StreamViewType: 'KEYS_ONLY' }),
    ]);
    expect(keys?.some((record) => record.dynamodb?.NewImage ?? record.dynamodb?.OldImage)).toBe(false);
    expect(images?.map((record) => [record.dynamodb?.NewImage?.n, record.dynamodb?.OldImage])).toEqual([
      [{ N: '1' }, undefined],
      [{ N: '2' }, undefined],
    ]);
  });

  it('closes the shard when the stream is turned off, and gives a turned-on stream a new ARN', async () => {
    await aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: '1' } }));
    const { streamArn } = await streamOf(table);
    const reader = await iterator(table, { type: 'TRIM_HORIZON' });

    await aws.dynamodb.send(
      new UpdateTableCommand({ TableName: table, StreamSpecification: { StreamEnabled: false } }),
    );
    await aws.documents.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: '2' } }));
    const closed = await aws.streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    const drained = await records(reader);
    await aws.dynamodb.send(
      new UpdateTableCommand({
        TableName: table,
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
      }),
    );
    const { Streams } = await aws.streams.send(new ListStreamsCommand({ TableName: table }));

    expect(closed.StreamDescription?.StreamStatus).toBe('DISABLED');
    expect(closed.StreamDescription?.Shards?.[0]?.SequenceNumberRange?.EndingSequenceNumber).toBeDefined();
    expect(drained.Records).toHaveLength(1);
    expect(drained.NextShardIterator).toBeUndefined();
    expect((await streamOf(table)).streamArn).not.toBe(streamArn);
    expect(Streams).toHaveLength(2);
  });

  it('refuses an unknown stream or shard, a malformed iterator, a foreign sequence number and a bad Limit', async () => {
    await writeThree();
    const { streamArn, shardId } = await streamOf(table);
    const horizon = await iterator(table, { type: 'TRIM_HORIZON' });
    const refusals = {
      unknownStream: aws.streams.send(new DescribeStreamCommand({ StreamArn: `${streamArn}-nope` })),
      unknownShard: aws.streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: 'shardId-nope',
          ShardIteratorType: 'LATEST',
        }),
      ),
      malformedIterator: aws.streams.send(new GetRecordsCommand({ ShardIterator: 'not-an-iterator' })),
      foreignSequenceNumber: aws.streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: 'AT_SEQUENCE_NUMBER',
          SequenceNumber: '999999999999999999999999',
        }),
      ),
      limitTooLarge: aws.streams.send(new GetRecordsCommand({ ShardIterator: horizon, Limit: 1001 })),
    };

    const names = Object.fromEntries(
      await Promise.all(
        Object.entries(refusals).map(async ([what, call]) => [what, (await rejectionOf(call)).name]),
      ),
    );

    expect(names).toEqual({
      unknownStream: 'ResourceNotFoundException',
      unknownShard: 'ResourceNotFoundException',
      malformedIterator: 'ValidationException',
      foreignSequenceNumber: 'ValidationException',
      limitTooLarge: 'ValidationException',
    });
    expect(await rejectionOf(refusals.unknownStream)).toBeInstanceOf(ResourceNotFoundException);
  });
});
