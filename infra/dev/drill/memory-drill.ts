import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { planInventory } from '../../../functions/inventory/apply-order/plan-inventory.ts';
import { stockConflictKeys } from '../../../functions/inventory/apply-order/stock-conflict-keys.ts';
import { customerConflictKeys } from '../../../functions/loyalty/apply-order/customer-conflict-keys.ts';
import { planLoyalty } from '../../../functions/loyalty/apply-order/plan-loyalty.ts';
import { LOYALTY_TABLE_KEY } from '../../../functions/loyalty/loyalty-table.ts';
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
  applyReceiptEvent,
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
  DynamoDeliveryConfirmer,
  INBOX_KEYS,
  MemoryDocumentClient,
  MemoryQueues,
  type MemoryTableSchema,
  OUTBOX_KEYS,
  ReceiptConfirmer,
  type RelayDeps,
  sweep,
} from '../../../shared/memory/index.ts';
import { CONSUMER_DEFAULTS, OUTBOX_STREAM_DEFAULTS, QUEUE_DEFAULTS } from '../../constructs/index.ts';
import { toProxyEvent } from '../local/api/api-gateway-event.ts';
import { lambdaContext } from '../local/host/lambda-context.ts';
import { itemKey } from './contention.ts';
import { DeliveryTrouble } from './delivery-trouble.ts';
import { type DrillConfig, type DrillResult, drillRates, type Progress } from './drill-config.ts';
import { type DrillTable, takeSnapshot } from './drill-snapshot.ts';
import {
  deliveryKey,
  isSubscriber,
  RUNNING_SUBSCRIBER,
  STOPPED_SUBSCRIBER,
  SUBSCRIBERS,
  type Subscriber,
} from './drill-subscribers.ts';
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
import { drillResult } from './invariants.ts';
import { MetricsTally } from './observed-metrics.ts';
import {
  DrillOperator,
  MIN_WITHDRAWALS,
  OPERATOR_CANCEL_SHARE,
  OPERATOR_REPLAYS,
  withdrawalTarget,
} from './operator-actions.ts';
import { deadLetterCounts } from './operator-invariants.ts';
import {
  HOT_SKU,
  hotOrderCount,
  hotOrderItems,
  hotStock,
  IMMEDIATE_CANCEL_SHARE,
  ORDER_SCOPE,
  poisonedDeliveries,
  randomOrderItems,
  skuName,
} from './order-factory.ts';
import { faultyReceiptQueue, ReceiptFaults } from './receipt-faults.ts';
import { ReceiptTally } from './receipt-tally.ts';
import { type RogueMessage, rogueOutboxItems } from './rogue-messages.ts';
import { SETTLED_STATUSES } from './stalled-deliveries.ts';
import {
  type OpenDelivery,
  ownDelayOf,
  STOP_BOUND_DEADLINES,
  STOP_WINDOW,
  type StopFacts,
} from './subscriber-stop.ts';
import { UnreportedCommits } from './unreported-commits.ts';

/** One simulated second per step: the writers, the relay, the consumers, the receipts and both sweepers each get a turn. */
const TICK_MS = 1_000;
/** The outbox stream mapping as the construct deploys it: records per batch, retries of a failing batch. */
const STREAM_BATCH_SIZE = OUTBOX_STREAM_DEFAULTS.batchSize;
const STREAM_RETRIES = OUTBOX_STREAM_DEFAULTS.retryAttempts;
/**
 * Relay invocations per simulated second: Lambda invokes a stream shard's next batch as soon as the last returns (a
 * retried batch from its first failed record), a few tens of milliseconds each. With the drill's throttling on every
 * DynamoDB call a batch fails after ten records or so: one invocation a second left nearly every delivery to the
 * sweepers, after the stream grace.
 */
const RELAY_INVOCATIONS_PER_TICK = 25;
/**
 * Orders written per simulated second at most: a rate the faulted pipeline keeps up with, so that latency measures
 * the pipeline and not a backlog of writes; a small run takes at least {@link MIN_WRITE_TICKS}.
 */
const ORDERS_PER_TICK = 50;
const MIN_WRITE_TICKS = 50;
/** Each subscriber's queue as the construct deploys it, and its consumer's mapping and timeout. */
const QUEUE_MAX_RECEIVE_COUNT = QUEUE_DEFAULTS.maxReceiveCount;
const QUEUE_VISIBILITY_TIMEOUT_MS = QUEUE_DEFAULTS.visibilityTimeout.toMilliseconds();
const CONSUMER_BATCH_SIZE = CONSUMER_DEFAULTS.batchSize;
const CONSUMER_TIMEOUT_SECONDS = CONSUMER_DEFAULTS.timeout.toSeconds();
/** The receipts mapping as `OutboxReceipts` configures it: batches of 10, 180 s visibility. */
const RECEIPTS_BATCH_SIZE = 10;
const RECEIPTS_VISIBILITY_TIMEOUT_MS = 180_000;
const CONFIRM_DEADLINE_MS = 30_000;
/** A delayed receipt arrives 1 s to this long after it was sent: some before the deadline, some after a resend. */
const RECEIPT_MAX_DELAY_MS = 1.5 * CONFIRM_DEADLINE_MS;
const MAX_SIMULATED_MS = 48 * 3_600_000;
/** Batches a consumer takes in one simulated second at most. */
const CONSUMER_BATCHES_PER_TICK = 1_000;
const QUEUES: Readonly<Record<Subscriber, string>> = {
  inventory: 'memory://OutboxOrders-Outbox-inventory',
  loyalty: 'memory://OutboxOrders-Outbox-loyalty',
};
const DEAD_LETTER_QUEUES: Readonly<Record<Subscriber, string>> = {
  inventory: 'memory://OutboxOrders-Outbox-inventory-dlq',
  loyalty: 'memory://OutboxOrders-Outbox-loyalty-dlq',
};
const RECEIPT_QUEUE = 'memory://OutboxOrders-Outbox-receipts';
const RECEIPT_DEAD_LETTER_QUEUE = 'memory://OutboxOrders-Outbox-receipts-dlq';
const ORDER_TOPICS = [ORDER_CREATED, ORDER_CANCELLED] as const;
const TERMINAL: ReadonlySet<string> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);
/** The example's ordering, as the stack configures it: both order topics in scope `order`, default gap timeout. */
const ORDERING: OrderingByTopic = Object.fromEntries(
  ORDER_TOPICS.map((topic) => [
    topic,
    { scope: ORDER_SCOPE, gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS, sequence: 'aggregate-version' },
  ]),
);
/** A later cancel comes 1 to this many simulated seconds after its order was acknowledged. */
const LATE_CANCEL_MAX_TICKS = 60;
/** The stalled order (its create alone poisoned) is cancelled this many ticks after it was acknowledged. */
const STALLED_CANCEL_TICKS = 5;
/** How long the operator's cancelled messages are kept (the admin API's default retention). */
const OPERATOR_RETENTION_DAYS = 30;
const quietLogger = { info: () => {}, warn: () => {} };

/**
 * The tables of the example as its three stacks create them: the order service's orders (keyed `orderId`), the
 * library's outbox (with its sparse due index, its aggregate index and its order index) and audit trail; each
 * subscriber's inbox; the inventory's table (keyed `sku`) and the loyalty service's (keyed `pk`).
 */
const TABLES: Readonly<Record<DrillTable | 'audit', MemoryTableSchema>> = {
  orders: { partitionKey: 'orderId' },
  audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
  inventory: { partitionKey: 'sku' },
  loyalty: { partitionKey: LOYALTY_TABLE_KEY },
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
  inventoryInbox: { partitionKey: INBOX_KEYS.partitionKey },
  loyaltyInbox: { partitionKey: INBOX_KEYS.partitionKey },
};

/** Each subscriber's inbox table. */
const inboxTableOf = (subscriber: Subscriber): DrillTable => `${subscriber}Inbox`;

/**
 * The scale drill: the same cores as production (createOrder, relayStreamEvent, each subscriber's consumeSqsEvent
 * with the example's plan and a receipt sender, the receipts function's applyReceiptEvent, sweep) and the same
 * DynamoDB update expressions, run against in-memory tables and queues with the same fault injection as the moto
 * drill, on a simulated clock so that hours of backoff pass in seconds. Halfway through come the burst on the hot
 * SKU, whose transactions are cancelled with TransactionConflict at the configured rate, and the rogue messages
 * written behind the writer's back; loyalty's consumer is not polled from 20 % to 50 % of the writes.
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
      ...Object.fromEntries(
        SUBSCRIBERS.flatMap((subscriber) => [
          [
            QUEUES[subscriber],
            {
              visibilityTimeoutMs: QUEUE_VISIBILITY_TIMEOUT_MS,
              maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
              deadLetterQueueUrl: DEAD_LETTER_QUEUES[subscriber],
            },
          ],
          [DEAD_LETTER_QUEUES[subscriber], { visibilityTimeoutMs: 30_000 }],
        ]),
      ),
      [RECEIPT_QUEUE]: {
        visibilityTimeoutMs: RECEIPTS_VISIBILITY_TIMEOUT_MS,
        maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
        deadLetterQueueUrl: RECEIPT_DEAD_LETTER_QUEUE,
      },
      [RECEIPT_DEAD_LETTER_QUEUE]: { visibilityTimeoutMs: 30_000 },
    },
    clock,
  );

  // The outbox stream: INSERTs only (the mapping's filter), with increasing sequence numbers.
  const stream: DynamoDBRecord[] = [];
  const open = new Set<string>();
  const ledger = new SequenceLedger();
  // The burst's orders on the hot SKU; filled while the orders are written.
  const hotOrders = new Set<string>();
  const stop = new MemoryStop(config.orders, hotOrders);
  let sequence = 0;
  memory.onChange((change) => {
    const subscriber = SUBSCRIBERS.find((name) => change.tableName === inboxTableOf(name));
    if (subscriber !== undefined) {
      ledger.parkedRow(subscriber, change.newImage ?? change.oldImage, change.newImage !== undefined);
      return;
    }
    if (change.tableName !== 'outbox' || !change.newImage) return;
    const key = String(change.newImage.messageId);
    ledger.row(change.newImage);
    if (TERMINAL.has(String(change.newImage.status))) open.delete(key);
    else open.add(key);
    if (change.eventName === 'INSERT') {
      sequence += 1;
      stream.push(streamRecord(change.newImage, sequence, clock()));
      stop.inserted(change.newImage, simulatedNow);
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
  // What went wrong for each delivery on its way, for the stop's check of the running subscriber's delays.
  const trouble = new DeliveryTrouble();
  // Deliveries an operator fixed before replaying them: SQS takes them from then on.
  const healed = new Set<string>();
  const poison = poisonedDeliveries({ orders: poisoned, createsOf: stalled, healed });
  const subscriberOfQueue = new Map(SUBSCRIBERS.map((subscriber) => [QUEUES[subscriber], subscriber]));
  const relayDeps: RelayDeps = {
    publisher: faultyPublisher(queues, faults, {
      poisoned: (message, queueUrl) => {
        const subscriber = subscriberOfQueue.get(queueUrl);
        return subscriber !== undefined && poison(message, subscriber);
      },
      timedOut: (queueUrl, messages) => trouble.noteTimeout(subscriberOfQueue.get(queueUrl), messages),
    }),
    store: crashingAfterSend(store('relay'), faults, (key) => trouble.noteCrash(key)),
    // The order topics and the outbox's own messages go to each subscriber's queue.
    queueFor: (_topic, subscriber) => (isSubscriber(subscriber) ? QUEUES[subscriber] : undefined),
    retryPolicyFor: () => DEFAULT_RETRY_POLICY,
    clock,
    random,
  };
  const writer: OutboxWriterOptions = {
    client,
    outboxTable: 'outbox',
    ordering: ORDERING,
    subscribers: Object.fromEntries(ORDER_TOPICS.map((topic) => [topic, [...SUBSCRIBERS]])),
  };
  // What the functions would have published, from the same cores and the same functions as the handler factories.
  const sendTally = new MetricsTally();
  const consumerTallies = perSubscriber(() => new MetricsTally());
  const commits = perSubscriber((subscriber) => new UnreportedCommits({ subscriber }));
  const deliveries = perSubscriber(() => 0);
  const receiptFaults = new ReceiptFaults(faults, random, RECEIPT_MAX_DELAY_MS);
  const receiptQueue = faultyReceiptQueue(
    (body, delayMs) => queues.send(RECEIPT_QUEUE, { body, ...(delayMs > 0 ? { delayMs } : {}) }),
    receiptFaults,
  );
  const consumers = perSubscriber((subscriber): SqsConsumer => {
    // Inventory's transactions on the hot SKU meet contention: TransactionConflict at the configured rate.
    const base = memory.asDocumentClient();
    const contended =
      subscriber === 'inventory'
        ? conflictingDocumentClient(base, faults, new Set([itemKey('inventory', { sku: HOT_SKU })]))
        : base;
    return {
      plan: subscriber === 'inventory' ? planInventory('inventory', clock) : planLoyalty('loyalty', clock),
      conflictKeys: subscriber === 'inventory' ? stockConflictKeys : customerConflictKeys,
      deps: faultyConsumerDeps(
        {
          client: faultyDocumentClient(contended, faults),
          inboxTable: inboxTableOf(subscriber),
          subscriber,
          // The receipts of a batch's records go out together: flushed once the batch's work in memory is done,
          // not after a real timer, so a run follows from its seed.
          confirmer: new ReceiptConfirmer({
            subscriber,
            queue: receiptQueue,
            setTimer: (run) => setImmediate(run),
          }),
          clock,
          random,
          // The clock is simulated: the consumer's few milliseconds between conflict retries pass at once.
          sleep: async () => {},
        },
        faults,
        commits[subscriber],
      ),
      // The consumer logs one line per record it handled: consumed, or failed (whatever became of it).
      logger: commits[subscriber].logger((line) => {
        deliveries[subscriber] += 1;
        trouble.noteLine(subscriber, line);
      }),
      failures: {
        queues,
        sourceQueueUrl: QUEUES[subscriber],
        deadLetterQueueUrl: DEAD_LETTER_QUEUES[subscriber],
        maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
        backoff: DEFAULT_VISIBILITY_BACKOFF,
        random,
      },
    };
  });
  // The receipts function: its own faults are the receipts' (lost, duplicated, delayed on their way to it).
  const receiptConfirmer = new DynamoDeliveryConfirmer({
    client: memory.asDocumentClient(),
    tableName: 'outbox',
    retentionDays: OPERATOR_RETENTION_DAYS,
    subscribers: Object.fromEntries(SUBSCRIBERS.map((subscriber) => [subscriber, [...ORDER_TOPICS]])),
    clock,
  });
  const receiptTally = new ReceiptTally();
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
  let adminIds = 0;
  const operator = new DrillOperator(
    dynamoAdminDeps({
      client: memory.asDocumentClient(),
      outboxTable: 'outbox',
      auditTable: 'audit',
      deliveryInboxes: {},
      subscriptions: Object.fromEntries(
        ORDER_TOPICS.map((topic) => [
          topic,
          Object.fromEntries(SUBSCRIBERS.map((subscriber) => [subscriber, QUEUES[subscriber]])),
        ]),
      ),
      orderedTopics: ORDERING,
      dueShards: DEFAULT_DUE_SHARDS,
      retentionDays: OPERATOR_RETENTION_DAYS,
      clock,
      // Audit rows and the control messages the admin writes are keyed by ULIDs: these follow from the clock.
      newId: () => {
        adminIds += 1;
        return simulatedUlid(simulatedNow, adminIds);
      },
    }),
    (key) => healed.add(key),
  );
  /** A delivery of the running subscriber still open at the restart, and its own delay if it has one. */
  const openDelivery = async (key: string): Promise<OpenDelivery> => {
    const read = async (table: string, keyOf: string) =>
      (await memory.send(new GetCommand({ TableName: table, Key: { messageId: keyOf } }))).Item as
        | Record<string, unknown>
        | undefined;
    const row = (await read('outbox', key)) ?? {};
    const predecessorKey = ledger.predecessorOf(key);
    const predecessor = predecessorKey === undefined ? undefined : await read('outbox', predecessorKey);
    const ownDelay = ownDelayOf(row, {
      ...(predecessor === undefined ? {} : { predecessor }),
      ...withTrouble(trouble.of(key) ?? receiptFaults.troubleOf(key)),
      now: simulatedNow,
    });
    return { key, status: String(row.status), ...(ownDelay === undefined ? {} : { ownDelay }) };
  };

  const skipTargets = new Set<string>();
  let replays = 0;
  let eraseTarget = false;
  let withdrawals = 0;
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
    // second is poisoned the same way; the operator skips its FAILED create at inventory and replays it at loyalty:
    // its cancel must then be applied at both.
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
  const rogueMessages = new Map<string, RogueMessage>();
  const regularOrders = config.orders - hotOrderCount(config.orders);
  let regularWritten = 0;
  let burstWritten = false;
  const ordersPerTick = Math.max(1, Math.min(ORDERS_PER_TICK, Math.ceil(regularOrders / MIN_WRITE_TICKS)));
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
      for (const rogue of rogueOutboxItems({
        now: clock(),
        dueShards: DEFAULT_DUE_SHARDS,
        subscribers: SUBSCRIBERS,
      })) {
        rogueMessages.set(rogue.messageId, rogue.expected);
        for (const item of rogue.items)
          await memory.send(new PutCommand({ TableName: 'outbox', Item: item }));
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
          if (skipTargets.has(orderId)) {
            operator.skipWhenFailed(orderId, messageId, 'inventory');
            operator.replayWhenFailed(orderId, messageId, 'loyalty');
          } else if (poisoned.has(orderId) && replays < OPERATOR_REPLAYS.length) {
            for (const subscriber of OPERATOR_REPLAYS[replays] ?? [])
              operator.replayWhenFailed(orderId, messageId, subscriber);
            replays += 1;
          } else if (dueAt === undefined && !poisoned.has(orderId) && !hotOrders.has(orderId)) {
            // An order that stays as written: the operator withdraws some at once (before the relay reads the
            // stream) — the whole message, or one subscriber's delivery — and erases one once it has settled.
            const withdraw = random() < OPERATOR_CANCEL_SHARE;
            // The first few such orders always: a small drill withdraws a whole message and each delivery too.
            if (withdraw || withdrawals < MIN_WITHDRAWALS) {
              await operator.cancelAfterWrite(messageId, withdrawalTarget(withdrawals));
              withdrawals += 1;
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
    // The stop: loyalty's consumer is not polled from 20 % of the writes until 50 % and the running subscriber has
    // settled what was written meanwhile.
    await stop.step({ acknowledged: acknowledged.size, now: simulatedNow, ledger, openDelivery });

    // 2. The stream relay: batches from the head, each retried from its first failed record, bounded.
    let headRetries = 0;
    for (let invocation = 0; invocation < RELAY_INVOCATIONS_PER_TICK && stream.length > 0; invocation += 1) {
      const batch = takeBatch(stream, faults, (record) =>
        trouble.noteStreamMiss(streamKey(record), 'dropped'),
      );
      if (batch.length === 0) continue;
      const event: DynamoDBStreamEvent = { Records: batch };
      const { response, report } = await relayStreamEvent(event, relayDeps, quietLogger);
      sendTally.add(sendMetrics(report.topics));
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      const firstFailed = batch.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
      if (firstFailed === -1) {
        headRetries = 0;
        continue;
      }
      streamRetries += 1;
      headRetries += 1;
      // Lambda checkpoints before the first failed record and retries from it; after the mapping's retries
      // the records go to the on-failure destination (metadata only) and the sweeper must find them.
      if (headRetries <= STREAM_RETRIES) stream.unshift(...batch.slice(firstFailed));
      else {
        headRetries = 0;
        for (const record of batch.slice(firstFailed))
          trouble.noteStreamMiss(streamKey(record), "given up on after the mapping's retries");
      }
    }

    // 3. Each subscriber's consumer: every visible message, in batches as its mapping takes them (but the stopped
    //    one's), with partial batch responses.
    for (const subscriber of SUBSCRIBERS) {
      if (stop.isStopped(subscriber)) continue;
      const queueUrl = QUEUES[subscriber];
      for (let batches = 0; batches < CONSUMER_BATCHES_PER_TICK; batches += 1) {
        const records = queues.receive(queueUrl, CONSUMER_BATCH_SIZE);
        if (records.length === 0) break;
        const event: SQSEvent = { Records: records };
        const { response, topics } = await commits[subscriber].invocation(() =>
          consumeSqsEvent(event, context(`${subscriber}Consumer`), consumers[subscriber]),
        );
        consumerTallies[subscriber].add(consumeMetrics(topics));
        const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
        for (const record of records)
          if (!failed.has(record.messageId)) queues.delete(queueUrl, record.receiptHandle);
      }
    }

    // 4. The producer's receipts function: every visible receipt body, ten to a batch.
    for (let batches = 0; batches < CONSUMER_BATCHES_PER_TICK; batches += 1) {
      const records = queues.receive(RECEIPT_QUEUE, RECEIPTS_BATCH_SIZE);
      if (records.length === 0) break;
      const { response, report } = await applyReceiptEvent(
        { Records: records },
        { confirmer: receiptConfirmer, logger: quietLogger },
      );
      receiptTally.add(report);
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      for (const record of records)
        if (!failed.has(record.messageId)) queues.delete(RECEIPT_QUEUE, record.receiptHandle);
    }

    // 5. Two sweepers at once, each one round of its loop per simulated second.
    const runs = await Promise.allSettled(
      ['sweeper-a', 'sweeper-b'].map((owner) => {
        let rounds = 0;
        return sweep({
          ...relayDeps,
          store: crashingSweeperStore(
            crashingAfterSend(store('sweeper'), faults, (key) => trouble.noteCrash(key)),
            faults,
            random,
          ),
          owner: `${owner}-${simulatedNow}`,
          // A subscriber answers with receipts: its delivery has no check, an unconfirmed one is resent.
          deliveryCheckFor: () => undefined,
          orderingFor: (topic) => orderedTopic(ORDERING, topic),
          remainingMs: () => (rounds++ === 0 ? Number.MAX_SAFE_INTEGER : 0),
          sleep: async () => {},
          settings: { ...DEFAULT_SWEEPER_SETTINGS, subscribers: SUBSCRIBERS, stopBeforeMs: 0 },
        });
      }),
    );
    for (const run of runs) {
      if (run.status === 'rejected') sweeperErrors += 1;
      else {
        sweeperErrors += run.value.errors;
        orderingGaps += Object.values(run.value.orderingGaps).reduce((sum, gaps) => sum + gaps, 0);
        sendTally.add(sendMetrics(run.value.topics));
      }
    }

    // 6. The operator: each action whose deliveries have reached their status.
    await operator.step();

    simulatedNow += TICK_MS;
    tick += 1;
    // Open counts deliveries (a cancelled order has four), so it can outnumber the orders acknowledged so far.
    const settledOrders = Math.max(0, acknowledged.size - Math.ceil(open.size / SUBSCRIBERS.length));
    progress(settledOrders, config.orders, `written ${acknowledged.size}, open deliveries ${open.size}`);
    // Settled: nothing left open but the deliveries that wait, as designed, behind a FAILED predecessor.
    if (
      written === config.orders &&
      pending.length === 0 &&
      cancels.length === 0 &&
      operator.done() &&
      stop.restarted() &&
      [...open].every((key) => ledger.stalled(key))
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
    deadLetters: perSubscriber((subscriber) => queues.peek(DEAD_LETTER_QUEUES[subscriber])),
    maxReceiveCount: QUEUE_MAX_RECEIVE_COUNT,
    operator: operator.facts(),
    receipts: receiptFaults.facts(),
    stop: stop.facts(),
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
      metrics: {
        sends: sendTally.totals(),
        consumers: perSubscriber((subscriber) => consumerTallies[subscriber].totals()),
      },
      unreportedCommits: perSubscriber((subscriber) => commits[subscriber].counts()),
      receiptsApplied: receiptTally.totals(),
    },
    snapshot,
    {
      'stream batch retries': streamRetries,
      'sweeper steps that failed (left to the lease)': sweeperErrors,
      'ordering gaps found by the sweepers (parked past the gap timeout)': orderingGaps,
      'hot SKU orders (one burst)': hotOrders.size,
      'TransactionConflict cancellations (injected)': faults.injected.hotSkuConflict,
      ...Object.fromEntries(
        SUBSCRIBERS.flatMap((subscriber) => {
          const letters = deadLetterCounts(snapshot.subscribers[subscriber].deadLetters);
          return [
            [`${subscriber}: dead letters sent by its consumer, with its reason`, letters.byConsumer],
            [
              `${subscriber}: dead letters moved by its queue's redrive policy (no reason)`,
              letters.byRedrivePolicy,
            ],
          ];
        }),
      ),
      'receipt bodies in the receipts dead-letter queue': queues.peek(RECEIPT_DEAD_LETTER_QUEUE).length,
    },
  );
}

function withTrouble(trouble: string | undefined): { readonly trouble?: string } {
  return trouble === undefined ? {} : { trouble };
}

/** One value per subscriber. */
function perSubscriber<T>(make: (subscriber: Subscriber) => T): Record<Subscriber, T> {
  return Object.fromEntries(SUBSCRIBERS.map((subscriber) => [subscriber, make(subscriber)])) as Record<
    Subscriber,
    T
  >;
}

/**
 * The stop of loyalty's consumer on the simulated clock: from when 20 % of the orders are acknowledged until 50 %
 * are, and then until inventory has done all it can with its deliveries of the order messages written meanwhile
 * (each settled, or held by a delay of its own; for {@link STOP_BOUND_DEADLINES} confirmation deadlines more at
 * most), noting which of them were open at the restart and why.
 */
class MemoryStop {
  readonly #orders: number;
  readonly #burst: ReadonlySet<string>;
  #stoppedAt: number | undefined;
  #plannedRestartAt: number | undefined;
  #restartedAt: number | undefined;
  readonly #awaited = new Set<string>();
  #openAtRestart: readonly OpenDelivery[] = [];

  /** `burst`: the hot SKU's orders, left out: their delay is the contention on one item, the running subscriber's own. */
  constructor(orders: number, burst: ReadonlySet<string>) {
    this.#orders = orders;
    this.#burst = burst;
  }

  /** Notes a row the writer inserted: the running subscriber's deliveries of order messages written during the planned stop. */
  inserted(row: Readonly<Record<string, unknown>>, now: number): void {
    if (this.#stoppedAt === undefined || this.#plannedRestartAt !== undefined || now < this.#stoppedAt)
      return;
    if (row.subscriber !== RUNNING_SUBSCRIBER) return;
    if (row.topic !== ORDER_CREATED && row.topic !== ORDER_CANCELLED) return;
    if (String(row.aggregateId).startsWith('rogue-') || this.#burst.has(String(row.aggregateId))) return;
    this.#awaited.add(String(row.messageId));
  }

  async step(at: {
    readonly acknowledged: number;
    readonly now: number;
    readonly ledger: SequenceLedger;
    readonly openDelivery: (key: string) => Promise<OpenDelivery>;
  }): Promise<void> {
    if (this.#stoppedAt === undefined) {
      if (at.acknowledged >= STOP_WINDOW.from * this.#orders) this.#stoppedAt = at.now;
      return;
    }
    if (this.#restartedAt !== undefined) return;
    if (this.#plannedRestartAt === undefined) {
      if (at.acknowledged < STOP_WINDOW.to * this.#orders) return;
      this.#plannedRestartAt = at.now;
    }
    // Started again once the running subscriber has done all it can with them: each settled, or held by a delay of
    // its own; at the bound whatever is left.
    const open = await Promise.all(
      [...this.#awaited].filter((key) => !at.ledger.settled(key)).map(at.openDelivery),
    );
    const bound = this.#plannedRestartAt + STOP_BOUND_DEADLINES * CONFIRM_DEADLINE_MS;
    if (open.some((delivery) => delivery.ownDelay === undefined) && at.now < bound) return;
    this.#openAtRestart = open;
    this.#restartedAt = at.now;
  }

  /** Whether `subscriber`'s consumer is not polled now. */
  isStopped(subscriber: Subscriber): boolean {
    return (
      subscriber === STOPPED_SUBSCRIBER && this.#stoppedAt !== undefined && this.#restartedAt === undefined
    );
  }

  restarted(): boolean {
    return this.#restartedAt !== undefined;
  }

  facts(): StopFacts {
    return {
      subscriber: STOPPED_SUBSCRIBER,
      running: RUNNING_SUBSCRIBER,
      stoppedAt: this.#stoppedAt ?? Number.NaN,
      plannedRestartAt: this.#plannedRestartAt ?? Number.NaN,
      restartedAt: this.#restartedAt ?? Number.NaN,
      awaited: this.#awaited.size,
      openAtRestart: this.#openAtRestart,
    };
  }
}

/**
 * A ULID on the simulated clock for the admin's audit rows and control messages: its time part, `Z`, then `n` in the
 * other 15 digits of its random part (no message id minted in the same millisecond starts its random part so, even
 * from a counter, so the two never meet as idempotency tokens).
 */
function simulatedUlid(time: number, n: number): string {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let text = '';
  for (let rest = time, i = 0; i < 10; i += 1, rest = Math.floor(rest / 32))
    text = crockford.charAt(rest % 32) + text;
  let random = '';
  for (let rest = n, i = 0; i < 15; i += 1, rest = Math.floor(rest / 32))
    random = crockford.charAt(rest % 32) + random;
  return `${text}Z${random}`;
}

/** Takes one stream batch from the head; each record may be dropped (never delivered) by the fault plan. */
function takeBatch(
  stream: DynamoDBRecord[],
  faults: FaultInjector,
  dropped: (record: DynamoDBRecord) => void,
): DynamoDBRecord[] {
  return stream.splice(0, STREAM_BATCH_SIZE).filter((record) => {
    if (!faults.roll('droppedStreamRecord')) return true;
    dropped(record);
    return false;
  });
}

/** The outbox row a stream record announces. */
function streamKey(record: DynamoDBRecord): string {
  return String(record.dynamodb?.Keys?.messageId?.S);
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
 * delivery's status by its place in its subscriber's sequence, and which deliveries each consumer holds in parked
 * rows.
 */
class SequenceLedger {
  readonly #statusOf = new Map<string, string>();
  readonly #placeOf = new Map<string, { readonly orderKey: string; readonly seq: number }>();
  readonly #bySequence = new Map<string, string>();
  readonly #parked = new Set<string>();

  /** Notes a row's new image. */
  row(image: Record<string, unknown>): void {
    const key = String(image.messageId);
    this.#statusOf.set(key, String(image.status));
    if (typeof image.orderKey === 'string' && typeof image.seq === 'number') {
      this.#placeOf.set(key, { orderKey: image.orderKey, seq: image.seq });
      this.#bySequence.set(`${image.orderKey}#${image.seq}`, key);
    }
  }

  /** Notes a parked row of `subscriber`'s written (`present`) or deleted. */
  parkedRow(subscriber: Subscriber, row: Record<string, unknown> | undefined, present: boolean): void {
    if (typeof row?.parkedMessageId !== 'string') return;
    const key = deliveryKey(row.parkedMessageId, subscriber);
    if (present) this.#parked.add(key);
    else this.#parked.delete(key);
  }

  /** The delivery before `key` in its subscriber's sequence, if any. */
  predecessorOf(key: string): string | undefined {
    const place = this.#placeOf.get(key);
    return place === undefined || place.seq <= 1
      ? undefined
      : this.#bySequence.get(`${place.orderKey}#${place.seq - 1}`);
  }

  /**
   * Whether an unsettled delivery waits, as designed, for a FAILED predecessor: held PENDING by the relay and the
   * sweeper, or delivered and parked by its consumer.
   */
  stalled(key: string): boolean {
    const predecessor = this.predecessorOf(key);
    if (predecessor === undefined || this.#statusOf.get(predecessor) !== MessageStatus.FAILED) return false;
    return this.#statusOf.get(key) === MessageStatus.PENDING || this.#parked.has(key);
  }

  /** Whether a delivery has ended (CONFIRMED, FAILED, CANCELLED) or waits as designed behind its FAILED seq 1. */
  settled(key: string): boolean {
    return SETTLED_STATUSES.has(this.#statusOf.get(key)) || this.stalled(key);
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
