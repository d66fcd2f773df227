import {
  CONSUMER_DEFAULTS,
  FUNCTION_DEFAULTS,
  OUTBOX_STREAM_DEFAULTS,
  RELAY_DEFAULTS,
  SWEEPER_DEFAULTS,
} from '../../constructs/index.ts';
import { AWS_PRICE_SOURCES, AWS_PRICES } from './aws-prices.ts';
import { type BenchOptions, type BenchSection, formatNumber } from './bench-section.ts';
import { countOrderCapacity, type OrderCapacity } from './capacity.ts';

/** The month the model bills: 30 days. */
export const SECONDS_PER_MONTH = 30 * 86_400;
/** Lambda reads a stream shard 4 times a second; with no batching window each read that finds records invokes. */
const STREAM_POLLS_PER_SECOND = 4;

/**
 * What the model assumes where nothing here can measure it (AWS durations, log volume, sampling). Each one is
 * named in the section's notes.
 */
export const COST_ASSUMPTIONS = {
  /** Warm handler durations on AWS: a few ms of our code plus the calls each makes in sequence. */
  createOrderMs: 25,
  relayInvocationMs: 35,
  consumerInvocationMs: 30,
  /** An idle sweeper run (the bench's idle section measures about 20–40 ms). */
  sweeperIdleRunMs: 40,
  /** The SQS event source mapping's long polls on an empty queue: 5 pollers, one 20 s poll each at a time. */
  emptyReceivesPerMonth: 5 * (SECONDS_PER_MONTH / 20),
  /** Log bytes per invocation (START, END, REPORT lines and our summary line) and per message handled. */
  logBytesPerInvocation: 700,
  logBytesPerMessage: 400,
  /** X-Ray's default sampling rule: the first request each second, then 5 %. */
  xrayReservoirPerSecond: 1,
  xrayRate: 0.05,
  /** Bytes kept per order for 30 days: the outbox item and its index entries, the inbox row. */
  retainedBytesPerOrder: 1_500,
  /** A table-polling relay: a function that polls every second for 55 s of each minute, at 256 MB. */
  pollerMemoryMb: 256,
} as const;

/** Monthly dollars by component for one way of relaying. */
export type CostBreakdown = Record<string, number>;

/** The three ways of getting a committed message onto SQS that the model compares. */
export type RelayVariant = 'stream relay (this outbox)' | 'table-polling relay (1 s)' | 'EventBridge Pipes';

const gbSeconds = (invocations: number, ms: number, memoryMb: number) =>
  invocations * (ms / 1_000) * (memoryMb / 1_024);
/** Lambda's monthly cost (requests and arm64 GB-seconds) of `invocations` of `ms` each at `memoryMb`. */
export const lambdaCost = (invocations: number, ms: number, memoryMb: number) =>
  (invocations / 1e6) * AWS_PRICES.lambdaPerMillionRequests +
  gbSeconds(invocations, ms, memoryMb) * AWS_PRICES.lambdaArmPerGbSecond;

/** Relay invocations a month at `orders` a month on one stream shard with no batching window. */
export function relayInvocations(orders: number): number {
  const maxPerMonth = STREAM_POLLS_PER_SECOND * SECONDS_PER_MONTH;
  return Math.max(orders / OUTBOX_STREAM_DEFAULTS.batchSize, Math.min(orders, maxPerMonth));
}

/** Consumer invocations a month: a batch of up to 10 at most once per batching window per poller. */
export function consumerInvocations(orders: number): number {
  const windows = SECONDS_PER_MONTH / Math.max(1, CONSUMER_DEFAULTS.maxBatchingWindow.toSeconds());
  return Math.max(orders / CONSUMER_DEFAULTS.batchSize, Math.min(orders, windows));
}

/** Monthly cost of `orders` orders a month through the example, relayed the `variant` way. */
export function monthlyCost(orders: number, capacity: OrderCapacity, variant: RelayVariant): CostBreakdown {
  const a = COST_ASSUMPTIONS;
  // Writes a relay makes on the outbox per message (SENT and its index entries): none without bookkeeping.
  const relayWriteUnits = capacity.lines
    .filter((line) => line.actor === 'relay')
    .reduce((sum, line) => sum + line.writeUnits, 0);
  const writeUnits = capacity.writeUnitsPerOrder - (variant === 'EventBridge Pipes' ? relayWriteUnits : 0);
  const consumerCalls = consumerInvocations(orders);
  const relayCalls = variant === 'stream relay (this outbox)' ? relayInvocations(orders) : 0;
  const sends =
    variant === 'EventBridge Pipes'
      ? orders / CONSUMER_DEFAULTS.batchSize
      : // One SendMessageBatch per relay invocation, or per poll that finds messages; 10 messages at most each.
        Math.max(
          orders / 10,
          variant === 'stream relay (this outbox)' ? relayCalls : Math.min(orders, SECONDS_PER_MONTH),
        );
  const sqsRequests = sends + 2 * consumerCalls + a.emptyReceivesPerMonth;
  const traced =
    Math.min(orders, a.xrayReservoirPerSecond * SECONDS_PER_MONTH) +
    a.xrayRate * Math.max(0, orders - a.xrayReservoirPerSecond * SECONDS_PER_MONTH);
  const invocations = orders + relayCalls + consumerCalls;
  const logGb = (invocations * a.logBytesPerInvocation + 3 * orders * a.logBytesPerMessage) / 1024 ** 3;
  const retainedGb = (orders * a.retainedBytesPerOrder) / 1024 ** 3;
  const sweeperRuns = SECONDS_PER_MONTH / SWEEPER_DEFAULTS.scheduleRate.toSeconds();
  const cost: CostBreakdown = {
    'API Gateway (REST)': (orders / 1e6) * AWS_PRICES.apiGatewayRestPerMillion,
    'Lambda: create order': lambdaCost(orders, a.createOrderMs, FUNCTION_DEFAULTS.memorySize),
    'Lambda: consumer': lambdaCost(consumerCalls, a.consumerInvocationMs, CONSUMER_DEFAULTS.memorySize),
    'Lambda: sweeper (idle runs)': lambdaCost(sweeperRuns, a.sweeperIdleRunMs, SWEEPER_DEFAULTS.memorySize),
    'DynamoDB writes': (orders * writeUnits * AWS_PRICES.dynamoPerMillionWriteUnits) / 1e6,
    'DynamoDB reads': (orders * capacity.readUnitsPerOrder * AWS_PRICES.dynamoPerMillionReadUnits) / 1e6,
    'DynamoDB storage + PITR':
      retainedGb * (AWS_PRICES.dynamoStoragePerGbMonth + AWS_PRICES.dynamoPitrPerGbMonth),
    SQS: (sqsRequests / 1e6) * AWS_PRICES.sqsPerMillionRequests,
    'CloudWatch Logs': logGb * AWS_PRICES.logsIngestionPerGb,
    'X-Ray traces': (traced / 1e6) * AWS_PRICES.xrayPerMillionTraces,
  };
  if (variant === 'stream relay (this outbox)') {
    cost['Lambda: relay'] = lambdaCost(relayCalls, a.relayInvocationMs, RELAY_DEFAULTS.memorySize);
  } else if (variant === 'table-polling relay (1 s)') {
    const pollerRuns = SECONDS_PER_MONTH / 60;
    cost['Lambda: poller (55 s a minute)'] = lambdaCost(pollerRuns, 55_000, a.pollerMemoryMb);
    // One due-index page per shard and second, half a read unit each, beside the messages it reads.
    const polls = SECONDS_PER_MONTH * 8;
    cost['DynamoDB reads: polling'] =
      ((polls * 0.5 + orders * 0.25) / 1e6) * AWS_PRICES.dynamoPerMillionReadUnits;
  } else {
    cost['EventBridge Pipes'] = (orders / 1e6) * AWS_PRICES.pipesPerMillionRequests;
  }
  return cost;
}

/** The sum of a breakdown's components. */
export const total = (cost: CostBreakdown) => Object.values(cost).reduce((sum, value) => sum + value, 0);

/** The ranges of monthly volume (100 thousand to 10 billion, in 25 % steps) in which `a` costs less than `b`. */
export function cheaperRanges(
  capacity: OrderCapacity,
  a: RelayVariant,
  b: RelayVariant,
): { from: number; to: number }[] {
  const ranges: { from: number; to: number }[] = [];
  for (let orders = 100_000; orders <= 10_000_000_000; orders *= 1.25) {
    if (total(monthlyCost(orders, capacity, a)) >= total(monthlyCost(orders, capacity, b))) continue;
    const last = ranges.at(-1);
    if (last !== undefined && last.to * 1.25 >= orders * 0.999) last.to = orders;
    else ranges.push({ from: orders, to: orders });
  }
  return ranges;
}

function describeRanges(ranges: readonly { from: number; to: number }[]): string {
  if (ranges.length === 0) return 'at no volume tried';
  const millions = (orders: number) => `${formatNumber(orders / 1e6, orders < 1e6 ? 1 : 0)} M`;
  return ranges.map(({ from, to }) => `${millions(from)}–${millions(to)} orders/month`).join(', ');
}

/** Bench section 8: monthly cost per million orders on AWS, against a polling relay and EventBridge Pipes. */
export async function measureCostModel(options: BenchOptions): Promise<BenchSection> {
  const capacity = await countOrderCapacity(options.size === 'tiny' ? 20 : 500);
  const volumes = [1_000_000, 10_000_000, 100_000_000];
  const variants: RelayVariant[] = [
    'stream relay (this outbox)',
    'table-polling relay (1 s)',
    'EventBridge Pipes',
  ];
  const rows = variants.map((variant) => [
    variant,
    ...volumes.flatMap((orders) => {
      const monthly = total(monthlyCost(orders, capacity, variant));
      return [`$${formatNumber(monthly, 2)}`, `$${formatNumber((monthly / orders) * 1e6, 2)}`];
    }),
  ]);
  const breakdown = monthlyCost(10_000_000, capacity, 'stream relay (this outbox)');
  const largest = Object.entries(breakdown)
    .sort(([, x], [, y]) => y - x)
    .map(([name, dollars]) => `${name} $${formatNumber(dollars, 2)}`)
    .join(', ');
  const pollingCheaper = cheaperRanges(capacity, 'table-polling relay (1 s)', 'stream relay (this outbox)');
  // What the poller itself costs with no traffic at all (every variant pays the rest alike).
  const idlePolling = monthlyCost(0, capacity, 'table-polling relay (1 s)');
  const pollerFloor =
    (idlePolling['Lambda: poller (55 s a minute)'] ?? 0) + (idlePolling['DynamoDB reads: polling'] ?? 0);
  let largestSaving = 0;
  for (const { from, to } of pollingCheaper) {
    for (let orders = from; orders <= to; orders *= 1.25) {
      const saving =
        total(monthlyCost(orders, capacity, 'stream relay (this outbox)')) -
        total(monthlyCost(orders, capacity, 'table-polling relay (1 s)'));
      largestSaving = Math.max(largestSaving, saving);
    }
  }
  return {
    title: 'Cost model: monthly cost on AWS (us-east-1 list prices), by monthly volume of single-line orders',
    columns: ['relay', ...volumes.flatMap((orders) => [`${orders / 1e6} M/month`, 'per M orders'])],
    rows,
    targets: [],
    notes: [
      `10 M orders/month with this outbox, by component: ${largest}`,
      `a table-polling relay is cheaper than the stream relay ${describeRanges(pollingCheaper)} (by at most $${formatNumber(largestSaving, 2)} a month: its poller costs ≈ $${formatNumber(pollerFloor, 2)} a month even idle, against the relay's invocations), and adds ≈ 0.5 s of latency and a read per second per shard`,
      `Pipes drops the relay function and the SENT bookkeeping (${formatNumber(
        capacity.lines.filter((l) => l.actor === 'relay').reduce((s, l) => s + l.writeUnits, 0),
        1,
      )} write units per message) for $${AWS_PRICES.pipesPerMillionRequests} per million events: cheapest at every volume, but with no per-message retry state, no FAILED messages for an operator, and the sweeper cannot tell a sent message from a lost one`,
      `measured here: ${formatNumber(capacity.writeUnitsPerOrder, 2)} write units, ${formatNumber(capacity.readUnitsPerOrder, 2)} read units per order; assumed: durations ${COST_ASSUMPTIONS.createOrderMs}/${COST_ASSUMPTIONS.relayInvocationMs}/${COST_ASSUMPTIONS.consumerInvocationMs} ms (create/relay/consumer), ${COST_ASSUMPTIONS.logBytesPerInvocation} log bytes per invocation + ${COST_ASSUMPTIONS.logBytesPerMessage} per message per hop, X-Ray default sampling (1/s + 5 %)`,
      `list prices as of ${AWS_PRICE_SOURCES.asOf}, without free tiers: ${AWS_PRICE_SOURCES.pages.join(' ')}; fixed costs not shown: alarms ($0.10 each a month) and the dashboard ($3 a month)`,
    ],
  };
}
