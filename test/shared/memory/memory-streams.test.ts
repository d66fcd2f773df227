import { DeleteCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import {
  MemoryStreamError,
  type MemoryStreamRecord,
  MemoryStreams,
  type ShardIteratorType,
} from '../../../shared/memory/memory-streams.ts';
import { type ManualClock, manualClock } from '../../support/factories.ts';

const TABLE = 'things';
const MINUTE = 60_000;

let clock: ManualClock;
let db: MemoryDocumentClient;
let streams: MemoryStreams;
let streamArn: string;
let shardId: string;

beforeEach(() => {
  clock = manualClock();
  db = new MemoryDocumentClient({
    [TABLE]: { partitionKey: 'pk', sortKey: 'sk' },
    quiet: { partitionKey: 'id' },
  });
  streams = new MemoryStreams(db, { clock: clock.now, region: 'eu-west-1', accountId: '111122223333' });
  const stream = streams.enable(TABLE, 'NEW_AND_OLD_IMAGES');
  streamArn = stream.streamArn;
  shardId = stream.shards[0]?.shardId ?? '';
});

async function put(item: Record<string, unknown>, table = TABLE): Promise<void> {
  await db.send(new PutCommand({ TableName: table, Item: item }));
}

function iterator(type: ShardIteratorType, sequenceNumber?: string): string {
  return streams.shardIterator(streamArn, {
    shardId,
    type,
    ...(sequenceNumber === undefined ? {} : { sequenceNumber }),
  });
}

function read(type: ShardIteratorType, sequenceNumber?: string): MemoryStreamRecord[] {
  return streams.records(iterator(type, sequenceNumber)).records;
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof MemoryStreamError ? error.code : `not a stream error: ${String(error)}`;
  }
  return undefined;
}

describe('MemoryStreams', () => {
  it('describes a stream with an ARN and label from the clock, its key schema and one open shard', () => {
    const description = streams.describe(streamArn);

    expect(description).toMatchObject({
      streamArn: `arn:aws:dynamodb:eu-west-1:111122223333:table/${TABLE}/stream/${clock.now().toISOString().replace('Z', '')}`,
      status: 'ENABLED',
      viewType: 'NEW_AND_OLD_IMAGES',
      tableName: TABLE,
      keySchema: { partitionKey: 'pk', sortKey: 'sk' },
    });
    expect(description.shards).toEqual([{ shardId, startingSequenceNumber: '100000000000000000000' }]);
    expect(streams.latest(TABLE)?.streamArn).toBe(streamArn);
    expect(streams.latest('quiet')).toBeUndefined();
  });

  it('records committed writes in order, with keys, images, creation time and increasing sequence numbers', async () => {
    await put({ pk: 'a', sk: '1', n: 1 });
    clock.advance(1_500);
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { pk: 'a', sk: '1' },
        UpdateExpression: 'SET n = :two',
        ExpressionAttributeValues: { ':two': 2 },
      }),
    );
    await db.send(new DeleteCommand({ TableName: TABLE, Key: { pk: 'a', sk: '1' } }));
    await put({ id: 'not streamed' }, 'quiet');

    const records = read('TRIM_HORIZON');

    expect(
      records.map((record) => [record.eventName, record.keys, record.oldImage, record.newImage]),
    ).toEqual([
      ['INSERT', { pk: 'a', sk: '1' }, undefined, { pk: 'a', sk: '1', n: 1 }],
      ['MODIFY', { pk: 'a', sk: '1' }, { pk: 'a', sk: '1', n: 1 }, { pk: 'a', sk: '1', n: 2 }],
      ['REMOVE', { pk: 'a', sk: '1' }, { pk: 'a', sk: '1', n: 2 }, undefined],
    ]);
    expect(records.map((record) => record.sequenceNumber)).toEqual([
      '100000000000000000000',
      '100000000000000000001',
      '100000000000000000002',
    ]);
    expect((records[1]?.createdAt.getTime() ?? 0) - (records[0]?.createdAt.getTime() ?? 0)).toBe(1_500);
    expect(new Set(records.map((record) => record.eventId)).size).toBe(3);
    expect(records.every((record) => record.sizeBytes > 0)).toBe(true);
  });

  it('records nothing of a cancelled transaction', async () => {
    await put({ pk: 'a', sk: '1' });
    const putIfNew = (sk: string) => ({
      Put: { TableName: TABLE, Item: { pk: 'a', sk }, ConditionExpression: 'attribute_not_exists(pk)' },
    });

    await expect(
      db.send(new TransactWriteCommand({ TransactItems: [putIfNew('2'), putIfNew('1')] })),
    ).rejects.toThrow();

    expect(read('TRIM_HORIZON')).toHaveLength(1);
  });

  it('starts an iterator at the horizon, at or after a sequence number, or after the latest record', async () => {
    for (const sk of ['1', '2', '3']) await put({ pk: 'a', sk });
    const second = '100000000000000000001';
    const latest = iterator('LATEST');
    await put({ pk: 'a', sk: '4' });

    expect(read('AT_SEQUENCE_NUMBER', second).map((record) => record.keys.sk)).toEqual(['2', '3', '4']);
    expect(read('AFTER_SEQUENCE_NUMBER', second).map((record) => record.keys.sk)).toEqual(['3', '4']);
    expect(streams.records(latest).records.map((record) => record.keys.sk)).toEqual(['4']);
  });

  it('pages with Limit and continues with the next iterator, which also sees later records', async () => {
    for (const sk of ['1', '2', '3']) await put({ pk: 'a', sk });

    const first = streams.records(iterator('TRIM_HORIZON'), 2);
    const second = streams.records(first.nextIterator ?? '', 2);
    await put({ pk: 'a', sk: '4' });
    const third = streams.records(second.nextIterator ?? '');

    expect(first.records.map((record) => record.keys.sk)).toEqual(['1', '2']);
    expect(second.records.map((record) => record.keys.sk)).toEqual(['3']);
    expect(third.records.map((record) => record.keys.sk)).toEqual(['4']);
  });

  it('keeps only what the view type says', async () => {
    streams.enable('quiet', 'KEYS_ONLY');
    const quiet = streams.latest('quiet');
    await put({ id: 'x', extra: true }, 'quiet');

    const [record] = streams.records(
      streams.shardIterator(quiet?.streamArn ?? '', {
        shardId: quiet?.shards[0]?.shardId ?? '',
        type: 'TRIM_HORIZON',
      }),
    ).records;

    expect(record).toMatchObject({ keys: { id: 'x' }, viewType: 'KEYS_ONLY' });
    expect(record?.newImage).toBeUndefined();
    expect(record?.oldImage).toBeUndefined();
  });

  it('closes the shard when disabled: the rest stays readable, then the iterator ends; enabling again opens a new stream', async () => {
    await put({ pk: 'a', sk: '1' });
    const reader = iterator('TRIM_HORIZON');

    streams.disable(TABLE);
    await put({ pk: 'a', sk: '2' });
    const closed = streams.describe(streamArn);
    const drained = streams.records(reader);
    clock.advance(1);
    const reopened = streams.enable(TABLE, 'NEW_IMAGE');

    expect(closed.status).toBe('DISABLED');
    expect(closed.shards[0]?.endingSequenceNumber).toBe('100000000000000000000');
    expect(drained.records).toHaveLength(1);
    expect(drained.nextIterator).toBeUndefined();
    expect(reopened.streamArn).not.toBe(streamArn);
    expect(streams.list(TABLE).map((stream) => stream.status)).toEqual(['DISABLED', 'ENABLED']);
  });

  it('answers enabling an enabled stream with it, and refuses another view type while it is on', () => {
    expect(streams.enable(TABLE, 'NEW_AND_OLD_IMAGES').streamArn).toBe(streamArn);
    expect(codeOf(() => streams.enable(TABLE, 'KEYS_ONLY'))).toBe('ValidationException');
    expect(codeOf(() => streams.enable('no-table', 'KEYS_ONLY'))).toBe('ResourceNotFoundException');
  });

  it('expires an iterator 15 minutes after it was issued', async () => {
    await put({ pk: 'a', sk: '1' });
    const stale = iterator('TRIM_HORIZON');
    const fresh = streams.records(stale).nextIterator ?? '';

    clock.advance(15 * MINUTE + 1);

    expect(codeOf(() => streams.records(stale))).toBe('ExpiredIteratorException');
    expect(codeOf(() => streams.records(fresh))).toBe('ExpiredIteratorException');
    expect(read('TRIM_HORIZON')).toHaveLength(1);
  });

  it('trims records older than 24 hours, and refuses a sequence number that was trimmed', async () => {
    await put({ pk: 'a', sk: 'old' });
    clock.advance(24 * 60 * MINUTE);
    await put({ pk: 'a', sk: 'new' });
    clock.advance(1);

    expect(read('TRIM_HORIZON').map((record) => record.keys.sk)).toEqual(['new']);
    expect(codeOf(() => iterator('AT_SEQUENCE_NUMBER', '100000000000000000000'))).toBe(
      'TrimmedDataAccessException',
    );
    expect(read('AFTER_SEQUENCE_NUMBER', '100000000000000000001')).toEqual([]);
  });

  it('refuses an unknown stream or shard, a malformed iterator, a sequence number outside the shard and a bad limit', async () => {
    await put({ pk: 'a', sk: '1' });

    expect(codeOf(() => streams.describe('arn:nope'))).toBe('ResourceNotFoundException');
    expect(codeOf(() => streams.shardIterator(streamArn, { shardId: 'shardId-nope', type: 'LATEST' }))).toBe(
      'ResourceNotFoundException',
    );
    expect(codeOf(() => streams.records('garbage'))).toBe('ValidationException');
    expect(codeOf(() => iterator('AT_SEQUENCE_NUMBER', '5'))).toBe('ValidationException');
    expect(codeOf(() => iterator('AFTER_SEQUENCE_NUMBER', '100000000000000000001'))).toBe(
      'ValidationException',
    );
    expect(codeOf(() => iterator('AT_SEQUENCE_NUMBER', 'abc'))).toBe('ValidationException');
    expect(codeOf(() => streams.records(iterator('TRIM_HORIZON'), 0))).toBe('ValidationException');
    expect(codeOf(() => streams.records(iterator('TRIM_HORIZON'), 1001))).toBe('ValidationException');
  });

  it('hands out copies, so changing a record changes neither the stream nor the table', async () => {
    await put({ pk: 'a', sk: '1', nested: { n: 1 } });

    const [record] = read('TRIM_HORIZON');
    (record?.newImage?.nested as { n: number }).n = 2;

    expect(read('TRIM_HORIZON')[0]?.newImage).toEqual({ pk: 'a', sk: '1', nested: { n: 1 } });
    expect(db.items(TABLE)).toEqual([{ pk: 'a', sk: '1', nested: { n: 1 } }]);
  });
});
