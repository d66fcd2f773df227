/**
 * Bench section "fanout": an order's messages delivered to 1, 2 and 5 subscribers, side by side, by the built
 * design (a row per delivery, SendMessageBatch to each subscriber's queue, receipts) and by the SNS alternative (a
 * row per message with a map of its deliveries, one publish that SNS copies into each queue, the same receipts):
 * capacity units, requests and invocations per order and per subscriber, POST → every delivery CONFIRMED on the
 * in-memory services, the AWS model's estimate, and the cost per million orders.
 */

import { CONSUMER_DEFAULTS, OUTBOX_STREAM_DEFAULTS } from '../../constructs/index.ts';
import { AWS_PRICE_SOURCES, AWS_PRICES } from './aws-prices.ts';
import {
  type BenchCell,
  type BenchOptions,
  type BenchSection,
  type BenchTarget,
  formatNumber,
} from './bench-section.ts';
import { total } from './cost-model.ts';
import {
  type FanOutCostTransport,
  type FanOutUsage,
  fanOutMonthlyCost,
  RECEIPTS_INVOCATION_MS,
  RECEIPTS_WINDOW_SECONDS,
} from './fan-out-cost.ts';
import {
  ASSUMED_FAN_OUT_DELAYS_MS,
  type FanOutWindows,
  fanOutLatencyModel,
} from './fan-out-latency-model.ts';
import { type FanOutTransport, QUEUE_MAPPING_CONCURRENCY } from './fan-out-pipeline.ts';
import {
  countFanOut,
  FAN_OUT_TIMING,
  type FanOutCapacity,
  type FanOutTiming,
  timeFanOut,
  writeUnitsByActor,
} from './fan-out-run.ts';
import { sumHops } from './latency-model.ts';

/** How many subscribers each run delivers to. */
export const FAN_OUT_SUBSCRIBER_COUNTS = [1, 2, 5] as const;

const PLAN = {
  tiny: { countedOrders: 20, timedOrders: 10 },
  full: { countedOrders: 500, timedOrders: 100 },
  /** The monthly volume the cost column is priced at. */
  costVolume: 10_000_000,
} as const;

/** The two transports, as the table names them. */
export const TRANSPORT_LABELS: Readonly<Record<FanOutTransport, string>> = {
  sqs: 'rows per delivery → SQS (built)',
  sns: 'row per message → SNS (modelled)',
};

/** The windows of the way with receipts, as the construct's defaults set them. */
export const FAN_OUT_WINDOWS: FanOutWindows = {
  relaySeconds: OUTBOX_STREAM_DEFAULTS.maxBatchingWindow.toSeconds(),
  consumerSeconds: CONSUMER_DEFAULTS.maxBatchingWindow.toSeconds(),
  receiptsSeconds: RECEIPTS_WINDOW_SECONDS,
};

/** What the cost model takes from a counted run. */
export function usageOf(capacity: FanOutCapacity): FanOutUsage {
  return {
    subscribers: capacity.subscribers,
    writeUnits: capacity.writeUnits,
    readUnits: capacity.readUnits,
    outboxRows: capacity.outboxRows,
    retainedBytes: capacity.retainedBytes,
    messageBytes: capacity.messageBytes,
  };
}

/** Cost per million orders at the section's volume. */
function perMillion(capacity: FanOutCapacity, transport: FanOutCostTransport): number {
  return (total(fanOutMonthlyCost(PLAN.costVolume, usageOf(capacity), transport)) / PLAN.costVolume) * 1e6;
}

const COLUMNS = [
  'transport',
  'subs',
  'per',
  'write units',
  'read units',
  'outbox rows',
  'relay → SQS',
  'SNS publish',
  'producer req.',
  'subscriber queues',
  'receipt queue',
  'Lambda inv.',
  'p50 ms',
  'p99 ms',
  'AWS p50/p99 ms',
  '$/M orders',
] as const;

interface Measured {
  readonly capacity: FanOutCapacity;
  readonly timing: FanOutTiming;
}

/** Bench section "fanout"; see the module's doc. */
export async function measureFanOut(options: BenchOptions): Promise<BenchSection> {
  const plan = PLAN[options.size];
  const runs = new Map<string, Measured>();
  for (const transport of ['sqs', 'sns'] as const) {
    for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
      const capacity = await countFanOut(transport, subscribers, plan.countedOrders);
      const timing = await timeFanOut(transport, subscribers, { ...options, orders: plan.timedOrders });
      runs.set(`${transport}/${subscribers}`, { capacity, timing });
    }
  }
  const run = (transport: FanOutTransport, subscribers: number): Measured => {
    const measured = runs.get(`${transport}/${subscribers}`);
    if (measured === undefined) throw new Error(`no ${transport} run with ${subscribers} subscribers`);
    return measured;
  };
  const model = {
    sqs: sumHops(fanOutLatencyModel('sqs', FAN_OUT_WINDOWS)),
    sns: sumHops(fanOutLatencyModel('sns', FAN_OUT_WINDOWS)),
  };
  const rows: BenchCell[][] = [];
  for (const transport of ['sqs', 'sns'] as const) {
    for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
      const { capacity, timing } = run(transport, subscribers);
      const figures = (divisor: number): BenchCell[] => [
        formatNumber(capacity.writeUnits / divisor, 2),
        formatNumber(capacity.readUnits / divisor, 2),
        formatNumber(capacity.outboxRows / divisor, 2),
        formatNumber(capacity.relaySends / divisor, 3),
        formatNumber(capacity.snsPublishes / divisor, 3),
        formatNumber(producerRequestsOf(capacity) / divisor, 3),
        formatNumber(capacity.subscriberQueueRequests / divisor, 3),
        formatNumber(capacity.receiptQueueRequests / divisor, 3),
        formatNumber(invocationsOf(capacity) / divisor, 3),
      ];
      const cost = perMillion(capacity, transport);
      rows.push([
        TRANSPORT_LABELS[transport],
        subscribers,
        'order',
        ...figures(1),
        formatNumber(timing.p50Ms),
        formatNumber(timing.p99Ms),
        `${formatNumber(model[transport].p50Ms)} / ${formatNumber(model[transport].p99Ms)}`,
        `$${formatNumber(cost, 2)}`,
      ]);
      rows.push([
        '',
        '',
        'subscriber',
        ...figures(subscribers),
        '',
        '',
        '',
        `$${formatNumber(cost / subscribers, 2)}`,
      ]);
    }
  }
  for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
    const sqs = run('sqs', subscribers);
    const sns = run('sns', subscribers);
    const ratio = (a: number, b: number) => (b === 0 ? '—' : `×${formatNumber(a / b, 2)}`);
    rows.push([
      'SNS ÷ rows per delivery',
      subscribers,
      'order',
      ratio(sns.capacity.writeUnits, sqs.capacity.writeUnits),
      ratio(sns.capacity.readUnits, sqs.capacity.readUnits),
      ratio(sns.capacity.outboxRows, sqs.capacity.outboxRows),
      '',
      '',
      ratio(producerRequestsOf(sns.capacity), producerRequestsOf(sqs.capacity)),
      ratio(sns.capacity.subscriberQueueRequests, sqs.capacity.subscriberQueueRequests),
      ratio(sns.capacity.receiptQueueRequests, sqs.capacity.receiptQueueRequests),
      ratio(invocationsOf(sns.capacity), invocationsOf(sqs.capacity)),
      ratio(sns.timing.p50Ms, sqs.timing.p50Ms),
      ratio(sns.timing.p99Ms, sqs.timing.p99Ms),
      ratio(model.sns.p50Ms, model.sqs.p50Ms),
      ratio(perMillion(sns.capacity, 'sns'), perMillion(sqs.capacity, 'sqs')),
    ]);
  }
  return {
    title: `Fan-out: an order delivered to 1, 2 and 5 subscribers, rows per delivery → SQS against SNS (${plan.countedOrders} orders counted, ${plan.timedOrders} timed per run)`,
    columns: COLUMNS,
    rows,
    targets: [...runs.values()].map(deliveryTarget),
    notes: fanOutNotes(run, options),
  };
}

/** The producer's requests per order to get a message to its subscribers: relay sends to SQS, or SNS publishes. */
function producerRequestsOf(capacity: FanOutCapacity): number {
  return capacity.relaySends + capacity.snsPublishes;
}

/** Lambda invocations per order: relay, consumers, receipts (the POST's own is one more for either). */
function invocationsOf(capacity: FanOutCapacity): number {
  const { relay, consumers, receipts } = capacity.invocations;
  return relay + consumers + receipts;
}

/** Every delivery applied once by its subscriber and CONFIRMED, counted and timed. */
function deliveryTarget({ capacity, timing }: Measured): BenchTarget {
  const appliedOnce = Object.values(capacity.applied).every(
    (applied) => applied.orders === capacity.orders && applied.counted === capacity.orders,
  );
  return {
    name: `every delivery applied once and CONFIRMED, ${TRANSPORT_LABELS[capacity.transport]}, ${capacity.subscribers} subscriber(s)`,
    measured: `${capacity.confirmedRows}/${capacity.totalRows} rows CONFIRMED, applied once: ${appliedOnce ? 'yes' : 'no'}; timed ${timing.confirmed}/${timing.orders}`,
    target: `all rows, yes; ${timing.orders}/${timing.orders}`,
    holds: capacity.confirmedRows === capacity.totalRows && appliedOnce && timing.confirmed === timing.orders,
  };
}

function fanOutNotes(
  run: (transport: FanOutTransport, subscribers: number) => Measured,
  options: BenchOptions,
): string[] {
  const first = FAN_OUT_SUBSCRIBER_COUNTS[0];
  const last = FAN_OUT_SUBSCRIBER_COUNTS[FAN_OUT_SUBSCRIBER_COUNTS.length - 1] ?? first;
  const n = (value: number, digits = 2) => formatNumber(value, digits);
  /** What one more subscriber adds per order, from the runs with the fewest and the most. */
  const extra = (transport: FanOutTransport, figure: (capacity: FanOutCapacity) => number) =>
    (figure(run(transport, last).capacity) - figure(run(transport, first).capacity)) / (last - first);
  const marginal = (transport: FanOutTransport) => ({
    writeUnits: n(extra(transport, (c) => c.writeUnits)),
    producerWriteUnits: n(extra(transport, (c) => c.producerWriteUnits)),
    requests: n(extra(transport, producerRequestsOf), 3),
    rows: n(extra(transport, (c) => c.outboxRows)),
  });
  const sqsMore = marginal('sqs');
  const snsMore = marginal('sns');
  const example = run('sqs', 2).capacity;
  const snsExample = run('sns', 2).capacity;
  const actors = writeUnitsByActor(example.lines);
  const fifo = n(perMillion(snsExample, 'sns-fifo'));
  const standard = n(perMillion(snsExample, 'sns'));
  const delays = ASSUMED_FAN_OUT_DELAYS_MS;
  const p = AWS_PRICES;
  return [
    `Run, not modelled (rows per delivery): createOrder (the POST's core) with the writer from its environment (SUBSCRIPTIONS; ORDERED_TOPICS: order.created and order.cancelled ordered, seq from the order's version), relayStreamEvent with relayDeps (SqsPublisher: SendMessageBatch per subscriber queue), each subscriber's consumer from consumerParts (SUBSCRIBER, RECEIPT_QUEUE_URL; inventory runs the example's plan, the others add to a customer row and keep a per-order row) and createReceiptsHandler, on the in-memory tables and queues; SQS calls go through the SDK client into the in-memory queues, and the receipts function reaches the tables over a loopback DynamoDB endpoint.`,
    `Modelled (SNS): the topic is an in-memory fan-out (one PublishBatch per relayed batch, then a copy into each subscriber queue, raw message delivery); the writer is the production one, but its message row also carries a map of per-subscriber delivery states (PENDING), which a modelled receipts function updates per receipt (SET deliveries.<subscriber> with a count, conditional on that entry, paced as the shipped one) and, with the last, confirms with the production confirmation; relay and consumers are the production ones. Its units are counted from the items it writes, as the built design's are.`,
    `Per extra subscriber (from ${first} to ${last}), per order: rows per delivery +${sqsMore.writeUnits} write units (the producer's +${sqsMore.producerWriteUnits}), +${sqsMore.requests} relay SQS requests, +${sqsMore.rows} outbox rows (stream records the relay reads and marks SENT); SNS +${snsMore.writeUnits} write units (the producer's +${snsMore.producerWriteUnits}: a receipt's map update), +${snsMore.requests} producer requests, +${snsMore.rows} rows, and one more copy SNS makes (not charged). The subscribers' own work (queue requests, consumer invocations, inbox and business writes, receipts) is the same either way.`,
    "What rows per delivery buy for their write units: each delivery has its own status, attempts, due-index entry (the sweeper resends to the one subscriber that has not confirmed), order key (one subscriber's gap never holds another's) and FAILED state an operator replays alone. With SNS a map entry per subscriber keeps the state but not the index: the sweeper finds the message, not the delivery, and a resend to one subscriber is a direct SQS send (or a filter policy on a subscriber attribute), so per-subscriber sends come back on the recovery path.",
    `The example's shape (ordered order.created/order.cancelled to inventory and loyalty) with rows per delivery, write units per order by actor: ${actors} (total ${n(example.writeUnits)}, ${n(example.writeUnits / 2)} per subscriber; the producer's ${n(example.producerWriteUnits)}); with SNS ${n(snsExample.writeUnits)} (the producer's ${n(snsExample.producerWriteUnits)}). Requests per order: relay ${n(example.relaySends, 3)} SendMessageBatch, subscriber queues ${n(example.subscriberQueueRequests, 3)}, receipt queue ${n(example.receiptQueueRequests, 3)}.`,
    `Requests and invocations are counted in a burst (every order placed, then each hop drained in full batches: relay 100 records, consumers and receipts 10 messages), the fewest per order; the cost column takes the batching a steady ${n(PLAN.costVolume / 1e6, 0)} M orders a month gives (a relay invocation per stream poll, consumers and receipts per 1 s window) and the empty long polls of the N + 1 queues.`,
    `Timed: orders POSTed every ${FAN_OUT_TIMING.arrivalIntervalMs} ms without waiting; latency = from just before the POST to when the last delivery (with SNS, the row) became CONFIRMED; nearest-rank percentiles. Simulated latency per call: SQS ${options.sqsLatencyMs} ms, DynamoDB ${options.dynamoLatencyMs} ms, an SNS publish ${options.snsLatencyMs} ms and its copy into each queue one SQS latency later. Pollers wake on an arrival (as a long poll returns), without batching windows; ${QUEUE_MAPPING_CONCURRENCY} concurrent batches per queue mapping, the relay one batch at a time (one shard).`,
    `AWS p50/p99: the latency model of a lone order with the construct's windows (relay ${FAN_OUT_WINDOWS.relaySeconds} s, consumer ${FAN_OUT_WINDOWS.consumerSeconds} s, receipts ${FAN_OUT_WINDOWS.receiptsSeconds} s), with the receipt's hops: consumer + receipt ${delays.consumerApplyAndReceipt.p50}/${delays.consumerApplyAndReceipt.p99} ms, confirmation ${delays.receiptConfirm.p50}/${delays.receiptConfirm.p99} ms (SNS: map entry + confirmation ${delays.receiptConfirmWithMap.p50}/${delays.receiptConfirmWithMap.p99}); the SNS publish (${delays.relayPublish.p50}/${delays.relayPublish.p99} ms) and SNS → SQS (${delays.snsDelivery.p50}/${delays.snsDelivery.p99} ms) are assumptions, AWS publishes no figure. The two 1 s windows are most of it either way.`,
    `$/M orders at ${n(PLAN.costVolume / 1e6, 0)} M orders a month, us-east-1 list prices (as of ${AWS_PRICE_SOURCES.asOf}; SNS as of ${AWS_PRICE_SOURCES.snsAsOf}, https://aws.amazon.com/sns/pricing/): SNS standard $${p.snsPublishPerMillionRequests} per million publish requests, deliveries to SQS queues not charged (were each copy billed as an SQS request, add $${p.sqsPerMillionRequests} per million copies); a consumer invocation's receipts share one message, and the receipts function runs once per ${RECEIPTS_WINDOW_SECONDS} s window or per 10 of them, ${RECEIPTS_INVOCATION_MS} ms each.`,
    `An SNS FIFO topic with FIFO subscriber queues (what ordering would take without the consumers' per-order cursors): $${fifo} per M orders for 2 subscribers against $${standard} with a standard topic ($${p.snsFifoPublishPerMillionRequests}/M publishes + $${p.snsFifoPublishPerGb}/GB, $${p.snsFifoDeliveryPerMillion}/M copies + $${p.snsFifoDeliveryPerGb}/GB, SQS FIFO $${p.sqsFifoPerMillionRequests}/M requests; the same invocations counted, though a FIFO queue's mapping takes no batching window).`,
  ];
}
