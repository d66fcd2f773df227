import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { planInventory } from '../../../functions/inventory/apply-order/plan-inventory.ts';
import { cancelOrder } from '../../../functions/orders/cancel-order/cancel-order.ts';
import { createOrder } from '../../../functions/orders/create-order/create-order.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import { dynamoAdminDeps } from '../../../shared/admin/index.ts';
import {
  DynamoOutboxStore,
  MessageStatus,
  type OrderingByTopic,
  type OutboxWriterOptions,
  orderedTopic,
} from '../../../shared/index.ts';
import {
  consumeMetrics,
  consumeSqsEvent,
  relayStreamEvent,
  type SqsConsumer,
  sendMetrics,
} from '../../../shared/lambda/index.ts';
import {
  AUDIT_KEYS,
  DEFAULT_DUE_SHARDS,
  DEFAULT_GAP_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  DEFAULT_SWEEPER_SETTINGS,
  DEFAULT_VISIBILITY_BACKOFF,
  INBOX_KEYS,
  inboxDeliveryCheck,
  MemoryDocumentClient,
  MemoryQueues,
  type MemoryTableSchema,
  OUTBOX_KEYS,
  type RelayDeps,
  sweep,
} from '../../../shared/memory/index.ts';
import { CONSUMER_DEFAULTS, OUTBOX_STREAM_DEFAULTS, QUEUE_DEFAULTS } from '../../constructs/index.ts';
import { toProxyEvent } from '../local/api/api-gateway-event.ts';
import { lambdaContext } from '../local/host/lambda-context.ts';
import { itemKey } from './contention.ts';
import { type DrillConfig, type DrillResult, drillRates, type Progress } from './drill-config.ts';
import {
  conflictingDocumentClient,
  crashingAfterSend,
  crashingSweeperStore,
  FaultInjector,
  faultyConsumerDeps,
  faultyDocumentClient,
  faultyPublisher,
  seededRandom,
} from './faults.ts';
import { type DrillTable, deadLetterCounts, drillResult, ORDER_SCOPE, takeSnapshot } from './invariants.ts';
import { CONSUMER_ACTOR } from './metric-invariants.ts';
import { MetricsTally } from './observed-metrics.ts';
import { DrillOperator } from './operator-actions.ts';
import {
  HOT_SKU,
  hotOrderCount,
  hotOrderItems,
  hotStock,
  IMMEDIATE_CANCEL_SHARE,
  poisonedMessages,
  randomOrderItems,
  skuName,
} from './order-factory.ts';
import { type RogueMessage, rogueOutboxItems } from './rogue-messages.ts';
import { UnreportedCommits } from './unreported-commits.ts';

/** One simulated second per step: the relay, consumer and both sweepers each get a turn. */
const TICK_MS = 1_000;
/** The outbox stream mapping as the construct deploys it: records per batch, retries of a failing batch. */
const STREAM_BATCH_SIZE = OUTBOX_STREAM_DEFAULTS.batchSize;
const STREAM_RETRIES = OUTBOX_STREAM_DEFAULTS.retryAttempts;
/** The consumer's queue as the construct deploys it, and the consumer's mapping and timeout. */
const QUEUE_MAX_RECEIVE_COUNT = QUEUE_DEFAULTS.maxReceiveCount;
const QUEUE_VISIBILITY_TIMEOUT_MS = QUEUE_DEFAULTS.visibilityTimeout.toMilliseconds();
const CONSUMER_BATCH_SIZE = CONSUMER_DEFAULTS.batchSize;
const CONSUMER_TIMEOUT_SECONDS = CONSUMER_DEFAULTS.timeout.toSeconds();
const CONFIRM_DEADLINE_MS = 30_000;
const MAX_SIMULATED_MS = 48 * 3_600_000;
const QUEUE = 'memory://orderEvents';
const DEAD_LETTER_QUEUE = 'memory://orderEvents-dlq';
const TERMINAL: ReadonlySet<string> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);
/** The example's ordering, as the stack configures it: both order topics in scope `order`, default gap timeout. */
const ORDERING: OrderingByTopic = {
  [ORDER_CREATED]: {
    scope: ORDER_SCOPE,
    gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS,
    sequence: 'aggregate-version',
  },
  [ORDER_CANCELLED]: {
    scope: ORDER_SCOPE,
    gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS,
    sequence: 'aggregate-version',
  },
};
/** A later cancel comes 1 to this many simulated seconds after its order was acknowledged. */
const LATE_CANCEL_MAX_TICKS = 60;
/** The stalled order (its create alone poisoned) is cancelled this many ticks after it was acknowledged. */
const STALLED_CANCEL_TICKS = 5;
/** Of the orders neither cancelled by their client nor poisoned, the share whose create an operator cancels at once. */
const OPERATOR_CANCEL_SHARE = 0.1;
/** FAILED messages of poisoned orders an operator replays once their cause is fixed (SQS takes them then). */
const OPERATOR_REPLAYS = 3;
/** How long the operator's cancelled messages are kept (the admin API's default retention). */
const OPERATOR_RETENTION_DAYS = 30;

/**
 * The tables of the example as the stack creates them: the library's outbox (with its sparse due index, its
 * aggregate index and its order index), inbox and audit trail, and the example's orders (keyed `orderId`) and
 * inventory (keyed `sku`).
 */
const TABLES: Readonly<Record<DrillTable | 'audit', MemoryTableSchema>> = {
  orders: { partitionKey: 'orderId' },
  audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
  inventory: { partitionKey: 'sku' },
  outbox: {
    partitionKey: OUTBOX_KEYS.partitionKey,
    globalIndexes: [
      {
        name: OUTBOX_KEYS.dueIndex.name,
        partitionKey: OUTBOX_KEYS.dueIndex.partitionKey,
        sortKey: OUTBOX_KEYS.dueIndex.sortKey,
      },
      {
        name: OUTBOX_KEYS.aggregateIndex.name,
        partitionKey: OUTBOX_KEYS.aggregateIndex.partitionKey,
        sortKey: OUTBOX_KEYS.aggregateIndex.sortKey,
      },
      {
        name: OUTBOX_KEYS.orderIndex.name,
        partitionKey: OUTBOX_KEYS.orderIndex.partitionKey,
        sortKey: OUTBOX_KEYS.orderIndex.sortKey,
        projection: OUTBOX_KEYS.orderIndex.projection,
      },
    ],
  },
  inbox: { partitionKey: INBOX_KEYS.partitionKey },
};

/**
 * The scale drill: the same cores (createOrder, relayStreamEvent, consumeSqsEvent, sweep) and the same
 * DynamoDB update expressions as production, run against in-memory tables and queues with the same fault
 * injection as the moto drill, on a simulated clock so that hours of backoff pass in seconds. Halfway through
 * come the burst on the hot SKU, whose transactions are cancelled with TransactionConflict at the configured
 * rate, and the rogue messages written behind the writer's back.
 */
export async function runMemoryDrill(config: DrillConfig, progress: Progress): Promise<DrillResult> {
  let simulatedNow = Date.parse('2030-01-01T00:00:00.000Z');
  const startedAt = simulatedNow;
  const clock = () => new Date(simulatedNow);
  const random = seededRandom(config.seed);
  const faults = new FaultInjector(drillRates(config), seededRandom(config.seed + 1));

  const memory = new MemoryDocumentClient(TABLES, { clock });
  const client = faultyDocumentClient(memory.asDocumentClient(), faults);
  const queues = new MemoryQueues(
    {
      [QUEUE]: {
        visibilityTimeoutMs: QUEUE_VISIBILITY_TIMEOUT_MS,
        maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
        deadLetterQueueUrl: DEAD_LETTER_QUEUE,
      },
      [DEAD_LETTER_QUEUE]: { visibilityTimeoutMs: 30_000 },
    },
    clock,
  );

  // The outbox stream: INSERTs only (the mapping's filter), with increasing sequence numbers.
  const stream: DynamoDBRecord[] = [];
  const open = new Set<string>();
  const ledger = new SequenceLedger();
  let sequence = 0;
  memory.onChange((change) => {
    if (change.tableName === 'inbox') {
      ledger.parkedRow(change.newImage ?? change.oldImage, change.newImage !== undefined);
      return;
    }
    if (change.tableName !== 'outbox' || !change.newImage) return;
    const messageId = String(change.newImage.messageId);
    ledger.message(change.newImage);
    if (TERMINAL.has(String(change.newImage.status))) open.delete(messageId);
    else open.add(messageId);
    if (change.eventName === 'INSERT') {
      sequence += 1;
      stream.push(streamRecord(change.newImage, sequence, clock()));
    }
  });

  const initialStock = new Map<string, number>(
    Array.from({ length: config.skus }, (_, index) => [skuName(index), config.initialStock]),
  );
  initialStock.set(HOT_SKU, hotStock(config.orders));
  for (const [sku, available] of initialStock) {
    await memory.send(new PutCommand({ TableName: 'inventory', Item: { sku, available } }));
  }

  // Each function's store names it in the history, as the handler factories' stores do.
  const store = (actor: string) =>
    new DynamoOutboxStore({ client, tableName: 'outbox', confirmDeadlineMs: CONFIRM_DEADLINE_MS, actor });
  const poisoned = new Set<string>();
  const stalled = new Set<string>();
  // Messages an operator fixed before replaying them: SQS takes them from then on.
  const healed = new Set<string>();
  const relayDeps: RelayDeps = {
    publisher: faultyPublisher(
      queues,
      faults,
      poisonedMessages({ orders: poisoned, createsOf: stalled, healed }),
    ),
    store: crashingAfterSend(store('relay'), faults),
    queueFor: (topic) => (topic === ORDER_CREATED || topic === ORDER_CANCELLED ? QUEUE : undefined),
    retryPolicyFor: () => DEFAULT_RETRY_POLICY,
    clock,
    random,
  };
  const writer: OutboxWriterOptions = { client, outboxTable: 'outbox', ordering: ORDERING };
  // What the functions would have published, from the same cores and the same functions as the handler factories.
  const metrics = new MetricsTally();
  const commits = new UnreportedCommits();
  let deliveries = 0;
  // The consumer's transactions on the hot SKU meet contention: TransactionConflict at the configured rate.
  const consumerClient = faultyDocumentClient(
    conflictingDocumentClient(
      memory.asDocumentClient(),
      faults,
      new Set([itemKey('inventory', { sku: HOT_SKU })]),
    ),
    faults,
  );
  const consumer: SqsConsumer = {
    plan: planInventory('inventory', clock),
    deps: faultyConsumerDeps(
      {
        client: consumerClient,
        inboxTable: 'inbox',
        confirmer: store(CONSUMER_ACTOR),
        clock,
        random,
        // The clock is simulated: the consumer's few milliseconds between conflict retries pass at once.
        sleep: async () => {},
      },
      faults,
      commits,
    ),
    // The consumer logs one line per record it handled: consumed, or failed (whatever became of it).
    logger: commits.logger(() => {
      deliveries += 1;
    }),
    failures: {
      queues,
      sourceQueueUrl: QUEUE,
      deadLetterQueueUrl: DEAD_LETTER_QUEUE,
      maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
      backoff: DEFAULT_VISIBILITY_BACKOFF,
      random,
    },
  };
  const quietLogger = { info: () => {}, warn: () => {} };
  const context = (name: string) =>
    lambdaContext({
      functionName: name,
      memoryMb: CONSUMER_DEFAULTS.memorySize,
      timeoutSeconds: CONSUMER_TIMEOUT_SECONDS,
      requestId: `r-${simulatedNow}`,
      startedAt: simulatedNow,
      now: () => simulatedNow,
    });

  // The operator acts through the admin core on tables without injected faults (its own calls are not the drill's).
  let auditIds = 0;
  const operator = new DrillOperator(
    dynamoAdminDeps({
      client: memory.asDocumentClient(),
      outboxTable: 'outbox',
      auditTable: 'audit',
      deliveryInboxes: { [ORDER_CREATED]: 'inbox', [ORDER_CANCELLED]: 'inbox' },
      orderedTopics: ORDERING,
      dueShards: DEFAULT_DUE_SHARDS,
      retentionDays: OPERATOR_RETENTION_DAYS,
      clock,
      newId: () => {
        auditIds += 1;
        return `audit-${String(auditIds).padStart(10, '0')}`;
      },
    }),
    (messageId) => healed.add(messageId),
  );
  const skipTargets = new Set<string>();
  let replays = 0;
  let eraseTarget = false;
  let firstWithdrawn = false;
  const acknowledged = new Set<string>();
  const cancelled = new Set<string>();
  // Cancels to send, by the tick they are due (a cancel retried after a throttle is due again at once).
  const cancels: { orderId: string; dueAt: number }[] = [];
  let tick = 0;
  const pending: { orderId: string; body: string }[] = [];
  const writeStarted = performance.now();
  let written = 0;
  const addOrder = (items: readonly { sku: string; quantity: number }[]): string => {
    written += 1;
    const orderId = `order-${String(written).padStart(7, '0')}`;
    // The first order's create alone is poisoned and the order is cancelled: its cancel must stall behind it. The
    // second is poisoned the same way, and the operator skips its FAILED create: its cancel must then be applied.
    if (written === 1) stalled.add(orderId);
    else if (written === 2) {
      stalled.add(orderId);
      skipTargets.add(orderId);
    } else if (random() < config.poisonRate) poisoned.add(orderId);
    pending.push({
      orderId,
      body: JSON.stringify({ orderId, customerId: `customer-${written % 97}`, items }),
    });
    return orderId;
  };
  const hotOrders = new Set<string>();
  const rogueMessages = new Map<string, RogueMessage>();
  const regularOrders = config.orders - hotOrderCount(config.orders);
  let regularWritten = 0;
  let burstWritten = false;
  const ordersPerTick = Math.max(1, Math.ceil(regularOrders / 50));
  let writeMs = 0;
  let streamRetries = 0;
  let sweeperErrors = 0;
  let orderingGaps = 0;

  while (simulatedNow - startedAt < MAX_SIMULATED_MS) {
    // 1. Clients create orders (retrying what failed, as a client retries a 5xx with the same order id).
    for (let n = 0; n < ordersPerTick && regularWritten < regularOrders; n += 1) {
      regularWritten += 1;
      addOrder(randomOrderItems(random, config.skus));
    }
    // Halfway through: the burst on the hot SKU, all in this one tick, and the rogue messages beside it, written
    // straight into the outbox table (no faults: they are what an older writer left there).
    if (!burstWritten && regularWritten >= regularOrders / 2) {
      burstWritten = true;
      for (let n = regularOrders; n < config.orders; n += 1) hotOrders.add(addOrder(hotOrderItems(random)));
      for (const rogue of rogueOutboxItems({ now: clock(), dueShards: DEFAULT_DUE_SHARDS })) {
        rogueMessages.set(rogue.messageId, rogue.expected);
        await memory.send(new PutCommand({ TableName: 'outbox', Item: rogue.item }));
      }
    }
    const retry: typeof pending = [];
    for (const request of pending.splice(0)) {
      try {
        const response = await createOrder(apiEvent(request.body, clock()), {
          writer,
          ordersTable: 'orders',
          clock,
          newOrderId: () => request.orderId,
        });
        if (response.statusCode !== 201 && response.statusCode !== 409)
          throw new Error(`unexpected ${response.statusCode}: ${response.body}`);
        acknowledged.add(request.orderId);
        const dueAt = cancelTick({
          orderId: request.orderId,
          tick,
          stalled,
          random,
          cancelRate: config.cancelRate,
        });
        if (dueAt !== undefined) cancels.push({ orderId: request.orderId, dueAt });
        const { orderId } = request;
        const { messageId } = JSON.parse(response.body) as { messageId?: string };
        if (messageId !== undefined && response.statusCode === 201) {
          if (skipTargets.has(orderId)) operator.skipWhenFailed(orderId, messageId);
          else if (poisoned.has(orderId) && replays < OPERATOR_REPLAYS) {
            replays += 1;
            operator.replayWhenFailed(orderId, messageId);
          } else if (dueAt === undefined && !poisoned.has(orderId) && !hotOrders.has(orderId)) {
            // An order that stays as written: the operator withdraws some at once (before the relay reads the
            // stream), and erases one once it has settled.
            const withdraw = random() < OPERATOR_CANCEL_SHARE;
            // The first such order always: a small drill then withdraws one too.
            if (withdraw || !firstWithdrawn) {
              firstWithdrawn = true;
              await operator.cancelAfterWrite(messageId);
            } else if (!eraseTarget) {
              eraseTarget = true;
              operator.eraseWhenConfirmed(orderId, messageId);
            }
          }
        }
      } catch (error) {
        if (!(error instanceof Error) || error.name !== 'ProvisionedThroughputExceededException') throw error;
        retry.push(request);
      }
    }
    pending.push(...retry);
    // Clients cancel some acknowledged orders through the cancel route: some right after the create (in this
    // tick, so that both messages often travel together), the others later.
    const due = cancels.filter((cancel) => cancel.dueAt <= tick);
    cancels.splice(0, cancels.length, ...cancels.filter((cancel) => cancel.dueAt > tick));
    for (const cancel of due) {
      try {
        const response = await cancelOrder(cancelEvent(cancel.orderId, clock()), {
          writer,
          ordersTable: 'orders',
          clock,
          retryClock: { sleep: async () => {}, random },
        });
        if (response.statusCode !== 202 && response.statusCode !== 409)
          throw new Error(`unexpected ${response.statusCode}: ${response.body}`);
        cancelled.add(cancel.orderId);
      } catch (error) {
        if (!(error instanceof Error) || error.name !== 'ProvisionedThroughputExceededException') throw error;
        cancels.push({ orderId: cancel.orderId, dueAt: tick + 1 });
      }
    }
    if (written === config.orders && pending.length === 0 && cancels.length === 0 && writeMs === 0)
      writeMs = performance.now() - writeStarted;

    // 2. The stream relay: batches from the head, retried from the first failed record, bounded.
    let headRetries = 0;
    while (stream.length > 0) {
      const batch = takeBatch(stream, faults);
      if (batch.length === 0) continue;
      const event: DynamoDBStreamEvent = { Records: batch };
      const { response, report } = await relayStreamEvent(event, relayDeps, quietLogger);
      metrics.add(sendMetrics(report.topics));
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      const firstFailed = batch.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
      if (firstFailed === -1) continue;
      streamRetries += 1;
      headRetries += 1;
      // Lambda checkpoints before the first failed record and retries from it; after the mapping's retries
      // the records go to the on-failure destination (metadata only) and the sweeper must find them.
      if (headRetries <= STREAM_RETRIES) stream.unshift(...batch.slice(firstFailed));
      else headRetries = 0;
      break;
    }

    // 3. The consumer: every visible message, in batches as its mapping takes them, with partial batch responses.
    for (let batches = 0; batches < 1_000; batches += 1) {
      const records = queues.receive(QUEUE, CONSUMER_BATCH_SIZE);
      if (records.length === 0) break;
      const event: SQSEvent = { Records: records };
      const { response, topics } = await commits.invocation(() =>
        consumeSqsEvent(event, context('inventoryConsumer'), consumer),
      );
      metrics.add(consumeMetrics(topics));
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      for (const record of records)
        if (!failed.has(record.messageId)) queues.delete(QUEUE, record.receiptHandle);
    }

    // 4. Two sweepers at once, each one round of its loop per simulated second.
    const runs = await Promise.allSettled(
      ['sweeper-a', 'sweeper-b'].map((owner) => {
        let rounds = 0;
        return sweep({
          ...relayDeps,
          store: crashingSweeperStore(crashingAfterSend(store('sweeper'), faults), faults, random),
          owner: `${owner}-${simulatedNow}`,
          deliveryCheckFor: () => inboxDeliveryCheck(client, 'inbox'),
          orderingFor: (topic) => orderedTopic(ORDERING, topic),
          remainingMs: () => (rounds++ === 0 ? Number.MAX_SAFE_INTEGER : 0),
          sleep: async () => {},
          settings: { ...DEFAULT_SWEEPER_SETTINGS, stopBeforeMs: 0 },
        });
      }),
    );
    for (const run of runs) {
      if (run.status === 'rejected') sweeperErrors += 1;
      else {
        sweeperErrors += run.value.errors;
        orderingGaps += Object.values(run.value.orderingGaps).reduce((sum, gaps) => sum + gaps, 0);
        metrics.add(sendMetrics(run.value.topics));
      }
    }

    // 5. The operator: each action whose message has reached its status.
    await operator.step();

    simulatedNow += TICK_MS;
    tick += 1;
    // Open counts messages (a cancelled order has two), so it can outnumber the orders acknowledged so far.
    const settled = Math.max(0, acknowledged.size - open.size);
    progress(settled, config.orders, `written ${acknowledged.size}, open ${open.size}`);
    // Settled: nothing left open but the messages that wait, as designed, behind a FAILED predecessor.
    if (
      written === config.orders &&
      pending.length === 0 &&
      cancels.length === 0 &&
      operator.done() &&
      [...open].every((messageId) => ledger.stalled(messageId))
    )
      break;
  }
  const settleMs = performance.now() - writeStarted - writeMs;

  const snapshot = await takeSnapshot((table) => memory.items(table), {
    initialStock,
    poisonedOrders: poisoned,
    stalledOrders: stalled,
    acknowledgedOrders: acknowledged,
    cancelledOrders: cancelled,
    hotOrders,
    rogueMessages,
    deadLetters: queues.peek(DEAD_LETTER_QUEUE),
    maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
    operator: operator.facts(),
  });
  return drillResult(
    {
      mode: 'memory',
      config,
      injected: { ...faults.injected },
      deliveries,
      writeMs,
      settleMs,
      simulatedMs: simulatedNow - startedAt,
      metrics: metrics.totals(),
      unreportedCommits: commits.counts(),
    },
    snapshot,
    {
      'stream batch retries': streamRetries,
      'sweeper steps that failed (left to the lease)': sweeperErrors,
      'ordering gaps found by the sweepers (parked past the gap timeout)': orderingGaps,
      'hot SKU orders (one burst)': hotOrders.size,
      'TransactionConflict cancellations (injected)': faults.injected.hotSkuConflict,
      'dead letters sent by the consumer, with its reason': deadLetterCounts(snapshot.deadLetters).byConsumer,
      "dead letters moved by the queue's redrive policy (no reason)": deadLetterCounts(snapshot.deadLetters)
        .byRedrivePolicy,
    },
  );
}

/** Takes one stream batch from the head; each record may be dropped (never delivered) by the fault plan. */
function takeBatch(stream: DynamoDBRecord[], faults: FaultInjector): DynamoDBRecord[] {
  return stream.splice(0, STREAM_BATCH_SIZE).filter(() => !faults.roll('droppedStreamRecord'));
}

function streamRecord(image: Record<string, unknown>, sequence: number, now: Date): DynamoDBRecord {
  const newImage = marshall(image, { removeUndefinedValues: true }) as Record<string, SdkAttributeValue>;
  return {
    eventID: `memory-${sequence}`,
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    eventVersion: '1.1',
    awsRegion: 'memory',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(now.getTime() / 1000),
      Keys: { messageId: { S: String(image.messageId) } },
      NewImage: newImage as Record<string, AttributeValue>,
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: 1,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: 'arn:aws:dynamodb:memory:000000000000:table/outbox/stream/memory',
  };
}

/**
 * When a client cancels the order it was just acknowledged, in ticks; undefined when it does not. The stalled order
 * is always cancelled, a little later (its create is still in its retries then, so the cancel goes out alone).
 */
function cancelTick(of: {
  readonly orderId: string;
  readonly tick: number;
  readonly stalled: ReadonlySet<string>;
  readonly random: () => number;
  readonly cancelRate: number;
}): number | undefined {
  if (of.stalled.has(of.orderId)) return of.tick + STALLED_CANCEL_TICKS;
  if (of.random() >= of.cancelRate) return undefined;
  if (of.random() < IMMEDIATE_CANCEL_SHARE) return of.tick;
  return of.tick + 1 + Math.floor(of.random() * LATE_CANCEL_MAX_TICKS);
}

/**
 * What the drill needs of the outbox and inbox tables while it runs, to tell when it has settled: each ordered
 * message's status by its place in its sequence, and which messages the consumer holds in parked rows.
 */
class SequenceLedger {
  readonly #statusOf = new Map<string, string>();
  readonly #placeOf = new Map<string, { readonly orderKey: string; readonly seq: number }>();
  readonly #bySequence = new Map<string, string>();
  readonly #parked = new Set<string>();

  /** Notes a message's new image. */
  message(image: Record<string, unknown>): void {
    const messageId = String(image.messageId);
    this.#statusOf.set(messageId, String(image.status));
    if (typeof image.orderKey === 'string' && typeof image.seq === 'number') {
      this.#placeOf.set(messageId, { orderKey: image.orderKey, seq: image.seq });
      this.#bySequence.set(`${image.orderKey}#${image.seq}`, messageId);
    }
  }

  /** Notes a parked row written (`present`) or deleted. */
  parkedRow(row: Record<string, unknown> | undefined, present: boolean): void {
    if (typeof row?.parkedMessageId !== 'string') return;
    if (present) this.#parked.add(row.parkedMessageId);
    else this.#parked.delete(row.parkedMessageId);
  }

  /**
   * Whether an unsettled message waits, as designed, for a FAILED predecessor: held PENDING by the relay and the
   * sweeper, or delivered and parked by the consumer.
   */
  stalled(messageId: string): boolean {
    const place = this.#placeOf.get(messageId);
    if (place === undefined || place.seq <= 1) return false;
    const predecessor = this.#bySequence.get(`${place.orderKey}#${place.seq - 1}`);
    if (predecessor === undefined || this.#statusOf.get(predecessor) !== MessageStatus.FAILED) return false;
    return this.#statusOf.get(messageId) === MessageStatus.PENDING || this.#parked.has(messageId);
  }
}

function cancelEvent(orderId: string, now: Date) {
  return toProxyEvent(
    {
      method: 'POST',
      path: `/orders/${orderId}/cancel`,
      query: '',
      rawHeaders: [],
      body: Buffer.alloc(0),
      sourceIp: '127.0.0.1',
    },
    {
      resource: '/orders/{orderId}/cancel',
      pathParameters: { orderId },
      requestId: 'drill',
      stage: 'drill',
      accountId: '000000000000',
      apiId: 'drill',
      domainName: 'localhost',
      now,
    },
  );
}

function apiEvent(body: string, now: Date) {
  return toProxyEvent(
    {
      method: 'POST',
      path: '/orders',
      query: '',
      rawHeaders: ['content-type', 'application/json'],
      body: Buffer.from(body),
      sourceIp: '127.0.0.1',
    },
    {
      resource: '/orders',
      pathParameters: {},
      requestId: 'drill',
      stage: 'drill',
      accountId: '000000000000',
      apiId: 'drill',
      domainName: 'localhost',
      now,
    },
  );
}
