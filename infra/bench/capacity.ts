import { type BenchOptions, type BenchSection, formatNumber } from './bench-section.ts';
import { type CapacityLine, CapacityMeter } from './capacity-meter.ts';
import { EXAMPLE_TABLES, ExamplePipeline, type SqsRequestCounts } from './example-pipeline.ts';

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
export async function countOrderCapacity(orders: number): Promise<OrderCapacity> {
  let meter: CapacityMeter | undefined;
  const pipeline = new ExamplePipeline({
    client: (client, actor) => (meter as CapacityMeter).client(client, actor),
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

/** Bench section 3: DynamoDB units per table and index, and SQS requests, of one order's happy path. */
export async function measureCapacity(options: BenchOptions): Promise<BenchSection> {
  const capacity = await countOrderCapacity(options.size === 'tiny' ? 20 : 500);
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
      'SQS: the relay sends up to 10 per SendMessageBatch; the consumer mapping receives up to 10 per ReceiveMessage and deletes them in one DeleteMessageBatch (long polling when idle is in the cost model)',
    ],
  };
}
