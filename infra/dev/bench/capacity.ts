import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import { createMessage, type OrderingByTopic, writeWithOutbox } from '../../../shared/index.ts';
import { MemoryDocumentClient } from '../../../shared/memory/index.ts';
import { type BenchOptions, type BenchSection, formatNumber } from './bench-section.ts';
import { type CapacityLine, CapacityMeter } from './capacity-meter.ts';
import {
  EXAMPLE_ORDERING,
  EXAMPLE_TABLES,
  ExamplePipeline,
  type SqsRequestCounts,
} from './example-pipeline.ts';
import { countFanOut, writeUnitsByActor } from './fan-out-run.ts';

/** Target of the happy path of one order, end to end. */
export const WRITE_UNITS_PER_ORDER_TARGET = 10;
/** Target of SQS requests per message, batching counted. */
export const SQS_REQUESTS_PER_MESSAGE_TARGET = 0.5;

/** What one order's happy path costs, per order, from a run of many. */
export interface OrderCapacity {
  readonly orders: number;
  /** Per actor and table or index, units per order. */
  readonly lines: readonly CapacityLine[];
  readonly writeUnitsPerOrder: number;
  readonly readUnitsPerOrder: number;
  /** SQS requests per message, by kind. */
  readonly sqsPerMessage: Readonly<SqsRequestCounts>;
  readonly sqsRequestsPerMessage: number;
}

/**
 * Places `orders` single-line orders through the example (POST → relay → consumer → CONFIRMED) on in-memory
 * tables whose indexes are projected as deployed, and counts every capacity unit and SQS request they cost.
 */
export async function countOrderCapacity(orders: number, ordering?: OrderingByTopic): Promise<OrderCapacity> {
  let meter: CapacityMeter | undefined;
  const pipeline = new ExamplePipeline({
    client: (client, actor) => (meter as CapacityMeter).client(client, actor),
    ...(ordering === undefined ? {} : { ordering }),
  });
  meter = new CapacityMeter(pipeline.memory, EXAMPLE_TABLES);
  const skus = Array.from({ length: orders }, (_, n) => `SKU-${n}`);
  await pipeline.stock(skus, 1_000);
  // Stocking is set-up, not the order's cost: count from here.
  meter = new CapacityMeter(pipeline.memory, EXAMPLE_TABLES);
  for (const sku of skus) await pipeline.placeOrder([{ sku, quantity: 1 }]);
  const sent = await pipeline.relayAll();
  const consumed = await pipeline.consumeAll();
  if (sent !== orders || consumed !== orders) {
    throw new Error(`capacity run incomplete: ${sent} sent and ${consumed} consumed of ${orders} orders`);
  }
  const perOrder = (value: number) => value / orders;
  const lines = meter.lines().map((line) => ({
    ...line,
    writeUnits: perOrder(line.writeUnits),
    readUnits: perOrder(line.readUnits),
    operations: perOrder(line.operations),
  }));
  const totals = meter.totals();
  const sqsPerMessage = {
    sendMessageBatch: perOrder(pipeline.sqs.sendMessageBatch),
    receiveMessage: perOrder(pipeline.sqs.receiveMessage),
    deleteMessageBatch: perOrder(pipeline.sqs.deleteMessageBatch),
  };
  return {
    orders,
    lines,
    writeUnitsPerOrder: perOrder(totals.writeUnits),
    readUnitsPerOrder: perOrder(totals.readUnits),
    sqsPerMessage,
    sqsRequestsPerMessage:
      sqsPerMessage.sendMessageBatch + sqsPerMessage.receiveMessage + sqsPerMessage.deleteMessageBatch,
  };
}

/** The example's ordered topics with their scope numbered by the sequence table's counter. */
const COUNTED_ORDERING: OrderingByTopic = Object.fromEntries(
  Object.entries(EXAMPLE_ORDERING).map(([topic, ordering]) => [
    topic,
    ordering === 'none' ? ordering : { ...ordering, sequence: 'counter' as const },
  ]),
);

/** What ordering a topic adds per message, in capacity units. */
export interface OrderingCapacity {
  /** The example's way: the seq comes from the order's own version (the byOrderKey entry, the consumer's cursor). */
  readonly versionWriteUnits: number;
  /** Without an aggregate version: the above plus the counter row the writer reads and advances. */
  readonly counterWriteUnits: number;
  readonly counterReadUnits: number;
}

/**
 * Measures what ordering costs per message, side by side: the example's orders with and without ordered topics
 * (seq from the order's version), and one message per aggregate written with the counter row against the same
 * written with a version.
 */
export async function countOrderingCapacity(orders: number): Promise<OrderingCapacity> {
  const unordered = await countOrderCapacity(orders);
  const ordered = await countOrderCapacity(orders, EXAMPLE_ORDERING);
  const writes = async (counter: boolean) => {
    const memory = new MemoryDocumentClient(EXAMPLE_TABLES);
    const meter = new CapacityMeter(memory, EXAMPLE_TABLES);
    const client = meter.client(memory.asDocumentClient(), 'writer');
    for (let n = 0; n < orders; n += 1) {
      const aggregateId = `order-${n}`;
      // The same topics, their scope numbered by the counter instead of the version.
      const ordering = counter ? COUNTED_ORDERING : EXAMPLE_ORDERING;
      await writeWithOutbox(
        { client, outboxTable: 'outbox', sequenceTable: 'sequences', ordering },
        {
          actions: [],
          messages: [createMessage({ topic: ORDER_CREATED, aggregateId, payload: { orderId: aggregateId } })],
          ...(counter ? {} : { aggregateVersions: { [aggregateId]: 1 } }),
        },
      );
    }
    return meter.totals();
  };
  const [withVersion, withCounter] = [await writes(false), await writes(true)];
  const versionWriteUnits = ordered.writeUnitsPerOrder - unordered.writeUnitsPerOrder;
  return {
    versionWriteUnits,
    counterWriteUnits: versionWriteUnits + (withCounter.writeUnits - withVersion.writeUnits) / orders,
    counterReadUnits: (withCounter.readUnits - withVersion.readUnits) / orders,
  };
}

/** Bench section 3: DynamoDB units per table and index, and SQS requests, of one order's happy path. */
export async function measureCapacity(options: BenchOptions): Promise<BenchSection> {
  const orders = options.size === 'tiny' ? 20 : 500;
  const capacity = await countOrderCapacity(orders);
  const ordering = await countOrderingCapacity(orders);
  // The example's own shape: its ordered topics delivered to inventory and loyalty, each confirming by receipt.
  const fanOut = await countFanOut('sqs', 2, orders);
  const perSubscriber = (value: number) => formatNumber(value / fanOut.subscribers, 3);
  const rows = [
    ...capacity.lines.map((line) => [
      line.actor,
      line.target,
      formatNumber(line.writeUnits, 2),
      formatNumber(line.readUnits, 2),
      formatNumber(line.operations, 2),
    ]),
    [
      'all',
      'DynamoDB',
      formatNumber(capacity.writeUnitsPerOrder, 2),
      formatNumber(capacity.readUnitsPerOrder, 2),
      '',
    ],
    ['relay', 'SQS SendMessageBatch', '', '', formatNumber(capacity.sqsPerMessage.sendMessageBatch, 3)],
    [
      'consumer mapping',
      'SQS ReceiveMessage',
      '',
      '',
      formatNumber(capacity.sqsPerMessage.receiveMessage, 3),
    ],
    [
      'consumer mapping',
      'SQS DeleteMessageBatch',
      '',
      '',
      formatNumber(capacity.sqsPerMessage.deleteMessageBatch, 3),
    ],
    [
      'ordered topic, seq from the version',
      'extra per message',
      `+${formatNumber(ordering.versionWriteUnits, 2)}`,
      '+0',
      '',
    ],
    [
      'ordered topic, seq from a counter',
      'extra per message',
      `+${formatNumber(ordering.counterWriteUnits, 2)}`,
      `+${formatNumber(ordering.counterReadUnits, 2)}`,
      '',
    ],
    [
      'fan-out to inventory + loyalty (ordered)',
      'DynamoDB, per order',
      formatNumber(fanOut.writeUnits, 2),
      formatNumber(fanOut.readUnits, 2),
      '',
    ],
    [
      'fan-out, per subscriber',
      'DynamoDB (producer’s share)',
      `${formatNumber(fanOut.writeUnits / fanOut.subscribers, 2)} (${formatNumber(fanOut.producerWriteUnits / fanOut.subscribers, 2)})`,
      formatNumber(fanOut.readUnits / fanOut.subscribers, 2),
      '',
    ],
    ['fan-out, per subscriber', 'relay SQS SendMessageBatch', '', '', perSubscriber(fanOut.relaySends)],
    [
      'fan-out, per subscriber',
      'subscriber queue Receive + Delete',
      '',
      '',
      perSubscriber(fanOut.subscriberQueueRequests),
    ],
    [
      'fan-out, per subscriber',
      'receipt queue Send + Receive + Delete',
      '',
      '',
      perSubscriber(fanOut.receiptQueueRequests),
    ],
  ];
  return {
    title: `Capacity per order: happy path of one single-line order, POST → CONFIRMED (${capacity.orders} orders)`,
    columns: ['actor', 'table / index / API', 'write units', 'read units', 'requests'],
    rows,
    targets: [
      {
        name: 'DynamoDB write units per order',
        measured: formatNumber(capacity.writeUnitsPerOrder, 2),
        target: `≤ ${WRITE_UNITS_PER_ORDER_TARGET}`,
        holds: capacity.writeUnitsPerOrder <= WRITE_UNITS_PER_ORDER_TARGET,
      },
      {
        name: 'SQS requests per message',
        measured: formatNumber(capacity.sqsRequestsPerMessage, 3),
        target: `≤ ${SQS_REQUESTS_PER_MESSAGE_TARGET}`,
        holds: capacity.sqsRequestsPerMessage <= SQS_REQUESTS_PER_MESSAGE_TARGET,
      },
    ],
    notes: [
      'units per order, from the item sizes of this run: 1 KB write units (×2 in a transaction), 4 KB read units (½ eventually consistent), index entries = keys + projection + 100 B, a key change = delete + put',
      'the rows above are an unordered order; ordering a topic adds its byOrderKey index entry and the consumer’s cursor update (same transaction), and without an aggregate version the counter row’s consistent read and conditional update',
      'SQS: the relay sends up to 10 per SendMessageBatch; the consumer mapping receives up to 10 per ReceiveMessage and deletes them in one DeleteMessageBatch (long polling when idle is in the cost model)',
      `fan-out rows: the example’s ordered topics delivered to inventory and loyalty (a row per delivery, confirmed by receipts through the receipts function; the fanout section has the breakdown), ${fanOut.orders} orders; by actor per order: ${writeUnitsByActor(fanOut.lines)}`,
    ],
  };
}
