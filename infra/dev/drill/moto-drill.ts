import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { planInventory } from '../../../functions/inventory/apply-order/plan-inventory.ts';
import { stockConflictKeys } from '../../../functions/inventory/apply-order/stock-conflict-keys.ts';
import { customerConflictKeys } from '../../../functions/loyalty/apply-order/customer-conflict-keys.ts';
import { planLoyalty } from '../../../functions/loyalty/apply-order/plan-loyalty.ts';
import { LOYALTY_TABLE } from '../../../functions/loyalty/loyalty-table.ts';
import { handler as cancelOrderHandler } from '../../../functions/orders/cancel-order/handler.ts';
import { handler as createOrderHandler } from '../../../functions/orders/create-order/handler.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import { adminDeps } from '../../../shared/admin/index.ts';
import {
  awsClientConfig,
  createDocumentClient,
  type Env,
  MessageStatus,
  OutboxSettings,
  readSetting,
  requireEnv,
} from '../../../shared/index.ts';
import {
  applyReceiptEvent,
  consumeMetrics,
  consumerParts,
  consumeSqsEvent,
  relayDeps,
  relayStreamEvent,
  sendMetrics,
  sweeperDeps,
} from '../../../shared/lambda/index.ts';
import { DynamoDeliveryConfirmer, type RelayDeps, sweep } from '../../../shared/memory/index.ts';
import { seedStock } from '../../stacks/local-plugin.ts';
import { synthExampleTemplates } from '../../synth-template.ts';
import { type LocalRuntime, startLocalRuntime } from '../local/host/runtime.ts';
import { CallsInFlight } from './calls-in-flight.ts';
import { scaleOutConsumer } from './consumer-scale-out.ts';
import { OptimisticConcurrency } from './contention.ts';
import { DeliveryTrouble } from './delivery-trouble.ts';
import { type DrillConfig, type DrillResult, drillRates, type Progress } from './drill-config.ts';
import { takeSnapshot } from './drill-snapshot.ts';
import { RUNNING_SUBSCRIBER, STOPPED_SUBSCRIBER, SUBSCRIBERS, type Subscriber } from './drill-subscribers.ts';
import {
  crashingAfterSend,
  crashingSweeperStore,
  FaultInjector,
  faultyConsumerDeps,
  faultyDocumentClient,
  faultyPublisher,
  seededRandom,
  throttledStore,
} from './faults.ts';
import { drillResult } from './invariants.ts';
import { output, readDeadLetters, scanAll } from './moto-tables.ts';
import { withUntrackedMotoModels } from './moto-untracked-models.ts';
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
import { faultyReceiptClient, ReceiptFaults } from './receipt-faults.ts';
import { ReceiptTally } from './receipt-tally.ts';
import { type RogueMessage, rogueOutboxItems, rogueUnreadableNumberItem } from './rogue-messages.ts';
import { SETTLED_STATUSES, stalledDeliveries } from './stalled-deliveries.ts';
import {
  type OpenDelivery,
  ownDelayOf,
  STOP_BOUND_DEADLINES,
  STOP_WINDOW,
  type StopFacts,
} from './subscriber-stop.ts';
import { UnreportedCommits } from './unreported-commits.ts';

/** The drill's retry policy for both order topics. */
const DRILL_RETRY = { baseDelayMs: 500, multiplier: 2, maxDelayMs: 3_000, maxAttempts: 8 };

/**
 * How long a SENT delivery may go unconfirmed, and a delivery wait for its predecessor, before the sweeper acts: the
 * time the pipeline needs at this size, from 30 s (30 orders) to 2 minutes (200 orders and more). Every delivery
 * that lost its copy or its receipt to an injected fault (a crash between the SENT mark and the send, a lost
 * receipt, a dead-lettered copy) waits this long before reconciliation resends it, so the drill's settling time is a
 * few of these. Not shorter than the pipeline's p95 on a busy moto: a consumer that is merely behind is then taken
 * for a lost delivery, and at 30 s for 200 orders reconciliation resent most messages several times, each resend
 * costing the one emulator every hop shares a claim, a send, a mark and a delivery, until the consumer fell minutes
 * behind. The gap timeout is as long: past it the sweeper resends the predecessor, which a consumer that is merely
 * behind has not reached yet (at 20 s, every parked cancel brought its create another copy every 20 s).
 */
export function drillDeadlineMs(orders: number): number {
  return Math.min(120_000, Math.max(30_000, orders * 600));
}

/**
 * Short timings so the drill settles in minutes rather than hours: retries capped at 3 s and 8 attempts, the
 * deadlines of {@link drillDeadlineMs}, a 10 s stream grace period, 10 s leases, 1–4 s visibility backoff, and the
 * ordered order topics as the stack orders them (in scope `order`).
 */
function drillEnv(orders: number): Record<string, string> {
  const deadlineMs = drillDeadlineMs(orders);
  const ordered = { scope: ORDER_SCOPE, gapTimeoutMs: deadlineMs, sequence: 'aggregate-version' };
  return {
    RETRY_POLICIES: JSON.stringify({ [ORDER_CREATED]: DRILL_RETRY, [ORDER_CANCELLED]: DRILL_RETRY }),
    ORDERED_TOPICS: JSON.stringify({ [ORDER_CREATED]: ordered, [ORDER_CANCELLED]: ordered }),
    CONFIRM_DEADLINE_MS: String(deadlineMs),
    STREAM_GRACE_MS: '10000',
    VISIBILITY_BACKOFF_BASE_SECONDS: '1',
    VISIBILITY_BACKOFF_MAX_SECONDS: '4',
  };
}
const LEASE_MS = 10_000;
/**
 * How long the pipeline may take to settle once every order is written: four reconciliation rounds at the drill's
 * deadline (each round's deadline doubles: 1 + 2 + 4 + 8 deadlines), and 5 minutes more. A delivery whose send's
 * outcome was left unknown (a timeout, a crash, a throttled bookkeeping write after a refusal) waits a round for
 * reconciliation, and one SQS refuses forever must be refused 8 times before it is FAILED.
 */
function settleTimeoutMs(orders: number): number {
  return 15 * drillDeadlineMs(orders) + 5 * 60_000;
}
/** The shortest pause between two looks at the tables while the pipeline settles. */
const SETTLE_POLL_MS = 1_000;
/** The shortest pause between two looks at the outbox while the stopped subscriber waits to start again. */
const STOP_POLL_MS = 5_000;
/**
 * Clients writing orders at once. Every order's transaction holds moto for as long as it takes moto to copy the outbox
 * table with its whole stream (moto copies each table a transaction touches, to restore it on a cancel), and the
 * forwarder hands moto one transaction at a time: at 8 clients, with the consumers' transactions between them,
 * CreateOrder (10 s) timed out by the hundred at 200 orders. Every retry of an order written after all is a cancelled
 * transaction, and moto keeps each table it restored from (its stream iterators hold it): moto grew past 20 GB.
 */
const CLIENT_CONCURRENCY = 3;
/** The example's functions by their names in the app (`<stack>/<construct path>`). */
const FUNCTIONS = {
  createOrder: 'OutboxOrders/CreateOrder',
  cancelOrder: 'OutboxOrders/CancelOrder',
  relay: 'OutboxOrders/Outbox/Relay',
  sweeper: 'OutboxOrders/Outbox/Sweeper',
  receipts: 'OutboxOrders/Outbox/Receipts',
  admin: 'OutboxOrders/Outbox/Admin',
} as const;
const CONSUMERS: Readonly<Record<Subscriber, string>> = {
  inventory: 'OutboxInventory/Inventory/Consumer',
  loyalty: 'OutboxLoyalty/Loyalty/Consumer',
};
/** Each subscriber's queue and dead-letter queue, by their stacks' outputs. */
const QUEUE_OUTPUTS: Readonly<Record<Subscriber, { readonly queue: string; readonly deadLetters: string }>> =
  {
    inventory: { queue: 'inventoryQueueUrl', deadLetters: 'inventoryDeadLetterQueueUrl' },
    loyalty: { queue: 'loyaltyQueueUrl', deadLetters: 'loyaltyDeadLetterQueueUrl' },
  };
/** Inventory invocations beside the runtime's poller, so that orders for one SKU meet in concurrent transactions. */
const CONSUMER_SCALE_OUT = 4;
const TERMINAL: ReadonlySet<string> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);
const quiet = { info: () => {}, warn: () => {} };

/** Each subscriber's value. */
function perSubscriber<T>(make: (subscriber: Subscriber) => T): Record<Subscriber, T> {
  return Object.fromEntries(SUBSCRIBERS.map((subscriber) => [subscriber, make(subscriber)])) as Record<
    Subscriber,
    T
  >;
}

/** Subscriber name → the topics it receives, from SUBSCRIPTIONS (topic → subscriber → queue URL). */
function topicsBySubscriber(env: Env): Record<string, string[]> {
  const topics: Record<string, string[]> = {};
  for (const [topic, queues] of Object.entries(readSetting(env, OutboxSettings.subscriptions))) {
    for (const subscriber of Object.keys(queues)) topics[subscriber] = [...(topics[subscriber] ?? []), topic];
  }
  return topics;
}

/**
 * The fault drill on moto: the example's three stacks deployed by the local runtime, their real handlers behind its
 * API, stream and queue pollers, with every hop's adapter wrapped by the fault injector — the receipts between each
 * subscriber and the order service lost, duplicated and delayed — two sweepers running side by side, inventory's
 * consumer scaled out to concurrent invocations under DynamoDB's optimistic concurrency (so the burst on the hot SKU
 * meets real conflicts), loyalty's consumer stopped for a stretch of the writes, rogue messages written behind the
 * writer's back, and the invariants checked from the emulator's tables and each subscriber's dead-letter queue once
 * everything has settled.
 */
export async function runMotoDrill(config: DrillConfig, progress: Progress): Promise<DrillResult> {
  const overrides = drillEnv(config.orders);
  const faults = new FaultInjector(drillRates(config), seededRandom(config.seed + 1));
  const random = seededRandom(config.seed);
  const poisoned = new Set<string>();
  const stalled = new Set<string>();
  const healed = new Set<string>();
  const poison = poisonedDeliveries({ orders: poisoned, createsOf: stalled, healed });
  // moto never answers TransactionConflict: the consumers' clients get DynamoDB's optimistic concurrency.
  const concurrency = new OptimisticConcurrency();
  // What the functions would have published, from the same cores and the same functions as the handler factories.
  const sendTally = new MetricsTally();
  const consumerTallies = perSubscriber(() => new MetricsTally());
  const commits = perSubscriber((subscriber) => new UnreportedCommits({ subscriber }));
  const inFlight = perSubscriber(() => new CallsInFlight());
  const deliveries = perSubscriber(() => 0);
  const trouble = new DeliveryTrouble();
  const receiptFaults = new ReceiptFaults(faults, random, 1.5 * drillDeadlineMs(config.orders));
  const receiptTally = new ReceiptTally();
  let subscriberOfQueue = new Map<string, Subscriber>();
  const poisonedAt = (queueUrl: string) => {
    const subscriber = subscriberOfQueue.get(queueUrl);
    return (message: Parameters<typeof poison>[0]) => subscriber !== undefined && poison(message, subscriber);
  };
  const timedOut = (queueUrl: string, messages: readonly { readonly messageId: string }[]) =>
    trouble.noteTimeout(subscriberOfQueue.get(queueUrl), messages);
  const crashed = (key: string) => trouble.noteCrash(key);

  const consumerHandler = (subscriber: Subscriber) => (_base: unknown, env: Env) => {
    const receiptQueueUrl = requireEnv(env, OutboxSettings.receiptQueueUrl.name);
    const { plan, deps, failures } = consumerParts(
      { ...env, ...overrides },
      (consumerEnv) =>
        subscriber === 'inventory'
          ? planInventory(requireEnv(consumerEnv, 'INVENTORY_TABLE'), () => new Date())
          : planLoyalty(requireEnv(consumerEnv, LOYALTY_TABLE), () => new Date()),
      // The receipts leave through this client: lost, duplicated and delayed on their way to the order service.
      { sqsClient: faultyReceiptClient(new SQSClient(awsClientConfig(env)), receiptQueueUrl, receiptFaults) },
    );
    const faulty = inFlight[subscriber].track(
      faultyConsumerDeps(
        { ...deps, client: faultyDocumentClient(concurrency.wrap(deps.client), faults) },
        faults,
        commits[subscriber],
      ),
    );
    // The consumer logs one line per record it handled: consumed, or failed (whatever became of it).
    const logger = commits[subscriber].logger((line) => {
      deliveries[subscriber] += 1;
      trouble.noteLine(subscriber, line);
    });
    return async (event: unknown, context: unknown) => {
      const { response, topics } = await commits[subscriber].invocation(() =>
        // The shipped handlers' conflict keys: a batch's orders for different SKUs (customers) apply at once.
        consumeSqsEvent(event as SQSEvent, context as Context, {
          plan,
          deps: faulty,
          logger,
          failures,
          conflictKeys: subscriber === 'inventory' ? stockConflictKeys : customerConflictKeys,
        }),
      );
      consumerTallies[subscriber].add(consumeMetrics(topics));
      return response;
    };
  };

  const initialStock = new Map(
    Array.from({ length: config.skus }, (_, i) => [skuName(i), config.initialStock]),
  );
  initialStock.set(HOT_SKU, hotStock(config.orders));
  const templates = synthExampleTemplates({ emulator: true });
  const runtime = await withUntrackedMotoModels(() =>
    startLocalRuntime({
      port: 0,
      log: () => {},
      pollIntervalMs: 100,
      templates,
      handlers: {
        [FUNCTIONS.createOrder]: (_base, env) => {
          const base = createOrderHandler.withEnv({ ...env, ...overrides });
          return async (event, context) => {
            // Throttled before the write: nothing is written and the client retries (see below).
            if (faults.roll('dynamoThrottle')) return { statusCode: 500, body: '{"error":"throttled"}' };
            return base(event as APIGatewayProxyEvent, context);
          };
        },
        [FUNCTIONS.cancelOrder]: (_base, env) => {
          const base = cancelOrderHandler.withEnv({ ...env, ...overrides });
          return async (event, context) => {
            if (faults.roll('dynamoThrottle')) return { statusCode: 500, body: '{"error":"throttled"}' };
            return base(event as APIGatewayProxyEvent, context);
          };
        },
        [FUNCTIONS.relay]: (_base, env) => {
          const deps = relayDeps({ ...env, ...overrides });
          const relay: RelayDeps = {
            ...deps,
            publisher: faultyPublisher(deps.publisher, faults, {
              poisoned: (message, queueUrl) => poisonedAt(queueUrl)(message),
              timedOut,
            }),
            store: throttledStore(crashingAfterSend(deps.store, faults, crashed), faults),
          };
          return async (event) => {
            const records = (event as DynamoDBStreamEvent).Records.filter((record) => {
              if (!faults.roll('droppedStreamRecord')) return true;
              trouble.noteStreamMiss(String(record.dynamodb?.Keys?.messageId?.S), 'dropped');
              return false;
            });
            const { response, report } = await relayStreamEvent({ Records: records }, relay, quiet);
            sendTally.add(sendMetrics(report.topics));
            return response;
          };
        },
        [FUNCTIONS.receipts]: (_base, env) => {
          // The receipts function's core, as its handler composes it; its hop's faults are the receipts' own.
          const confirmer = new DynamoDeliveryConfirmer({
            client: createDocumentClient(awsClientConfig(env)),
            tableName: readSetting(env, OutboxSettings.outboxTable),
            retentionDays: readSetting(env, OutboxSettings.retentionDays),
            subscribers: topicsBySubscriber(env),
          });
          return async (event) => {
            const { response, report } = await applyReceiptEvent(event as SQSEvent, {
              confirmer,
              logger: quiet,
            });
            receiptTally.add(report);
            return response;
          };
        },
        [CONSUMERS.inventory]: consumerHandler('inventory'),
        [CONSUMERS.loyalty]: consumerHandler('loyalty'),
        // The drill runs two sweepers of its own, continuously (below).
        [FUNCTIONS.sweeper]: () => async () => ({}),
      },
    }),
  );

  try {
    subscriberOfQueue = new Map(
      SUBSCRIBERS.map((subscriber) => [output(runtime, QUEUE_OUTPUTS[subscriber].queue), subscriber]),
    );
    await seedStock(
      runtime.apiUrl,
      [...initialStock].map(([sku, available]) => ({ sku, available })),
    );
    const operator = new DrillOperator(adminDeps(runtime.env[FUNCTIONS.admin] ?? {}), (key) =>
      healed.add(key),
    );
    const run: DrillRun = {
      runtime,
      config,
      operator,
      overrides,
      skipTargets: new Set(),
      faults,
      poisoned,
      stalled,
      poisonedAt,
      timedOut,
      crashed,
      cancelled: new Set(),
      hotOrders: new Set(),
      rogueMessages: new Map(),
      random,
      progress,
      sendTally,
      trouble,
      receiptFaults,
      inFlight,
      acknowledged: new Set(),
    };
    const { writeMs, settleMs, sweepers, consumers, stop } = await driveUntilSettled(run);
    trace('pausing the pollers');
    await runtime.pausePollers();
    // An invocation that outlived its timeout is still running (Lambda would have stopped it), and one that handed
    // records back returned with their current call still out: both may still commit.
    await Promise.all(Object.values(runtime.functions).map((fn) => fn.idle()));
    await Promise.all(SUBSCRIBERS.map((subscriber) => inFlight[subscriber].settled()));
    trace('reading the tables and the dead-letter queues');

    const snapshot = await takeSnapshot((table) => scanAll(runtime, table), {
      initialStock,
      poisonedOrders: poisoned,
      stalledOrders: stalled,
      acknowledgedOrders: run.acknowledged,
      cancelledOrders: run.cancelled,
      hotOrders: run.hotOrders,
      rogueMessages: run.rogueMessages,
      deadLetters: Object.fromEntries(
        await Promise.all(
          SUBSCRIBERS.map(
            async (subscriber) =>
              [subscriber, await readDeadLetters(runtime, QUEUE_OUTPUTS[subscriber].deadLetters)] as const,
          ),
        ),
      ) as Record<Subscriber, Awaited<ReturnType<typeof readDeadLetters>>>,
      maxReceiveCount: readSetting(runtime.env[CONSUMERS.inventory] ?? {}, OutboxSettings.maxReceiveCount),
      operator: operator.facts(),
      receipts: receiptFaults.facts(),
      stop,
    });
    // The hot SKU's conflicts are real here, not injected: they are counted below.
    const injected = Object.fromEntries(
      Object.entries(faults.injected).filter(([kind]) => kind !== 'hotSkuConflict'),
    );
    return drillResult(
      {
        mode: 'moto',
        config,
        injected,
        deliveries,
        writeMs,
        settleMs,
        // Nothing is in flight any more: the metrics are read at the same point as the tables.
        metrics: {
          sends: sendTally.totals(),
          consumers: perSubscriber((subscriber) => consumerTallies[subscriber].totals()),
        },
        unreportedCommits: perSubscriber((subscriber) => commits[subscriber].counts()),
        receiptsApplied: receiptTally.totals(),
      },
      snapshot,
      {
        'sweeper steps that failed (left to the lease)': sweepers.errors(),
        'ordering gaps found by the sweepers (parked past the gap timeout)': sweepers.gaps(),
        [`inventory consumer invocations by the ${CONSUMER_SCALE_OUT} extra instances`]:
          consumers.invocations(),
        'hot SKU orders (one burst)': run.hotOrders.size,
        'TransactionConflict cancellations (concurrent consumers)': concurrency.conflicts,
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
        'receipts function invocations': receiptTally.invocations,
      },
    );
  } finally {
    await runtime.stop();
  }
}

function trace(step: string): void {
  if (process.env.DRILL_TRACE) process.stderr.write(`[drill] ${step}\n`);
}

/** What one drill run shares between its steps. */
interface DrillRun {
  readonly runtime: LocalRuntime;
  readonly config: DrillConfig;
  /** The operator acting on the outbox while the orders are written and settle. */
  readonly operator: DrillOperator;
  /** The drill's settings over each function's environment ({@link drillEnv}). */
  readonly overrides: Record<string, string>;
  /** Stalled orders (create alone poisoned, then cancelled) whose FAILED create the operator skips. */
  readonly skipTargets: Set<string>;
  readonly faults: FaultInjector;
  /** Orders whose messages SQS refuses forever; filled while the orders are written. */
  readonly poisoned: Set<string>;
  /** Orders whose create alone SQS refuses forever, and that are cancelled: their cancel stalls behind it. */
  readonly stalled: Set<string>;
  /** Which deliveries SQS refuses forever, by the queue they are sent to. */
  readonly poisonedAt: (
    queueUrl: string,
  ) => (message: Parameters<ReturnType<typeof poisonedDeliveries>>[0]) => boolean;
  /** Note the messages of a send that timed out, and a delivery whose sender stopped after its mark. */
  readonly timedOut: (queueUrl: string, messages: readonly { readonly messageId: string }[]) => void;
  readonly crashed: (key: string) => void;
  /** Orders the API acknowledged; filled while the orders are written. */
  readonly acknowledged: Set<string>;
  /** Orders whose cancel the API acknowledged; filled while the orders are written. */
  readonly cancelled: Set<string>;
  /** The burst's orders on the hot SKU; filled while the orders are written. */
  readonly hotOrders: Set<string>;
  /** Messages written straight into the outbox, by id, with what each must fail with. */
  readonly rogueMessages: Map<string, RogueMessage>;
  readonly random: () => number;
  readonly progress: Progress;
  /** What the senders would have published; the sweepers add their runs' sends. */
  readonly sendTally: MetricsTally;
  /** What went wrong for each delivery on its way, for the stop's check. */
  readonly trouble: DeliveryTrouble;
  readonly receiptFaults: ReceiptFaults;
  /** Each subscriber's consumer's calls in flight. */
  readonly inFlight: Readonly<Record<Subscriber, CallsInFlight>>;
}

/**
 * Writes the orders and waits until every delivery has settled, with two sweepers, the extra inventory consumers and
 * the stop of loyalty's consumer running all along; they are stopped however it ends.
 */
async function driveUntilSettled(run: DrillRun) {
  const sweepers = startSweepers(run);
  const consumers = await scaleOutConsumer(run.runtime, {
    functionName: CONSUMERS.inventory,
    queueUrl: output(run.runtime, QUEUE_OUTPUTS.inventory.queue),
    instances: CONSUMER_SCALE_OUT,
  });
  const ended = new AbortController();
  const stopping = stopSubscriber(run, ended.signal);
  // Awaited below; an early failure must not count as an unhandled rejection meanwhile.
  stopping.catch(() => {});
  try {
    const writeStarted = performance.now();
    await writeOrders(run);
    const writeMs = performance.now() - writeStarted;
    const settleStarted = performance.now();
    const stop = await stopping;
    await waitUntilSettled(run, run.acknowledged.size + run.cancelled.size);
    const settleMs = performance.now() - settleStarted;
    trace('settled');
    return { writeMs, settleMs, sweepers, consumers, stop };
  } finally {
    trace('stopping the sweepers and the extra consumers');
    // A run that failed before the stop ended must not wait for it: the stop gives up, loyalty running again.
    ended.abort();
    await Promise.all([sweepers.stop(), consumers.stop(), stopping.catch(() => {})]);
  }
}

/**
 * Stops loyalty's consumer from when 20 % of the orders are acknowledged until 50 % are, and then until inventory has
 * done all it can with its deliveries of the order messages written meanwhile — each settled, or held by a delay of
 * its own — for {@link STOP_BOUND_DEADLINES} confirmation deadlines more at most; then starts it again. Looks at the
 * outbox (and inventory's inbox, for its parked rows) no more than a third of the time, as the settle loop does.
 */
async function stopSubscriber(run: DrillRun, ended: AbortSignal): Promise<StopFacts> {
  const { runtime, config } = run;
  const pollers = runtime.pollers.filter((poller) => poller.functionName === CONSUMERS[STOPPED_SUBSCRIBER]);
  if (pollers.length === 0) throw new Error(`no poller invokes ${CONSUMERS[STOPPED_SUBSCRIBER]}`);
  const until = async (reached: () => boolean) => {
    while (!reached()) {
      if (ended.aborted) {
        for (const poller of pollers) poller.resume();
        throw new Error(`the run ended before ${STOPPED_SUBSCRIBER}'s stop did`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await until(() => run.acknowledged.size >= STOP_WINDOW.from * config.orders);
  trace(`stopping ${STOPPED_SUBSCRIBER}'s consumer`);
  await Promise.all(pollers.map((poller) => poller.pause()));
  await run.inFlight[STOPPED_SUBSCRIBER].settled();
  const stoppedAt = Date.now();
  await until(() => run.acknowledged.size >= STOP_WINDOW.to * config.orders);
  const plannedRestartAt = Date.now();
  const bound = plannedRestartAt + STOP_BOUND_DEADLINES * drillDeadlineMs(config.orders);
  let open: OpenDelivery[] = [];
  for (;;) {
    const lookedAt = Date.now();
    open = openDeliveries({
      run,
      outbox: await scanAll(runtime, 'outbox'),
      window: { from: stoppedAt, to: plannedRestartAt },
    });
    trace(
      `${open.length} open, ${open.filter((delivery) => delivery.ownDelay === undefined).length} on their way`,
    );
    if (open.every((delivery) => delivery.ownDelay !== undefined) || Date.now() >= bound || ended.aborted)
      break;
    // While orders are still being written, a scan of the outbox competes with their writes on the one emulator:
    // looked at no more than a fifth of the time, every few seconds.
    const scanMs = Date.now() - lookedAt;
    await new Promise((resolve) => setTimeout(resolve, Math.max(STOP_POLL_MS, 4 * scanMs)));
  }
  const awaited = countAwaited(
    await scanAll(runtime, 'outbox'),
    { from: stoppedAt, to: plannedRestartAt },
    run.hotOrders,
  );
  trace(`starting ${STOPPED_SUBSCRIBER}'s consumer again`);
  for (const poller of pollers) poller.resume();
  return {
    subscriber: STOPPED_SUBSCRIBER,
    running: RUNNING_SUBSCRIBER,
    stoppedAt,
    plannedRestartAt,
    restartedAt: Date.now(),
    awaited,
    openAtRestart: open,
  };
}

/**
 * Whether a row is the running subscriber's delivery of a regular order's message written in `window`: the hot SKU's
 * burst apart, whose delay is the contention on one item (the running subscriber's own), as in the latency split.
 */
function isAwaited(
  row: Readonly<Record<string, unknown>>,
  window: { readonly from: number; readonly to: number },
  burst: ReadonlySet<string>,
) {
  const writtenAt = Date.parse(String(row.createdAt));
  return (
    row.subscriber === RUNNING_SUBSCRIBER &&
    (row.topic === ORDER_CREATED || row.topic === ORDER_CANCELLED) &&
    !String(row.aggregateId).startsWith('rogue-') &&
    !burst.has(String(row.aggregateId)) &&
    writtenAt >= window.from &&
    writtenAt < window.to
  );
}

function countAwaited(
  outbox: readonly Record<string, unknown>[],
  window: { readonly from: number; readonly to: number },
  burst: ReadonlySet<string>,
) {
  return outbox.filter((row) => isAwaited(row, window, burst)).length;
}

/**
 * The running subscriber's deliveries written in `window` that are neither settled nor held as designed behind a
 * FAILED predecessor (whether such a one is parked as it should be, the invariants check from the inbox at the end).
 */
function openDeliveries(of: {
  readonly run: DrillRun;
  readonly outbox: readonly Record<string, unknown>[];
  readonly window: { readonly from: number; readonly to: number };
}): OpenDelivery[] {
  const { run, outbox, window } = of;
  const bySequence = new Map(outbox.map((row) => [`${String(row.orderKey)}#${String(row.seq)}`, row]));
  const predecessorOf = (row: Record<string, unknown>) =>
    typeof row.seq === 'number' && row.seq > 1
      ? bySequence.get(`${String(row.orderKey)}#${row.seq - 1}`)
      : undefined;
  const settled = (row: Record<string, unknown>) =>
    SETTLED_STATUSES.has(row.status) || predecessorOf(row)?.status === MessageStatus.FAILED;
  const now = Date.now();
  return outbox
    .filter((row) => isAwaited(row, window, run.hotOrders) && !settled(row))
    .map((row) => {
      const key = String(row.messageId);
      const predecessor = predecessorOf(row);
      const trouble = run.trouble.of(key) ?? run.receiptFaults.troubleOf(key);
      const ownDelay = ownDelayOf(row, {
        ...(predecessor === undefined ? {} : { predecessor }),
        ...(trouble === undefined ? {} : { trouble }),
        now,
      });
      return { key, status: String(row.status), ...(ownDelay === undefined ? {} : { ownDelay }) };
    });
}

/** Two sweepers side by side, each looping in short runs, one of which may crash at any step. */
function startSweepers(run: DrillRun) {
  const { runtime, faults, random, sendTally, overrides } = run;
  let running = true;
  let errors = 0;
  let gaps = 0;
  const loop = async (name: string) => {
    for (let round = 0; running; round += 1) {
      const deps = sweeperDeps({ ...runtime.env[FUNCTIONS.sweeper], ...overrides });
      const deadline = Date.now() + 5_000;
      try {
        const report = await sweep({
          ...deps,
          publisher: faultyPublisher(deps.publisher, faults, {
            poisoned: (message, queueUrl) => run.poisonedAt(queueUrl)(message),
            timedOut: run.timedOut,
          }),
          store: crashingSweeperStore(
            throttledStore(crashingAfterSend(deps.store, faults, run.crashed), faults),
            faults,
            random,
          ),
          owner: `${name}-${round}`,
          remainingMs: () => (running ? deadline - Date.now() : 0),
          // The shipped idle pause: every idle round queries each due shard, and moto answers a query on an index by
          // reading the whole table (two sweepers at 500 ms made those queries the emulator's biggest load).
          settings: { ...deps.settings, leaseMs: LEASE_MS, stopBeforeMs: 0 },
        });
        errors += report.errors;
        gaps += Object.values(report.orderingGaps).reduce((sum, found) => sum + found, 0);
        sendTally.add(sendMetrics(report.topics));
      } catch {
        errors += 1;
      }
    }
  };
  const loops = [loop('sweeper-a'), loop('sweeper-b')];
  return {
    errors: () => errors,
    gaps: () => gaps,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** One order to create: its id and the request body. */
interface OrderRequest {
  readonly orderId: string;
  readonly body: string;
}

/**
 * Creates the orders through the API with a few concurrent clients that retry a 5xx with the same id. Halfway
 * through, the burst: every hot-SKU order posted one after another by as many clients more, and the rogue messages
 * written beside them.
 */
async function writeOrders(run: DrillRun): Promise<void> {
  const { config, random, poisoned, stalled, progress, acknowledged } = run;
  const regularOrders = config.orders - hotOrderCount(config.orders);
  const requests = Array.from({ length: config.orders }, (_, index): OrderRequest => {
    const orderId = `drill-${config.seed}-${String(index + 1).padStart(6, '0')}`;
    // The first order's create alone is poisoned and the order is cancelled: its cancel must stall behind it. The
    // second is poisoned the same way; the operator skips its FAILED create at inventory and replays it at loyalty
    // once fixed: its cancel must then be applied at both.
    if (index === 0) stalled.add(orderId);
    else if (index === 1) {
      stalled.add(orderId);
      run.skipTargets.add(orderId);
    } else if (random() < config.poisonRate) poisoned.add(orderId);
    const hot = index >= regularOrders;
    if (hot) run.hotOrders.add(orderId);
    return {
      orderId,
      body: JSON.stringify({
        orderId,
        customerId: `customer-${index % 17}`,
        items: hot ? hotOrderItems(random) : randomOrderItems(random, config.skus),
      }),
    };
  });
  // Some orders are cancelled right after their create (the cancel often races it through the pipeline; the client
  // goes on meanwhile), others once every order is written; the stalled one late, when its create is deep in its
  // retries.
  const later: string[] = [];
  const immediate: Promise<void>[] = [];
  const cancel = async (orderId: string) => {
    await postCancel(run.runtime, orderId);
    run.cancelled.add(orderId);
  };
  let replays = 0;
  let eraseTarget = false;
  let withdrawals = 0;
  const post = async (request: OrderRequest) => {
    const { orderId } = request;
    const messageId = await postOrder(run.runtime, request);
    acknowledged.add(orderId);
    progress(acknowledged.size, config.orders * 2, `written ${acknowledged.size}/${config.orders}`);
    if (messageId !== undefined && run.skipTargets.has(orderId)) {
      run.operator.skipWhenFailed(orderId, messageId, 'inventory');
      run.operator.replayWhenFailed(orderId, messageId, 'loyalty');
    } else if (messageId !== undefined && poisoned.has(orderId) && replays < OPERATOR_REPLAYS.length) {
      for (const subscriber of OPERATOR_REPLAYS[replays] ?? [])
        run.operator.replayWhenFailed(orderId, messageId, subscriber);
      replays += 1;
    }
    if (stalled.has(orderId)) later.push(orderId);
    else if (random() < config.cancelRate) {
      if (random() >= IMMEDIATE_CANCEL_SHARE) later.push(request.orderId);
      else {
        const cancelled = cancel(request.orderId);
        // Awaited once the clients are done; an early failure must not count as an unhandled rejection meanwhile.
        cancelled.catch(() => {});
        immediate.push(cancelled);
      }
    } else if (messageId !== undefined && !poisoned.has(orderId) && !run.hotOrders.has(orderId)) {
      // An order that stays as written: the operator withdraws some at once (racing the relay) — the whole message,
      // or one subscriber's delivery — and erases one once it has settled.
      const withdraw = random() < OPERATOR_CANCEL_SHARE;
      // The first few such orders always: a small drill withdraws a whole message and each delivery too.
      if (withdraw || withdrawals < MIN_WITHDRAWALS) {
        const target = withdrawalTarget(withdrawals);
        withdrawals += 1;
        await run.operator.cancelAfterWrite(messageId, target);
      } else if (!eraseTarget) {
        eraseTarget = true;
        run.operator.eraseWhenConfirmed(orderId, messageId);
      }
    }
  };
  let burst: Promise<unknown> | undefined;
  const burstWhenHalfway = () => {
    if (burst !== undefined || acknowledged.size < regularOrders / 2) return;
    // The burst's orders follow one another as fast as the clients take them (all at once, they timed CreateOrder
    // out on moto, see CLIENT_CONCURRENCY): they still wait in inventory's queue together.
    const hot = requests.slice(regularOrders);
    let nextHot = 0;
    const hotClient = async () => {
      for (let request = hot[nextHot++]; request !== undefined; request = hot[nextHot++]) await post(request);
    };
    burst = Promise.all([...Array.from({ length: CLIENT_CONCURRENCY }, hotClient), writeRogueMessages(run)]);
    // Awaited once the clients are done; an early failure must not count as an unhandled rejection meanwhile.
    burst.catch(() => {});
  };
  const regular = requests.slice(0, regularOrders);
  let next = 0;
  const client = async () => {
    burstWhenHalfway();
    for (let request = regular[next++]; request !== undefined; request = regular[next++]) {
      await post(request);
      burstWhenHalfway();
    }
  };
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, client));
  burstWhenHalfway();
  await burst;
  await Promise.all(immediate);
  // The later cancels go through the same few clients: all at once, they timed out the cancel function by the dozen.
  let nextCancel = 0;
  const canceller = async () => {
    for (let orderId = later[nextCancel++]; orderId !== undefined; orderId = later[nextCancel++]) {
      await cancel(orderId);
    }
  };
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, canceller));
}

/**
 * How long a client keeps retrying a request answered 5xx before it gives up (and the drill fails): a busy moto
 * times the 10 s API functions out by the dozen, so a client backs off exponentially to 5 s between tries, as an
 * SDK's retries would, for a few minutes.
 */
const CLIENT_PATIENCE_MS = 5 * 60_000;

/** The pause before retry `attempt` of a request answered 5xx: 100 ms doubling, at most 5 s. */
function clientBackoffMs(attempt: number): number {
  return Math.min(5_000, 100 * 2 ** (attempt - 1));
}

/** POSTs the cancel of one order, retrying a 5xx (a repeated cancel is answered 409: already cancelled). */
async function postCancel(runtime: LocalRuntime, orderId: string): Promise<void> {
  const giveUpAt = Date.now() + CLIENT_PATIENCE_MS;
  for (let attempt = 1; ; attempt += 1) {
    const response = await fetch(`${runtime.apiUrl}/orders/${encodeURIComponent(orderId)}/cancel`, {
      method: 'POST',
    });
    if (response.status === 202 || response.status === 409) return;
    if (response.status < 500 || Date.now() >= giveUpAt)
      throw new Error(`POST /orders/${orderId}/cancel answered ${response.status}: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, clientBackoffMs(attempt)));
  }
}

/**
 * POSTs one order, retrying a 5xx with the same order id (the write is idempotent by order id); the id of its
 * message when the answer names it (a 409 does not).
 */
async function postOrder(runtime: LocalRuntime, request: OrderRequest): Promise<string | undefined> {
  const giveUpAt = Date.now() + CLIENT_PATIENCE_MS;
  for (let attempt = 1; ; attempt += 1) {
    const response = await fetch(`${runtime.apiUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: request.body,
    });
    // A retry of a request that was written after all is answered with the original 201 (the order id is an
    // idempotency key); 409 only when it raced a concurrent attempt of itself.
    if (response.status === 201) return ((await response.json()) as { messageId?: string }).messageId;
    if (response.status === 409) return undefined;
    if (response.status < 500 || Date.now() >= giveUpAt)
      throw new Error(`POST /orders answered ${response.status}: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, clientBackoffMs(attempt)));
  }
}

/**
 * Writes the rogue messages straight into the outbox table, behind the writer's back (as an older version or
 * another tool could have), a delivery row per subscriber: a bigint, a Set and an oversized payload through the
 * Document client, and a number JavaScript cannot read back through the low-level client.
 */
async function writeRogueMessages(run: DrillRun): Promise<void> {
  const { runtime, rogueMessages } = run;
  const tableName = output(runtime, 'outboxTableName');
  const options = {
    now: new Date(),
    dueShards: readSetting(runtime.env[FUNCTIONS.sweeper] ?? {}, OutboxSettings.dueShards),
    subscribers: SUBSCRIBERS,
  };
  const low = new DynamoDBClient(runtime.clientConfig);
  const client = DynamoDBDocumentClient.from(low);
  try {
    for (const rogue of rogueOutboxItems(options)) {
      for (const item of rogue.items) await client.send(new PutCommand({ TableName: tableName, Item: item }));
      rogueMessages.set(rogue.messageId, rogue.expected);
    }
    const unreadable = rogueUnreadableNumberItem(options);
    for (const attributes of unreadable.attributes)
      await low.send(new PutItemCommand({ TableName: tableName, Item: attributes }));
    rogueMessages.set(unreadable.messageId, unreadable.expected);
  } finally {
    client.destroy();
  }
}

/**
 * Waits until every delivery is CONFIRMED, FAILED or CANCELLED, or stalled as designed behind a FAILED predecessor
 * (held PENDING, or delivered and parked), reading the outbox and each subscriber's inbox table.
 */
async function waitUntilSettled(run: DrillRun, messages: number): Promise<void> {
  const { runtime, progress, operator } = run;
  const deadline = Date.now() + settleTimeoutMs(run.config.orders);
  const rows = messages * SUBSCRIBERS.length;
  while (Date.now() < deadline) {
    const polledAt = Date.now();
    await operator.step();
    const outbox = await scanAll(runtime, 'outbox');
    const inboxes = Object.fromEntries(
      await Promise.all(
        SUBSCRIBERS.map(async (subscriber) => {
          const table = await scanAll(runtime, `${subscriber}Inbox`);
          const parked = (row: Record<string, unknown>) => String(row.messageId).startsWith('parked#');
          return [
            subscriber,
            { inbox: table.filter((row) => !parked(row)), parked: table.filter(parked) },
          ] as const;
        }),
      ),
    ) as Record<Subscriber, { inbox: Record<string, unknown>[]; parked: Record<string, unknown>[] }>;
    const stalled = stalledDeliveries(outbox, inboxes);
    const waitsAsDesigned = (key: string) => {
      const stall = stalled.get(key);
      return stall !== undefined && stall.problem === undefined;
    };
    const unsettled = outbox.filter(
      (row) => !TERMINAL.has(String(row.status)) && !waitsAsDesigned(String(row.messageId)),
    );
    progress(rows + (rows - unsettled.length), rows * 2, `settling: ${unsettled.length} open deliveries`);
    if (process.env.DRILL_TRACE) {
      trace(
        `${unsettled.length} open: ${unsettled
          .slice(0, 5)
          .map(
            (row) =>
              `${String(row.topic)} ${String(row.aggregateId)}@${String(row.subscriber)} ${String(row.status)} a=${String(row.attempts)} r=${String(row.resends ?? 0)}`,
          )
          .join('; ')}; operator done: ${operator.done()}`,
      );
    }
    if (unsettled.length === 0 && outbox.length >= rows && operator.done()) return;
    // The scans cost the emulator what they cost the pipeline: polled at most a quarter of the time, the watcher
    // never takes the backend it watches (three consistent scans take seconds on a busy moto).
    const scanMs = Date.now() - polledAt;
    await new Promise((resolve) => setTimeout(resolve, Math.max(SETTLE_POLL_MS, 3 * scanMs)));
  }
}
