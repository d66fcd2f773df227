import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { planStockReservation } from '../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { stockConflictKeys } from '../../../functions/inventory/apply-order/stock-conflict-keys.ts';
import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import { createMessage, DynamoOutboxStore, type Envelope, MessageStatus } from '../../../shared/index.ts';
import { type ConflictKeys, consumeSqsEvent, type SqsConsumer } from '../../../shared/lambda/index.ts';
import {
  INBOX_KEYS,
  MemoryDocumentClient,
  MemoryQueues,
  newOutboxItem,
  OUTBOX_KEYS,
} from '../../../shared/memory/index.ts';
import { transactionItemKeys } from '../drill/contention.ts';
import { lambdaContext } from '../local/host/lambda-context.ts';
import {
  type BenchCell,
  type BenchOptions,
  type BenchSection,
  type BenchTarget,
  formatNumber,
  median,
  repeat,
} from './bench-section.ts';
import { type CallCounts, delayedDocumentClient, pause } from './simulated-latency.ts';

/** The consumer mapping's batch size: one SQS batch of orders. */
const BATCH_SIZE = 10;
const QUEUE = 'memory://orderEvents';
const STOCK_PER_SKU = 1_000;
const HOT_SKU = 'SKU-HOT';
/** The speed-up over one record after another that the key-aware consumer should reach on distinct SKUs. */
const TARGET_SPEEDUP = 5;

/** What the batch's orders reserve: one SKU each, or all the same one. */
type Scenario = 'distinct SKUs' | 'one SKU';

/** How the consumer runs a batch's records. */
interface Mode {
  readonly name: string;
  /** Undefined: the consumer's default, every record sharing one key. */
  readonly conflictKeys: ConflictKeys | undefined;
}

const SEQUENTIAL: Mode = { name: 'sequential (default)', conflictKeys: undefined };
const KEY_AWARE: Mode = { name: 'key-aware (SKUs)', conflictKeys: stockConflictKeys };
/** Every record at once, no keys: what key-awareness prevents on a hot SKU. */
const UNKEYED: Mode = { name: 'all at once (no keys)', conflictKeys: () => [] };

/** One consumed batch. */
interface BatchRun {
  readonly ms: number;
  readonly calls: number;
  readonly conflicts: number;
  readonly failed: number;
  /** Every order applied once (inbox rows) and the stock is exactly what the orders left. */
  readonly exact: boolean;
  /** The orders of each SKU were applied in batch order. */
  readonly inOrder: boolean;
}

/**
 * Section 2: one SQS batch of `order.created` messages through `consumeSqsEvent` with the example's real plan,
 * over in-memory tables whose every call takes `dynamoLatencyMs` and where concurrent transactions on one item
 * cancel each other as DynamoDB does: the default consumer (one record after another) against the key-aware one
 * (the order's SKUs as conflict keys), on ten distinct SKUs and on ten orders of one SKU.
 */
export async function measureConsumer(options: BenchOptions): Promise<BenchSection> {
  const latencyMs = options.dynamoLatencyMs;
  const measure = async (scenario: Scenario, mode: Mode): Promise<Measured> => ({
    scenario,
    mode,
    runs: await repeat(options.repeats, () => consumeOneBatch({ scenario, mode, latencyMs })),
  });
  const distinctSequential = await measure('distinct SKUs', SEQUENTIAL);
  const distinctKeyAware = await measure('distinct SKUs', KEY_AWARE);
  const hotSequential = await measure('one SKU', SEQUENTIAL);
  const hotKeyAware = await measure('one SKU', KEY_AWARE);
  const hotUnkeyed = await measure('one SKU', UNKEYED);

  const speedup = msOf(distinctSequential) / msOf(distinctKeyAware);
  const hotOrderKept = hotKeyAware.runs.every((run) => run.exact && run.inOrder);
  const targets: BenchTarget[] = [
    {
      name: 'key-aware consumer, 10 distinct SKUs',
      measured: `${formatNumber(speedup, 1)}× sequential`,
      target: `≥ ${TARGET_SPEEDUP}× sequential`,
      holds: speedup >= TARGET_SPEEDUP,
    },
    {
      name: 'key-aware consumer, 10 orders of one SKU',
      measured: `${conflictsOf(hotKeyAware)} TransactionConflict (sequential ${conflictsOf(hotSequential)})`,
      target: 'no more than sequential',
      holds: conflictsOf(hotKeyAware) <= conflictsOf(hotSequential),
    },
    {
      name: 'key-aware consumer, one SKU: applied once each, in batch order',
      measured: hotOrderKept ? 'every run' : 'not in every run',
      target: 'every run',
      holds: hotOrderKept,
    },
  ];
  return {
    title: `Consumer: one SQS batch of ${BATCH_SIZE} order.created messages`,
    columns: [
      'batch',
      'consumer',
      'ms per batch',
      'messages/s',
      'DynamoDB calls',
      'TransactionConflict (all runs)',
      'failed records (all runs)',
      'applied once, stock exact',
      'SKU order = batch order',
      '× sequential',
    ],
    rows: [
      row(distinctSequential, distinctSequential),
      row(distinctKeyAware, distinctSequential),
      row(hotSequential, hotSequential),
      row(hotKeyAware, hotSequential),
      row(hotUnkeyed, hotSequential),
    ],
    targets,
    notes: [
      `consumeSqsEvent with planStockReservation and a DynamoOutboxStore confirmer over in-memory tables; every DynamoDB call (transaction, confirm, cancelled try) waits ${latencyMs} ms; median of ${options.repeats} run(s).`,
      'A transaction touching an item another in-flight transaction holds (from its call to its answer) is cancelled with TransactionConflict, as DynamoDB does; the consumer retries it with its jittered backoff.',
      'Key-aware: conflictKeys = the order’s SKUs (the example’s stockConflictKeys); records sharing a SKU run in batch order, the others at once.',
    ],
  };
}

/** The runs of one scenario under one mode. */
interface Measured {
  readonly scenario: Scenario;
  readonly mode: Mode;
  readonly runs: readonly BatchRun[];
}

function msOf(measured: Measured): number {
  return median(measured.runs.map((run) => run.ms));
}

function conflictsOf(measured: Measured): number {
  return measured.runs.reduce((sum, run) => sum + run.conflicts, 0);
}

/** One table row: `measured` beside `baseline`, the sequential consumer on the same batch. */
function row(measured: Measured, baseline: Measured): BenchCell[] {
  const { runs } = measured;
  const ms = msOf(measured);
  return [
    `${BATCH_SIZE} orders, ${measured.scenario}`,
    measured.mode.name,
    formatNumber(ms, 1),
    formatNumber((BATCH_SIZE * 1_000) / ms),
    formatNumber(median(runs.map((run) => run.calls))),
    formatNumber(conflictsOf(measured)),
    formatNumber(runs.reduce((sum, run) => sum + run.failed, 0)),
    runs.every((run) => run.exact) ? 'yes' : 'NO',
    runs.every((run) => run.inOrder) ? 'yes' : 'no',
    `${formatNumber(msOf(baseline) / ms, 1)}×`,
  ];
}

/** One fresh set of tables and one batch of orders consumed by `mode`. */
async function consumeOneBatch(run: {
  readonly scenario: Scenario;
  readonly mode: Mode;
  readonly latencyMs: number;
}): Promise<BatchRun> {
  const memory = new MemoryDocumentClient({
    inventory: { partitionKey: 'sku' },
    inbox: { partitionKey: INBOX_KEYS.partitionKey },
    outbox: { partitionKey: OUTBOX_KEYS.partitionKey },
  });
  const orders = Array.from({ length: BATCH_SIZE }, (_, index) => orderMessage(run.scenario, index));
  const skus = [...new Set(orders.map(skuOf))];
  for (const sku of skus) {
    await memory.send(new PutCommand({ TableName: 'inventory', Item: { sku, available: STOCK_PER_SKU } }));
  }
  for (const message of orders) {
    const item = { ...newOutboxItem(message, { now: new Date() }), status: MessageStatus.SENT };
    await memory.send(new PutCommand({ TableName: 'outbox', Item: item }));
  }
  // The order in which each SKU's stock was decremented, to compare with the batch.
  const appliedPerSku = new Map<string, string[]>();
  memory.onChange((change) => {
    if (change.tableName !== 'inbox' || change.eventName !== 'INSERT' || !change.newImage) return;
    const message = orders.find((order) => order.messageId === change.newImage?.messageId);
    if (message === undefined) return;
    appliedPerSku.set(skuOf(message), [...(appliedPerSku.get(skuOf(message)) ?? []), message.messageId]);
  });

  const counts: CallCounts = { calls: 0 };
  const contention = { conflicts: 0 };
  const client = inFlightConflicts(
    delayedDocumentClient(memory.asDocumentClient(), { latencyMs: run.latencyMs, counts }),
    { latencyMs: run.latencyMs, counts, contention },
  );
  const consumer: SqsConsumer = {
    plan: planStockReservation('inventory', () => new Date()),
    deps: {
      client,
      inboxTable: 'inbox',
      confirmer: new DynamoOutboxStore({ client, tableName: 'outbox', actor: 'consumer' }),
      clock: () => new Date(),
    },
    logger: { info: () => {}, warn: () => {} },
    ...(run.mode.conflictKeys === undefined ? {} : { conflictKeys: run.mode.conflictKeys }),
  };
  const records = await queuedRecords(orders);
  const context = lambdaContext({
    functionName: 'inventoryConsumer',
    memoryMb: 256,
    timeoutSeconds: 30,
    requestId: 'bench',
    startedAt: Date.now(),
    now: () => Date.now(),
  });

  const started = performance.now();
  const { response } = await consumeSqsEvent({ Records: records }, context, consumer);
  const ms = performance.now() - started;

  const failed = response.batchItemFailures.length;
  const applied = [...appliedPerSku.values()].flat();
  const stockExact = await Promise.all(
    skus.map(async (sku) => {
      const ordered = orders.filter((order) => skuOf(order) === sku).length;
      const item = await memory
        .asDocumentClient()
        .send(new GetCommand({ TableName: 'inventory', Key: { sku } }));
      return item.Item?.available === STOCK_PER_SKU - ordered;
    }),
  );
  const inOrder = skus.every((sku) => {
    const batchOrder = orders.filter((order) => skuOf(order) === sku).map((order) => order.messageId);
    return JSON.stringify(appliedPerSku.get(sku) ?? []) === JSON.stringify(batchOrder);
  });
  return {
    ms,
    calls: counts.calls,
    conflicts: contention.conflicts,
    failed,
    exact: failed === 0 && applied.length === BATCH_SIZE && stockExact.every(Boolean),
    inOrder,
  };
}

/** An `order.created` message for one unit of a SKU: its own per order, or the hot one. */
function orderMessage(scenario: Scenario, index: number): Envelope {
  const orderId = `order-${String(index + 1).padStart(3, '0')}`;
  const sku = scenario === 'one SKU' ? HOT_SKU : `SKU-${String(index + 1).padStart(3, '0')}`;
  return createMessage({
    topic: ORDER_CREATED,
    aggregateId: orderId,
    payload: { orderId, customerId: 'customer-1', items: [{ sku, quantity: 1 }] },
  });
}

function skuOf(message: Envelope): string {
  return (message.payload as { items: { sku: string }[] }).items[0]?.sku ?? '';
}

/** The orders as SQS delivers them: one batch received from an in-memory queue. */
async function queuedRecords(orders: readonly Envelope[]): Promise<SQSRecord[]> {
  const queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, () => new Date());
  await queues.publishBatch(QUEUE, orders);
  return queues.receive(QUEUE, BATCH_SIZE);
}

/**
 * DynamoDB's optimistic concurrency over a client whose calls take time: a transaction holds its items from
 * its call to its answer, and one that touches an item another in-flight transaction holds is cancelled with
 * TransactionConflict after a round trip, writing nothing.
 */
function inFlightConflicts(
  client: DynamoDBDocumentClient,
  options: {
    readonly latencyMs: number;
    readonly counts: CallCounts;
    readonly contention: { conflicts: number };
  },
): DynamoDBDocumentClient {
  const held = new Set<string>();
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: unknown) => {
        if (!(command instanceof TransactWriteCommand)) return send(command);
        const keys = transactionItemKeys(command.input);
        if (keys.some((key) => held.has(key))) {
          options.contention.conflicts += 1;
          options.counts.calls += 1;
          const reasons = keys.map((key) => ({ Code: held.has(key) ? 'TransactionConflict' : 'None' }));
          await pause(options.latencyMs);
          throw new TransactionCanceledException({
            message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
            $metadata: {},
            CancellationReasons: reasons,
          });
        }
        for (const key of keys) held.add(key);
        try {
          return await send(command);
        } finally {
          for (const key of keys) held.delete(key);
        }
      };
    },
  });
}
