import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { consumerParts } from '../../functions/inventory/apply-order/handler.ts';
import { createHandler as createOrderHandler } from '../../functions/orders/create-order/handler.ts';
import { relayDeps } from '../../functions/outbox/relay/handler.ts';
import { sweeperDeps } from '../../functions/outbox/sweeper/handler.ts';
import { consumeSqsBatch } from '../../shared/consumer/sqs-consumer.ts';
import { MessageStatus } from '../../shared/message/message-status.ts';
import type { RelayDeps } from '../../shared/relay/relay-messages.ts';
import { relayStreamBatch } from '../../shared/relay/relay-stream-batch.ts';
import { DEFAULT_SWEEPER_SETTINGS, sweep } from '../../shared/sweeper/sweep.ts';
import { type LocalRuntime, startLocalRuntime } from '../local/runtime.ts';
import { type TableKey, tableOutputName } from '../topology.ts';
import type { DrillConfig, DrillResult, Progress } from './drill-config.ts';
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
import { drillResult, takeSnapshot } from './invariants.ts';
import { randomOrderItems, skuName } from './order-factory.ts';

/**
 * Short timings so the drill settles in minutes rather than hours: retries capped at 3 s and 8 attempts,
 * a 60 s confirmation deadline (well above the pipeline's latency on moto under load, so a slow consumer is
 * not mistaken for a lost delivery), a 10 s stream grace period, 10 s leases, 1–4 s visibility backoff.
 */
const DRILL_ENV = {
  RETRY_POLICIES: JSON.stringify({
    'order.created': { baseDelayMs: 500, multiplier: 2, maxDelayMs: 3_000, maxAttempts: 8 },
  }),
  CONFIRM_DEADLINE_MS: '60000',
  STREAM_GRACE_MS: '10000',
  VISIBILITY_BACKOFF_BASE_SECONDS: '1',
  VISIBILITY_BACKOFF_MAX_SECONDS: '4',
};
const LEASE_MS = 10_000;
const SETTLE_TIMEOUT_MS = 15 * 60_000;
const CLIENT_CONCURRENCY = 8;
const TERMINAL: ReadonlySet<string> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);

/**
 * The fault drill on moto: the real handlers behind the local runtime's API, stream and queue pollers, with
 * every hop's adapter wrapped by the fault injector, two sweepers running side by side, and the invariants
 * checked from the emulator's tables once everything has settled.
 */
export async function runMotoDrill(config: DrillConfig, progress: Progress): Promise<DrillResult> {
  const faults = new FaultInjector(config.rates, seededRandom(config.seed + 1));
  const random = seededRandom(config.seed);
  const poisoned = new Set<string>();
  let deliveries = 0;
  let duplicates = 0;
  const counting = {
    info: (_message: string, data: Record<string, unknown>) => {
      deliveries += 1;
      if (data.kind === 'DUPLICATE') duplicates += 1;
    },
    warn: () => {
      deliveries += 1;
    },
  };
  const quiet = { info: () => {}, warn: () => {} };

  const initialStock = new Map(
    Array.from({ length: config.skus }, (_, i) => [skuName(i), config.initialStock]),
  );
  const runtime = await startLocalRuntime({
    port: 0,
    log: () => {},
    pollIntervalMs: 100,
    seed: [...initialStock].map(([sku, available]) => ({ sku, available })),
    handlers: {
      createOrder: (_base, env) => {
        const base = createOrderHandler({ ...env, ...DRILL_ENV });
        return async (event, context) => {
          // Throttled before the write: nothing is written and the client retries (see below).
          if (faults.roll('dynamoThrottle')) return { statusCode: 500, body: '{"error":"throttled"}' };
          return base(event as never, context);
        };
      },
      relay: (_base, env) => {
        const deps = relayDeps({ ...env, ...DRILL_ENV });
        const relay: RelayDeps = {
          ...deps,
          publisher: faultyPublisher(deps.publisher, faults, poisoned),
          store: throttledStore(crashingAfterSend(deps.store, faults), faults),
        };
        return (event) => {
          const records = (event as DynamoDBStreamEvent).Records.filter(
            () => !faults.roll('droppedStreamRecord'),
          );
          return relayStreamBatch({ Records: records }, relay, quiet);
        };
      },
      inventoryConsumer: (_base, env) => {
        const { plan, deps, failures } = consumerParts({ ...env, ...DRILL_ENV });
        const faulty = faultyConsumerDeps(
          { ...deps, client: faultyDocumentClient(deps.client, faults) },
          faults,
        );
        return (event, context) =>
          consumeSqsBatch(event as SQSEvent, context, plan, faulty, counting, failures);
      },
      // The drill runs two sweepers of its own, continuously (below).
      sweeper: () => async () => ({}),
    },
  });

  try {
    const sweepers = startSweepers(runtime, faults, poisoned, random);
    const writeStarted = performance.now();
    const acknowledged = await writeOrders(runtime, config, random, poisoned, progress);
    const writeMs = performance.now() - writeStarted;
    const settleStarted = performance.now();
    await waitUntilSettled(runtime, acknowledged.size, progress);
    const settleMs = performance.now() - settleStarted;
    trace('settled; stopping the sweepers');
    await sweepers.stop();
    trace('pausing the pollers');
    await runtime.pausePollers();
    trace('reading the tables');

    const snapshot = await takeSnapshot((table) => scanAll(runtime, table), {
      initialStock,
      poisonedOrders: poisoned,
      acknowledgedOrders: acknowledged,
    });
    return drillResult(
      {
        mode: 'moto',
        config,
        injected: { ...faults.injected },
        duplicatesSuppressed: duplicates,
        deliveries,
        writeMs,
        settleMs,
      },
      snapshot,
      { 'sweeper steps that failed (left to the lease)': sweepers.errors() },
    );
  } finally {
    await runtime.stop();
  }
}

function trace(step: string): void {
  if (process.env.DRILL_TRACE) process.stderr.write(`[drill] ${step}\n`);
}

/** Two sweepers side by side, each looping in short runs, one of which may crash at any step. */
function startSweepers(
  runtime: LocalRuntime,
  faults: FaultInjector,
  poisoned: ReadonlySet<string>,
  random: () => number,
) {
  let running = true;
  let errors = 0;
  const loop = async (name: string) => {
    for (let run = 0; running; run += 1) {
      const deps = sweeperDeps({ ...runtime.env.sweeper, ...DRILL_ENV });
      const deadline = Date.now() + 5_000;
      try {
        const report = await sweep({
          ...deps,
          publisher: faultyPublisher(deps.publisher, faults, poisoned),
          store: crashingSweeperStore(
            throttledStore(crashingAfterSend(deps.store, faults), faults),
            faults,
            random,
          ),
          owner: `${name}-${run}`,
          remainingMs: () => (running ? deadline - Date.now() : 0),
          settings: { ...DEFAULT_SWEEPER_SETTINGS, leaseMs: LEASE_MS, idleWaitMs: 500, stopBeforeMs: 0 },
        });
        errors += report.errors;
      } catch {
        errors += 1;
      }
    }
  };
  const loops = [loop('sweeper-a'), loop('sweeper-b')];
  return {
    errors: () => errors,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Creates the orders through the API with a few concurrent clients that retry a 5xx with the same id. */
async function writeOrders(
  runtime: LocalRuntime,
  config: DrillConfig,
  random: () => number,
  poisoned: Set<string>,
  progress: Progress,
): Promise<Set<string>> {
  const acknowledged = new Set<string>();
  const requests = Array.from({ length: config.orders }, (_, index) => {
    const orderId = `drill-${config.seed}-${String(index + 1).padStart(6, '0')}`;
    if (random() < config.poisonRate) poisoned.add(orderId);
    return {
      orderId,
      body: JSON.stringify({
        orderId,
        customerId: `customer-${index % 17}`,
        items: randomOrderItems(random, config.skus),
      }),
    };
  });
  let next = 0;
  const client = async () => {
    for (let request = requests[next++]; request !== undefined; request = requests[next++]) {
      for (let attempt = 1; ; attempt += 1) {
        const response = await fetch(`${runtime.apiUrl}/orders`, { method: 'POST', body: request.body });
        // 409 on a retry: the earlier attempt was written after all; the write is idempotent by order id.
        if (response.status === 201 || response.status === 409) break;
        if (response.status < 500 || attempt >= 20)
          throw new Error(`POST /orders answered ${response.status}: ${await response.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
      acknowledged.add(request.orderId);
      progress(acknowledged.size, config.orders * 2, `written ${acknowledged.size}/${config.orders}`);
    }
  };
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, client));
  return acknowledged;
}

/** Waits until every message is CONFIRMED or FAILED, reading the outbox table. */
async function waitUntilSettled(runtime: LocalRuntime, orders: number, progress: Progress): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const outbox = await scanAll(runtime, 'outbox');
    const open = outbox.filter((message) => !TERMINAL.has(String(message.status))).length;
    progress(orders + (orders - open), orders * 2, `settling: ${open} open`);
    if (open === 0 && outbox.length >= orders) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

async function scanAll(runtime: LocalRuntime, table: TableKey): Promise<Record<string, unknown>[]> {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient(runtime.clientConfig));
  const items: Record<string, unknown>[] = [];
  const pages = paginateScan(
    { client },
    { TableName: runtime.outputs[tableOutputName(table)], ConsistentRead: true },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}
