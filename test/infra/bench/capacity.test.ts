import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  countOrderCapacity,
  countOrderingCapacity,
  measureCapacity,
} from '../../../infra/dev/bench/capacity.ts';
import { CapacityMeter, readUnits, writeUnits } from '../../../infra/dev/bench/capacity-meter.ts';
import { MemoryDocumentClient, type MemoryTableSchema } from '../../../shared/memory/index.ts';

const TABLES: Record<string, MemoryTableSchema> = {
  things: {
    partitionKey: 'id',
    globalIndexes: [
      { name: 'byState', partitionKey: 'state', sortKey: 'id', projection: { type: 'KEYS_ONLY' } },
      { name: 'whole', partitionKey: 'group', projection: { type: 'ALL' } },
    ],
  },
};

function metered(): { meter: CapacityMeter; client: ReturnType<CapacityMeter['client']> } {
  const memory = new MemoryDocumentClient(TABLES);
  const meter = new CapacityMeter(memory, TABLES);
  return { meter, client: meter.client(memory.asDocumentClient(), 'test') };
}

const units = (meter: CapacityMeter, target: string) =>
  meter.lines().find((line) => line.target === target)?.writeUnits ?? 0;

describe('CapacityMeter', () => {
  it('charges a write per started KB of the larger image, twice inside a transaction', async () => {
    const { meter, client } = metered();

    await client.send(new PutCommand({ TableName: 'things', Item: { id: 'a', body: 'x'.repeat(1_500) } }));
    expect(units(meter, 'things')).toBe(2);

    await client.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: { TableName: 'things', Item: { id: 'b', body: 'y'.repeat(100) } } }],
      }),
    );
    expect(units(meter, 'things')).toBe(4);
  });

  it('writes an index entry when it appears, twice when its key changes, never when nothing projected changes', async () => {
    const { meter, client } = metered();
    await client.send(new PutCommand({ TableName: 'things', Item: { id: 'a', state: 'new', note: 'n' } }));
    expect(units(meter, 'things/byState')).toBe(1);

    const set = (attribute: string, value: string) =>
      client.send(
        new UpdateCommand({
          TableName: 'things',
          Key: { id: 'a' },
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': attribute },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    // Not projected into the keys-only index: no index write.
    await set('note', 'changed');
    expect(units(meter, 'things/byState')).toBe(1);
    // The index key moves: a delete and a put.
    await set('state', 'sent');
    expect(units(meter, 'things/byState')).toBe(3);
    // Never in the sparse index without its key.
    expect(units(meter, 'things/whole')).toBe(0);
  });

  it('charges a failed conditional write and a projected GetItem by the whole stored item', async () => {
    const { meter, client } = metered();
    await client.send(new PutCommand({ TableName: 'things', Item: { id: 'a', body: 'x'.repeat(3_000) } }));
    const before = units(meter, 'things');

    await expect(
      client.send(
        new PutCommand({
          TableName: 'things',
          Item: { id: 'a' },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    ).rejects.toThrow();
    expect(units(meter, 'things') - before).toBe(3);

    await client.send(
      new GetCommand({
        TableName: 'things',
        Key: { id: 'a' },
        ProjectionExpression: 'id',
        ConsistentRead: true,
      }),
    );
    expect(meter.lines().find((line) => line.target === 'things')?.readUnits).toBe(1);
  });

  it('rounds reads up to 4 KB, halved when eventually consistent', () => {
    expect(readUnits(100, false)).toBe(0.5);
    expect(readUnits(4_097, true)).toBe(2);
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1_025)).toBe(2);
  });
});

describe('capacity of an order', () => {
  it('counts every write of the happy path: the two transactions at double, the relay and the confirmation once', async () => {
    const capacity = await countOrderCapacity(5);

    const line = (actor: string, target: string) =>
      capacity.lines.find((l) => l.actor === actor && l.target === target)?.writeUnits;
    expect(line('orders', 'orders')).toBe(2);
    expect(line('orders', 'outbox')).toBe(2);
    expect(line('consumer', 'inbox')).toBe(2);
    // The stock decrement and the order's reservation row.
    expect(line('consumer', 'inventory')).toBe(4);
    expect(line('relay', 'outbox')).toBe(1);
    expect(line('consumer', 'outbox')).toBe(1);
    const sum = capacity.lines.reduce((total, l) => total + l.writeUnits, 0);
    expect(capacity.writeUnitsPerOrder).toBeCloseTo(sum, 10);
    // Five messages: one SendMessageBatch, one receive with them and one empty, one delete.
    expect(capacity.sqsPerMessage).toEqual({
      sendMessageBatch: 0.2,
      receiveMessage: 0.4,
      deleteMessageBatch: 0.2,
    });
  });

  it('reports both targets with what was measured', async () => {
    const section = await measureCapacity({
      size: 'tiny',
      repeats: 1,
      sqsLatencyMs: 0,
      dynamoLatencyMs: 0,
      snsLatencyMs: 0,
    });

    expect(section.targets.map((target) => target.name)).toEqual([
      'DynamoDB write units per order',
      'SQS requests per message',
    ]);
    for (const target of section.targets)
      expect(target.holds).toBe(Number(target.measured) <= Number(target.target.replace('≤ ', '')));
    expect(section.rows.every((row) => row.length === section.columns.length)).toBe(true);
  });
});

describe('countOrderingCapacity', () => {
  it('charges an ordered message its index entry and the consumer’s cursor, and the counter row when there is no version', async () => {
    const ordering = await countOrderingCapacity(5);

    // byOrderKey entry (1) + cursor update inside the consumer's transaction (2).
    expect(ordering.versionWriteUnits).toBe(3);
    // + the counter's conditional update inside the writer's transaction (2), after its consistent read (1).
    expect(ordering.counterWriteUnits).toBe(5);
    expect(ordering.counterReadUnits).toBe(1);
  });
});
