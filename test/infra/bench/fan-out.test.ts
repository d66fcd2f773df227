import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BenchSection } from '../../../infra/dev/bench/bench-section.ts';
import { writeUnits } from '../../../infra/dev/bench/capacity-meter.ts';
import { EXAMPLE_TABLES } from '../../../infra/dev/bench/example-pipeline.ts';
import { measureFanOut } from '../../../infra/dev/bench/fan-out.ts';
import { type FanOutUsage, fanOutMonthlyCost } from '../../../infra/dev/bench/fan-out-cost.ts';
import { FanOutPipeline } from '../../../infra/dev/bench/fan-out-pipeline.ts';
import { countFanOut } from '../../../infra/dev/bench/fan-out-run.ts';
import { FAN_OUT_SUBSCRIBERS } from '../../../infra/dev/bench/fan-out-subscribers.ts';
import { memorySqsClient } from '../../../infra/dev/bench/memory-sqs-client.ts';
import { applySnsReceipts, DELIVERY_MAP } from '../../../infra/dev/bench/sns-fan-out-model.ts';
import {
  itemSizeBytes,
  MemoryDocumentClient,
  MemoryQueues,
  newOutboxItem,
} from '../../../shared/memory/index.ts';

const SUBSCRIBERS = FAN_OUT_SUBSCRIBERS.slice(0, 2);
const ORDERS = 6;

/** A metered run of `ORDERS` orders to inventory and loyalty, drained; with the outbox rows as first written. */
async function drained(transport: 'sqs' | 'sns') {
  const pipeline = new FanOutPipeline({ transport, subscribers: SUBSCRIBERS, metered: true });
  const inserted: Record<string, unknown>[] = [];
  pipeline.memory.onChange((change) => {
    if (change.tableName === 'outbox' && change.eventName === 'INSERT' && change.newImage) {
      inserted.push(change.newImage);
    }
  });
  await pipeline.start();
  try {
    const skus = Array.from({ length: ORDERS }, (_, n) => `SKU-${n}`);
    await pipeline.stock(skus);
    const messageIds = [];
    for (const sku of skus) messageIds.push(await pipeline.placeOrder(sku));
    await pipeline.drain();
    const line = (actor: string, target: string) =>
      pipeline.meter?.lines().find((l) => l.actor === actor && l.target === target);
    return {
      pipeline,
      messageIds,
      inserted,
      line,
      rows: await pipeline.items('outbox'),
      applied: await pipeline.applied(),
    };
  } finally {
    await pipeline.stop();
  }
}

describe('the fan-out pipeline, rows per delivery', () => {
  it('stores a row per delivery, and each subscriber applies each order once and has its delivery CONFIRMED', async () => {
    const { pipeline, messageIds, rows, applied } = await drained('sqs');

    expect(rows).toHaveLength(ORDERS * SUBSCRIBERS.length);
    expect(rows.every((row) => row.status === 'CONFIRMED')).toBe(true);
    expect(rows.map((row) => row.messageId).sort()).toEqual(
      messageIds.flatMap((id) => SUBSCRIBERS.map((subscriber) => `${id}#${subscriber}`)).sort(),
    );
    expect([...pipeline.confirmedAt.keys()].sort()).toEqual([...messageIds].sort());
    for (const subscriber of SUBSCRIBERS)
      expect(applied[subscriber]).toEqual({ orders: ORDERS, counted: ORDERS });
    // Each subscriber's queue got each message once.
    expect(pipeline.counts.sns).toEqual({ publishes: 0, deliveries: 0 });
    expect(pipeline.counts.streamRecords).toBe(ORDERS * SUBSCRIBERS.length);
  });

  it('counts the rows the writer puts at their size, twice in its transaction, and one SENT and one CONFIRMED per row', async () => {
    const { inserted, line } = await drained('sqs');

    const expected = inserted.reduce((sum, row) => sum + 2 * writeUnits(itemSizeBytes(row)), 0);
    expect(line('orders', 'outbox')?.writeUnits).toBe(expected);
    expect(line('relay', 'outbox')?.operations).toBe(inserted.length);
    expect(line('receipts', 'outbox')?.operations).toBe(inserted.length);
    // Every row enters the due index when written; SENT moves it, CONFIRMED removes it.
    expect(line('orders', 'outbox/due')?.operations).toBe(inserted.length);
  });
});

describe('the fan-out pipeline, SNS model', () => {
  it('stores one row per message with a map of its deliveries, all CONFIRMED, each applied once by each subscriber', async () => {
    const { pipeline, messageIds, rows, applied } = await drained('sns');

    expect(rows.map((row) => row.messageId).sort()).toEqual([...messageIds].sort());
    for (const row of rows) {
      expect(row.status).toBe('CONFIRMED');
      expect(row.deliveries).toEqual(
        Object.fromEntries(
          SUBSCRIBERS.map((name) => [name, expect.objectContaining({ status: 'CONFIRMED' })]),
        ),
      );
    }
    for (const subscriber of SUBSCRIBERS)
      expect(applied[subscriber]).toEqual({ orders: ORDERS, counted: ORDERS });
    expect(pipeline.counts.relaySends).toBe(0);
    expect(pipeline.counts.sns.deliveries).toBe(ORDERS * SUBSCRIBERS.length);
  });

  it('counts one update of the row per receipt and one confirmation per message', async () => {
    const { inserted, line } = await drained('sns');

    const expected = inserted.reduce((sum, row) => sum + 2 * writeUnits(itemSizeBytes(row)), 0);
    expect(line('orders', 'outbox')?.writeUnits).toBe(expected);
    expect(line('relay', 'outbox')?.operations).toBe(ORDERS);
    expect(line('receipts', 'outbox')?.operations).toBe(ORDERS * (SUBSCRIBERS.length + 1));
  });
});

describe('applySnsReceipts', () => {
  const receiptRecord = (subscribers: readonly string[]): SQSRecord =>
    ({
      body: JSON.stringify({
        schemaVersion: 1,
        receipts: subscribers.map((subscriber) => ({
          messageId: 'm-1',
          subscriber,
          outcome: 'APPLIED',
          appliedAt: '2026-12-07T00:00:00.000Z',
        })),
      }),
    }) as SQSRecord;

  it('confirms each subscriber once, and the message with the last of them, whatever the duplicates', async () => {
    const memory = new MemoryDocumentClient(EXAMPLE_TABLES);
    const client = memory.asDocumentClient();
    const item = newOutboxItem(
      {
        messageId: 'm-1',
        topic: 'order.created',
        aggregateId: 'order-1',
        payload: {},
        headers: {},
        createdAt: '2026-12-07T00:00:00.000Z',
        schemaVersion: 1,
      },
      { now: new Date('2026-12-07T00:00:00.000Z') },
    );
    const deliveries = { inventory: { status: 'PENDING' }, loyalty: { status: 'PENDING' } };
    await client.send(
      new PutCommand({ TableName: 'outbox', Item: { ...item, [DELIVERY_MAP.attribute]: deliveries } }),
    );
    const deps = { client, outboxTable: 'outbox', subscriberCount: 2, clock: () => new Date() };

    const first = await applySnsReceipts([receiptRecord(['inventory', 'inventory'])], deps);
    const second = await applySnsReceipts([receiptRecord(['loyalty']), receiptRecord(['inventory'])], deps);

    expect(first).toEqual({ confirmedDeliveries: 1, confirmedMessages: 0, duplicates: 1 });
    expect(second).toEqual({ confirmedDeliveries: 1, confirmedMessages: 1, duplicates: 1 });
    const { Item } = await client.send(new GetCommand({ TableName: 'outbox', Key: { messageId: 'm-1' } }));
    expect(Item?.status).toBe('CONFIRMED');
    expect(Item?.[DELIVERY_MAP.confirmed]).toBe(2);
  });
});

describe('countFanOut', () => {
  it('adds write units and relay requests per subscriber with rows per delivery, and neither relay work with SNS', async () => {
    const [sqsOne, sqsFive, snsOne, snsFive] = [
      await countFanOut('sqs', 1, 10),
      await countFanOut('sqs', 5, 10),
      await countFanOut('sns', 1, 10),
      await countFanOut('sns', 5, 10),
    ];

    expect(sqsFive.outboxRows).toBe(5 * sqsOne.outboxRows);
    expect(snsFive.outboxRows).toBe(snsOne.outboxRows);
    expect(sqsFive.relaySends).toBeGreaterThan(sqsOne.relaySends);
    expect(snsFive.snsPublishes).toBe(snsOne.snsPublishes);
    expect(snsFive.relaySends + sqsOne.snsPublishes).toBe(0);
    // The producer's writes grow with each subscriber either way, more for a row than for a map entry.
    expect(sqsFive.producerWriteUnits - sqsOne.producerWriteUnits).toBeGreaterThan(
      snsFive.producerWriteUnits - snsOne.producerWriteUnits,
    );
    for (const capacity of [sqsOne, sqsFive, snsOne, snsFive]) {
      const sum = capacity.lines.reduce((total, l) => total + l.writeUnits, 0);
      expect(capacity.writeUnits).toBeCloseTo(sum, 10);
      expect(capacity.confirmedRows).toBe(capacity.totalRows);
    }
  });
});

describe('fanOutMonthlyCost', () => {
  const usage = (subscribers: number, outboxRows: number): FanOutUsage => ({
    subscribers,
    writeUnits: 20,
    readUnits: 1,
    outboxRows,
    retainedBytes: 2_000,
    messageBytes: 300,
  });

  it('bills relay sends per subscriber queue with rows per delivery, and publishes instead with SNS', () => {
    const sqs = fanOutMonthlyCost(10_000_000, usage(5, 5), 'sqs');
    const sns = fanOutMonthlyCost(10_000_000, usage(5, 1), 'sns');

    expect(sqs['SQS: relay sends']).toBeGreaterThan(
      fanOutMonthlyCost(10_000_000, usage(1, 1), 'sqs')['SQS: relay sends'] ?? 0,
    );
    expect(sns['SQS: relay sends']).toBe(0);
    expect(sns['SNS publishes']).toBeGreaterThan(0);
    expect(sqs['SNS publishes']).toBeUndefined();
    // Same subscribers, same queues: their requests cost the same whichever way the messages arrive.
    expect(sns['SQS: subscriber and receipt queues']).toBe(sqs['SQS: subscriber and receipt queues']);
  });
});

describe('memorySqsClient', () => {
  it('answers SendMessageBatch from the queues and refuses any other command by name', async () => {
    const queues = new MemoryQueues({ 'memory://q': { visibilityTimeoutMs: 1_000 } }, () => new Date());
    const requests: string[] = [];
    const client = memorySqsClient(queues, { latencyMs: 0, onRequest: (url) => requests.push(url) });

    const sent = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: 'memory://q',
        Entries: [
          {
            Id: 'a',
            MessageBody: 'hello',
            MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } },
          },
        ],
      }),
    );

    expect(sent.Successful?.map((entry) => entry.Id)).toEqual(['a']);
    expect(queues.peek('memory://q')).toEqual([
      expect.objectContaining({ body: 'hello', attributes: { k: 'v' } }),
    ]);
    expect(requests).toEqual(['memory://q']);
    await expect(
      client.send(new SendMessageCommand({ QueueUrl: 'memory://q', MessageBody: 'x' })),
    ).rejects.toThrow('SendMessageCommand');
  });
});

describe('bench section: fanout', () => {
  let section: BenchSection;

  beforeAll(async () => {
    section = await measureFanOut({
      size: 'tiny',
      repeats: 1,
      sqsLatencyMs: 2,
      dynamoLatencyMs: 1,
      snsLatencyMs: 2,
    });
  }, 120_000);

  it('has a row per order and per subscriber for each transport and subscriber count, then the ratios', () => {
    const labels = section.rows.map((row) => [row[1], row[2]]);
    expect(labels).toEqual([
      ...[1, 2, 5].flatMap((subscribers) => [
        [subscribers, 'order'],
        ['', 'subscriber'],
      ]),
      ...[1, 2, 5].flatMap((subscribers) => [
        [subscribers, 'order'],
        ['', 'subscriber'],
      ]),
      [1, 'order'],
      [2, 'order'],
      [5, 'order'],
    ]);
    for (const row of section.rows) expect(row).toHaveLength(section.columns.length);
    expect(section.notes.length).toBeGreaterThan(0);
  });

  it('confirms every delivery of every run, each applied once, counted and timed', () => {
    expect(section.targets).toHaveLength(6);
    for (const target of section.targets) expect(target.holds, target.measured).toBe(true);
  });
});
