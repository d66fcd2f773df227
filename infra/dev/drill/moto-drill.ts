import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { planInventory } from '../../../functions/inventory/apply-order/plan-inventory.ts';
import { stockConflictKeys } from '../../../functions/inventory/apply-order/stock-conflict-keys.ts';
import { handler as cancelOrderHandler } from '../../../functions/orders/cancel-order/handler.ts';
import { handler as createOrderHandler } from '../../../functions/orders/create-order/handler.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import { adminDeps } from '../../../shared/admin/index.ts';
import {
  type Envelope,
  MessageStatus,
  OutboxSettings,
  readSetting,
  requireEnv,
} from '../../../shared/index.ts';
import {
  consumeMetrics,
  consumerParts,
  consumeSqsEvent,
  relayDeps,
  relayStreamEvent,
  sendMetrics,
  sweeperDeps,
} from '../../../shared/lambda/index.ts';
import { DEFAULT_SWEEPER_SETTINGS, type RelayDeps, sweep } from '../../../shared/memory/index.ts';
import { seedStock } from '../../stacks/local-plugin.ts';
import { type LocalRuntime, startLocalRuntime } from '../local/host/runtime.ts';
import { CallsInFlight } from './calls-in-flight.ts';
import { scaleOutConsumer } from './consumer-scale-out.ts';
import { OptimisticConcurrency } from './contention.ts';
import { type DrillConfig, type DrillResult, drillRates, type Progress } from './drill-config.ts';
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
import {
  type DeadLetterCopy,
  type DrillTable,
  deadLetterCounts,
  drillResult,
  ORDER_SCOPE,
  stalledMessages,
  takeSnapshot,
} from './invariants.ts';
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
import { type RogueMessage, rogueOutboxItems, rogueUnreadableNumberItem } from './rogue-messages.ts';
import { UnreportedCommits } from './unreported-commits.ts';

/** The drill's retry policy for both order topics. */
const DRILL_RETRY = { baseDelayMs: 500, multiplier: 2, maxDelayMs: 3_000, maxAttempts: 8 };

/**
 * How long a SENT message may go unconfirmed, and a message wait for its predecessor, before the sweeper acts: the
 * time the pipeline needs at this size, from 30 s (30 orders) to 2 minutes (200 orders and more). Every message
 * that lost its copy to an injected fault (a crash between the SENT mark and the send, a dead-lettered copy) waits
 * this long before reconciliation resends it, so the drill's settling time is a few of these. Not shorter than
 * the pipeline's p95 (about a minute for 200 orders on a busy moto): a consumer that is merely behind is then
 * taken for a lost delivery, and at 30 s for 200 orders reconciliation resent most messages several times, each
 * resend costing the one emulator every hop shares a claim, a send, a mark and a delivery, until the consumer fell
 * minutes behind. The gap timeout is as long: past it the sweeper resends the predecessor, which a consumer that
 * is merely behind has not reached yet (at 20 s, every parked cancel brought its create another copy every 20 s).
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
 * deadline (each round's deadline doubles: 1 + 2 + 4 + 8 deadlines), and 5 minutes more. A message whose send's
 * outcome was left unknown (a timeout, a crash, a throttled bookkeeping write after a refusal) waits a round for
 * reconciliation, and one SQS refuses forever must be refused 8 times before it is FAILED: at the default size a
 * fixed 15 minutes left one such message short of FAILED (seed 295460, 200 orders).
 */
function settleTimeoutMs(orders: number): number {
  return 15 * drillDeadlineMs(orders) + 5 * 60_000;
}
/** The shortest pause between two looks at the tables while the pipeline settles. */
const SETTLE_POLL_MS = 1_000;
const CLIENT_CONCURRENCY = 8;
/** Of the orders neither cancelled by their client nor poisoned, the share whose create an operator cancels at once. */
const OPERATOR_CANCEL_SHARE = 0.1;
/** FAILED messages of poisoned orders an operator replays once their cause is fixed (SQS takes them then). */
const OPERATOR_REPLAYS = 3;
const CONSUMER = 'Outbox/InventoryConsumer';
/** Consumer invocations beside the runtime's poller, so that orders for one SKU meet in concurrent transactions. */
const CONSUMER_SCALE_OUT = 4;
const TERMINAL: ReadonlySet<string> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);

/**
 * The fault drill on moto: the real handlers behind the local runtime's API, stream and queue pollers, with
 * every hop's adapter wrapped by the fault injector, two sweepers running side by side, the consumer scaled out
 * to concurrent invocations under DynamoDB's optimistic concurrency (so the burst on the hot SKU meets real
 * conflicts), rogue messages written behind the writer's back, and the invariants checked from the emulator's
 * tables and the consumer's dead-letter queue once everything has settled.
 */
export async function runMotoDrill(config: DrillConfig, progress: Progress): Promise<DrillResult> {
  const overrides = drillEnv(config.orders);
  const faults = new FaultInjector(drillRates(config), seededRandom(config.seed + 1));
  const random = seededRandom(config.seed);
  const poisoned = new Set<string>();
  const stalled = new Set<string>();
  const healed = new Set<string>();
  const poison = poisonedMessages({ orders: poisoned, createsOf: stalled, healed });
  // moto never answers TransactionConflict: the consumer's client gets DynamoDB's optimistic concurrency.
  const concurrency = new OptimisticConcurrency();
  // What the functions would have published, from the same cores and the same functions as the handler factories.
  const metrics = new MetricsTally();
  const commits = new UnreportedCommits();
  const inFlight = new CallsInFlight();
  let deliveries = 0;
  // The consumer logs one line per record it handled: consumed, or failed (whatever became of it).
  const counting = commits.logger(() => {
    deliveries += 1;
  });
  const quiet = { info: () => {}, warn: () => {} };

  const initialStock = new Map(
    Array.from({ length: config.skus }, (_, i) => [skuName(i), config.initialStock]),
  );
  initialStock.set(HOT_SKU, hotStock(config.orders));
  // The example's functions by their names in the template (their construct paths).
  const runtime = await startLocalRuntime({
    port: 0,
    log: () => {},
    pollIntervalMs: 100,
    handlers: {
      CreateOrder: (_base, env) => {
        const base = createOrderHandler.withEnv({ ...env, ...overrides });
        return async (event, context) => {
          // Throttled before the write: nothing is written and the client retries (see below).
          if (faults.roll('dynamoThrottle')) return { statusCode: 500, body: '{"error":"throttled"}' };
          return base(event as APIGatewayProxyEvent, context);
        };
      },
      CancelOrder: (_base, env) => {
        const base = cancelOrderHandler.withEnv({ ...env, ...overrides });
        return async (event, context) => {
          if (faults.roll('dynamoThrottle')) return { statusCode: 500, body: '{"error":"throttled"}' };
          return base(event as APIGatewayProxyEvent, context);
        };
      },
      'Outbox/Relay': (_base, env) => {
        const deps = relayDeps({ ...env, ...overrides });
        const relay: RelayDeps = {
          ...deps,
          publisher: faultyPublisher(deps.publisher, faults, poison),
          store: throttledStore(crashingAfterSend(deps.store, faults), faults),
        };
        return async (event) => {
          const records = (event as DynamoDBStreamEvent).Records.filter(
            () => !faults.roll('droppedStreamRecord'),
          );
          const { response, report } = await relayStreamEvent({ Records: records }, relay, quiet);
          metrics.add(sendMetrics(report.topics));
          return response;
        };
      },
      [CONSUMER]: (_base, env) => {
        const { plan, deps, failures } = consumerParts({ ...env, ...overrides }, (consumerEnv) =>
          planInventory(requireEnv(consumerEnv, 'INVENTORY_TABLE'), () => new Date()),
        );
        const faulty = inFlight.track(
          faultyConsumerDeps(
            { ...deps, client: faultyDocumentClient(concurrency.wrap(deps.client), faults) },
            faults,
            commits,
          ),
        );
        return async (event, context) => {
          const { response, topics } = await commits.invocation(() =>
            // The shipped handler's conflict keys: a batch's orders for different SKUs apply at once, one SKU's in turn.
            consumeSqsEvent(event as SQSEvent, context as Context, {
              plan,
              deps: faulty,
              logger: counting,
              failures,
              conflictKeys: stockConflictKeys,
            }),
          );
          metrics.add(consumeMetrics(topics));
          return response;
        };
      },
      // The drill runs two sweepers of its own, continuously (below).
      'Outbox/Sweeper': () => async () => ({}),
    },
  });

  try {
    await seedStock(
      runtime.apiUrl,
      [...initialStock].map(([sku, available]) => ({ sku, available })),
    );
    const operator = new DrillOperator(adminDeps(runtime.env['Outbox/Admin'] ?? {}), (messageId) =>
      healed.add(messageId),
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
      poison,
      cancelled: new Set(),
      hotOrders: new Set(),
      rogueMessages: new Map(),
      random,
      progress,
      metrics,
    };
    const { acknowledged, writeMs, settleMs, sweepers, consumers } = await driveUntilSettled(run);
    trace('pausing the pollers');
    await runtime.pausePollers();
    // An invocation that outlived its timeout is still running (Lambda would have stopped it), and one that handed
    // records back returned with their current call still out: both may still commit.
    await Promise.all(Object.values(runtime.functions).map((fn) => fn.idle()));
    await inFlight.settled();
    trace('reading the tables and the dead-letter queue');
    // Nothing is in flight any more: the metrics are read at the same point as the tables.
    const observed = metrics.totals();
    const unreportedCommits = commits.counts();

    const snapshot = await takeSnapshot((table) => scanAll(runtime, table), {
      initialStock,
      poisonedOrders: poisoned,
      stalledOrders: stalled,
      acknowledgedOrders: acknowledged,
      cancelledOrders: run.cancelled,
      hotOrders: run.hotOrders,
      rogueMessages: run.rogueMessages,
      deadLetters: await readDeadLetters(runtime),
      maxReceiveCount: readSetting(runtime.env[CONSUMER] ?? {}, OutboxSettings.maxReceiveCount),
      operator: operator.facts(),
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
        metrics: observed,
        unreportedCommits,
      },
      snapshot,
      {
        'sweeper steps that failed (left to the lease)': sweepers.errors(),
        'ordering gaps found by the sweepers (parked past the gap timeout)': sweepers.gaps(),
        [`consumer invocations by the ${CONSUMER_SCALE_OUT} extra instances`]: consumers.invocations(),
        'hot SKU orders (one burst)': run.hotOrders.size,
        'TransactionConflict cancellations (concurrent consumers)': concurrency.conflicts,
        'dead letters sent by the consumer, with its reason': deadLetterCounts(snapshot.deadLetters)
          .byConsumer,
        "dead letters moved by the queue's redrive policy (no reason)": deadLetterCounts(snapshot.deadLetters)
          .byRedrivePolicy,
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
  /** Which messages SQS refuses forever (those of `poisoned`, and the creates of `stalled`). */
  readonly poison: (message: Envelope) => boolean;
  /** Orders whose cancel the API acknowledged; filled while the orders are written. */
  readonly cancelled: Set<string>;
  /** The burst's orders on the hot SKU; filled while the orders are written. */
  readonly hotOrders: Set<string>;
  /** Messages written straight into the outbox, by id, with what each must fail with. */
  readonly rogueMessages: Map<string, RogueMessage>;
  readonly random: () => number;
  readonly progress: Progress;
  /** What the functions would have published; the sweepers add their runs' sends. */
  readonly metrics: MetricsTally;
}

/**
 * Writes the orders and waits until every message has settled, with two sweepers and the extra consumers running
 * all along; they are stopped however it ends.
 */
async function driveUntilSettled(run: DrillRun) {
  const sweepers = startSweepers(run);
  const consumers = await scaleOutConsumer(run.runtime, {
    functionName: CONSUMER,
    queueUrl: output(run.runtime, 'orderEventsQueueUrl'),
    instances: CONSUMER_SCALE_OUT,
  });
  try {
    const writeStarted = performance.now();
    const acknowledged = await writeOrders(run);
    const writeMs = performance.now() - writeStarted;
    const settleStarted = performance.now();
    await waitUntilSettled(run, acknowledged.size + run.cancelled.size);
    const settleMs = performance.now() - settleStarted;
    trace('settled');
    return { acknowledged, writeMs, settleMs, sweepers, consumers };
  } finally {
    trace('stopping the sweepers and the extra consumers');
    await Promise.all([sweepers.stop(), consumers.stop()]);
  }
}

/** Two sweepers side by side, each looping in short runs, one of which may crash at any step. */
function startSweepers(run: DrillRun) {
  const { runtime, faults, poison, random, metrics, overrides } = run;
  let running = true;
  let errors = 0;
  let gaps = 0;
  const loop = async (name: string) => {
    for (let run = 0; running; run += 1) {
      const deps = sweeperDeps({ ...runtime.env['Outbox/Sweeper'], ...overrides });
      const deadline = Date.now() + 5_000;
      try {
        const report = await sweep({
          ...deps,
          publisher: faultyPublisher(deps.publisher, faults, poison),
          store: crashingSweeperStore(
            throttledStore(crashingAfterSend(deps.store, faults), faults),
            faults,
            random,
          ),
          owner: `${name}-${run}`,
          remainingMs: () => (running ? deadline - Date.now() : 0),
          // The shipped idle pause: every idle round queries each due shard, and moto answers a query on an index by
          // reading the whole table (two sweepers at 500 ms made those queries the emulator's biggest load).
          settings: { ...DEFAULT_SWEEPER_SETTINGS, leaseMs: LEASE_MS, stopBeforeMs: 0 },
        });
        errors += report.errors;
        gaps += Object.values(report.orderingGaps).reduce((sum, found) => sum + found, 0);
        metrics.add(sendMetrics(report.topics));
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
 * through, the burst: every hot-SKU order posted at once, and the rogue messages written beside them.
 */
async function writeOrders(run: DrillRun): Promise<Set<string>> {
  const { config, random, poisoned, stalled, progress } = run;
  const acknowledged = new Set<string>();
  const regularOrders = config.orders - hotOrderCount(config.orders);
  const requests = Array.from({ length: config.orders }, (_, index): OrderRequest => {
    const orderId = `drill-${config.seed}-${String(index + 1).padStart(6, '0')}`;
    // The first order's create alone is poisoned and the order is cancelled: its cancel must stall behind it. The
    // second is poisoned the same way, and the operator skips its FAILED create: its cancel must then be applied.
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
  let firstWithdrawn = false;
  const post = async (request: OrderRequest) => {
    const { orderId } = request;
    const messageId = await postOrder(run.runtime, request);
    acknowledged.add(orderId);
    progress(acknowledged.size, config.orders * 2, `written ${acknowledged.size}/${config.orders}`);
    if (messageId !== undefined && run.skipTargets.has(orderId))
      run.operator.skipWhenFailed(orderId, messageId);
    else if (messageId !== undefined && poisoned.has(orderId) && replays < OPERATOR_REPLAYS) {
      replays += 1;
      run.operator.replayWhenFailed(orderId, messageId);
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
      // An order that stays as written: the operator withdraws some at once (racing the relay), and erases one
      // once it has settled.
      const withdraw = random() < OPERATOR_CANCEL_SHARE;
      // The first such order always: a small drill then withdraws one too.
      if (withdraw || !firstWithdrawn) {
        firstWithdrawn = true;
        await run.operator.cancelAfterWrite(messageId);
      } else if (!eraseTarget) {
        eraseTarget = true;
        run.operator.eraseWhenConfirmed(orderId, messageId);
      }
    }
  };
  let burst: Promise<unknown> | undefined;
  const burstWhenHalfway = () => {
    if (burst !== undefined || acknowledged.size < regularOrders / 2) return;
    burst = Promise.all([...requests.slice(regularOrders).map(post), writeRogueMessages(run)]);
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
  return acknowledged;
}

/** POSTs the cancel of one order, retrying a 5xx (a repeated cancel is answered 409: already cancelled). */
async function postCancel(runtime: LocalRuntime, orderId: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const response = await fetch(`${runtime.apiUrl}/orders/${encodeURIComponent(orderId)}/cancel`, {
      method: 'POST',
    });
    if (response.status === 202 || response.status === 409) return;
    if (response.status < 500 || attempt >= 20)
      throw new Error(`POST /orders/${orderId}/cancel answered ${response.status}: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
  }
}

/**
 * POSTs one order, retrying a 5xx with the same order id (the write is idempotent by order id); the id of its
 * message when the answer names it (a 409 does not).
 */
async function postOrder(runtime: LocalRuntime, request: OrderRequest): Promise<string | undefined> {
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
    if (response.status < 500 || attempt >= 20)
      throw new Error(`POST /orders answered ${response.status}: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
  }
}

/**
 * Writes the rogue messages straight into the outbox table, behind the writer's back (as an older version or
 * another tool could have): a bigint, a Set and an oversized payload through the Document client, and a number
 * JavaScript cannot read back through the low-level client.
 */
async function writeRogueMessages(run: DrillRun): Promise<void> {
  const { runtime, rogueMessages } = run;
  const tableName = output(runtime, 'outboxTableName');
  const options = {
    now: new Date(),
    dueShards: readSetting(runtime.env['Outbox/Sweeper'] ?? {}, OutboxSettings.dueShards),
  };
  const low = new DynamoDBClient(runtime.clientConfig);
  const client = DynamoDBDocumentClient.from(low);
  try {
    for (const rogue of rogueOutboxItems(options)) {
      await client.send(new PutCommand({ TableName: tableName, Item: rogue.item }));
      rogueMessages.set(rogue.messageId, rogue.expected);
    }
    const unreadable = rogueUnreadableNumberItem(options);
    await low.send(new PutItemCommand({ TableName: tableName, Item: unreadable.attributes }));
    rogueMessages.set(unreadable.messageId, unreadable.expected);
  } finally {
    client.destroy();
  }
}

/**
 * Waits until every message is CONFIRMED or FAILED, or stalled as designed behind a FAILED predecessor (held
 * PENDING, or delivered and parked), reading the outbox and inbox tables.
 */
async function waitUntilSettled(run: DrillRun, orders: number): Promise<void> {
  const { runtime, progress, operator } = run;
  const deadline = Date.now() + settleTimeoutMs(run.config.orders);
  while (Date.now() < deadline) {
    const polledAt = Date.now();
    await operator.step();
    const outbox = await scanAll(runtime, 'outbox');
    const inbox = await scanAll(runtime, 'inbox');
    const stalled = stalledMessages({
      outbox,
      inbox: inbox.filter((row) => typeof row.outcome === 'string'),
      parked: inbox.filter((row) => typeof row.parkedMessageId === 'string'),
    });
    const waitsAsDesigned = (messageId: string) => {
      const stall = stalled.get(messageId);
      return stall !== undefined && stall.problem === undefined;
    };
    const open = outbox.filter(
      (message) => !TERMINAL.has(String(message.status)) && !waitsAsDesigned(String(message.messageId)),
    ).length;
    progress(orders + (orders - open), orders * 2, `settling: ${open} open`);
    if (process.env.DRILL_TRACE) {
      const unsettled = outbox.filter(
        (message) => !TERMINAL.has(String(message.status)) && !waitsAsDesigned(String(message.messageId)),
      );
      trace(
        `${open} open: ${unsettled
          .slice(0, 5)
          .map(
            (m) =>
              `${String(m.topic)} ${String(m.aggregateId)} ${String(m.status)} a=${String(m.attempts)} r=${String(m.resends ?? 0)}`,
          )
          .join('; ')}; operator done: ${operator.done()}`,
      );
    }
    if (open === 0 && outbox.length >= orders && operator.done()) return;
    // The scans cost the emulator what they cost the pipeline: polled at most a third of the time, the watcher
    // never takes the backend it watches (two consistent scans took 4–12 s on a busy moto, polled every second).
    const scanMs = Date.now() - polledAt;
    await new Promise((resolve) => setTimeout(resolve, Math.max(SETTLE_POLL_MS, 2 * scanMs)));
  }
}

/** Every item of one of the example's tables, found through the stack's `<table>TableName` output. */
async function scanAll(runtime: LocalRuntime, table: DrillTable): Promise<Record<string, unknown>[]> {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient(runtime.clientConfig), {
    // The rogue number (1e20) cannot be read as a JavaScript number: keep its text.
    unmarshallOptions: { wrapNumbers: (text: string) => (isReadable(text) ? Number(text) : text) },
  });
  const items: Record<string, unknown>[] = [];
  const pages = paginateScan(
    { client },
    { TableName: output(runtime, `${table}TableName`), ConsistentRead: true },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  client.destroy();
  return items;
}

function isReadable(text: string): boolean {
  const value = Number(text);
  return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
}

/**
 * Everything in the consumer's dead-letter queue, with its attributes (the reason it is there). The drill is
 * over: each receive hides what it returned, so the next one returns the rest.
 */
async function readDeadLetters(runtime: LocalRuntime): Promise<DeadLetterCopy[]> {
  const sqs = new SQSClient(runtime.clientConfig);
  const letters: DeadLetterCopy[] = [];
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: output(runtime, 'orderEventsDeadLetterQueueUrl'),
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 600,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      if (Messages.length === 0) return letters;
      for (const message of Messages) {
        const receiveCount = Number(message.Attributes?.ApproximateReceiveCount);
        letters.push({
          body: message.Body ?? '',
          ...(Number.isInteger(receiveCount) ? { receiveCount } : {}),
          attributes: Object.fromEntries(
            Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
              name,
              value.StringValue ?? '',
            ]),
          ),
        });
      }
    }
  } finally {
    sqs.destroy();
  }
}

/** One of the example stack's named outputs. */
function output(runtime: LocalRuntime, name: string): string {
  const value = runtime.outputs[name];
  if (value === undefined) throw new Error(`the stack has no output ${name}`);
  return value;
}
