/**
 * Counting and timing one fan-out run: an order's messages delivered to the first N subscribers by one transport,
 * its capacity units, requests and invocations per order (counted over a burst of orders) and its POST → every
 * delivery CONFIRMED latency (timed at a steady pace with the bench's simulated latencies).
 */

import { toEnvelope } from '../../../shared/memory/index.ts';
import { type BenchOptions, formatNumber, percentile } from './bench-section.ts';
import type { CapacityLine } from './capacity-meter.ts';
import { FanOutPipeline, type FanOutTransport } from './fan-out-pipeline.ts';
import { FAN_OUT_SUBSCRIBERS } from './fan-out-subscribers.ts';

/**
 * A timed run: an order every 100 ms, then up to 30 s to settle. Ten orders a second stays well under what the
 * in-memory services sustain here with five subscribers (about 30 a second on two shared cores), so the figures are
 * the way's and not a backlog's.
 */
export const FAN_OUT_TIMING = { arrivalIntervalMs: 100, settleTimeoutMs: 30_000 } as const;

/** What one order cost, delivered to `subscribers` subscribers, counted over a run of many (per order). */
export interface FanOutCapacity {
  readonly transport: FanOutTransport;
  readonly subscribers: number;
  readonly orders: number;
  /** Per actor and table or index, units per order. */
  readonly lines: readonly CapacityLine[];
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Write units of the producer's functions (POST, relay, receipts): what the transport changes. */
  readonly producerWriteUnits: number;
  readonly outboxRows: number;
  /** SendMessageBatch requests of the relay to the subscriber queues. */
  readonly relaySends: number;
  readonly snsPublishes: number;
  readonly snsDeliveries: number;
  /** The consumer mappings' ReceiveMessage and DeleteMessageBatch. */
  readonly subscriberQueueRequests: number;
  /** Consumers' sends to the receipt queue and the receipts mapping's receives and deletes. */
  readonly receiptQueueRequests: number;
  readonly invocations: { readonly relay: number; readonly consumers: number; readonly receipts: number };
  readonly retainedBytes: number;
  readonly messageBytes: number;
  /** Each subscriber's applied orders as its business rows show them (reservations or per-order rows, counters). */
  readonly applied: Readonly<Record<string, { readonly orders: number; readonly counted: number }>>;
  /** Outbox rows CONFIRMED at the end, of all. */
  readonly confirmedRows: number;
  readonly totalRows: number;
}

/** Actors that are the producer's functions: the POST, the relay and the receipts function. */
const PRODUCER_ACTORS = new Set(['orders', 'relay', 'receipts']);

/**
 * Places `orders` single-line orders through the example's producer delivering to the first `subscribers` of
 * {@link FAN_OUT_SUBSCRIBERS} by `transport`, runs every hop until each delivery is CONFIRMED, and counts what it
 * cost. Throws when a delivery was not confirmed or a subscriber did not apply an order exactly once.
 */
export async function countFanOut(
  transport: FanOutTransport,
  subscribers: number,
  orders: number,
): Promise<FanOutCapacity> {
  const pipeline = new FanOutPipeline({
    transport,
    subscribers: FAN_OUT_SUBSCRIBERS.slice(0, subscribers),
    metered: true,
  });
  await pipeline.start();
  try {
    const skus = Array.from({ length: orders }, (_, n) => `SKU-${n}`);
    await pipeline.stock(skus);
    let messageBytes = 0;
    for (const sku of skus) await pipeline.placeOrder(sku);
    const rows = await pipeline.outboxRows();
    for (const row of rows) messageBytes += Buffer.byteLength(JSON.stringify(toEnvelope(row)));
    await pipeline.drain();
    const meter = pipeline.meter;
    if (meter === undefined) throw new Error('the fan-out count runs metered');
    const applied = await pipeline.applied();
    const finalRows = await pipeline.outboxRows();
    const confirmedRows = finalRows.filter((row) => row.status === 'CONFIRMED').length;
    const notApplied = Object.entries(applied).filter(([, a]) => a.orders !== orders || a.counted !== orders);
    const expectedRows = orders * (transport === 'sqs' ? subscribers : 1);
    if (
      pipeline.confirmedAt.size !== orders ||
      finalRows.length !== expectedRows ||
      confirmedRows !== finalRows.length ||
      notApplied.length > 0
    ) {
      throw new Error(
        `fan-out run incomplete: ${pipeline.confirmedAt.size} of ${orders} messages confirmed, ${confirmedRows} of ${finalRows.length} rows (${expectedRows} expected); applied ${JSON.stringify(applied)}`,
      );
    }
    const perOrder = (value: number) => value / orders;
    const lines = meter.lines().map((line) => ({
      ...line,
      writeUnits: perOrder(line.writeUnits),
      readUnits: perOrder(line.readUnits),
      operations: perOrder(line.operations),
    }));
    const totals = meter.totals();
    const c = pipeline.counts;
    return {
      transport,
      subscribers,
      orders,
      lines,
      writeUnits: perOrder(totals.writeUnits),
      readUnits: perOrder(totals.readUnits),
      producerWriteUnits: lines
        .filter((line) => PRODUCER_ACTORS.has(line.actor))
        .reduce((sum, line) => sum + line.writeUnits, 0),
      outboxRows: perOrder(finalRows.length),
      relaySends: perOrder(c.relaySends),
      snsPublishes: perOrder(c.sns.publishes),
      snsDeliveries: perOrder(c.sns.deliveries),
      subscriberQueueRequests: perOrder(c.subscriberReceives + c.subscriberDeletes),
      receiptQueueRequests: perOrder(c.receiptSends + c.receiptReceives + c.receiptDeletes),
      invocations: {
        relay: perOrder(c.relayInvocations),
        consumers: perOrder(c.consumerInvocations),
        receipts: perOrder(c.receiptsInvocations),
      },
      retainedBytes: perOrder(await pipeline.retainedBytes()),
      messageBytes: messageBytes / rows.length,
      applied,
      confirmedRows,
      totalRows: finalRows.length,
    };
  } finally {
    await pipeline.stop();
  }
}

/** What a timed run measured: POST → every delivery CONFIRMED, per order. */
export interface FanOutTiming {
  readonly orders: number;
  readonly confirmed: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Places `orders` orders at a steady pace with the bench's simulated latencies and times each to its last confirmation. */
export async function timeFanOut(
  transport: FanOutTransport,
  subscribers: number,
  options: BenchOptions & { readonly orders: number },
): Promise<FanOutTiming> {
  const pipeline = new FanOutPipeline({
    transport,
    subscribers: FAN_OUT_SUBSCRIBERS.slice(0, subscribers),
    latency: { sqsMs: options.sqsLatencyMs, dynamoMs: options.dynamoLatencyMs, snsMs: options.snsLatencyMs },
  });
  await pipeline.start();
  try {
    const timings = await pipeline.runTimed({
      orders: options.orders,
      intervalMs: FAN_OUT_TIMING.arrivalIntervalMs,
      settleMs: FAN_OUT_TIMING.settleTimeoutMs,
    });
    const latencies = timings.map((timing) => timing.confirmedAt - timing.postedAt);
    return {
      orders: options.orders,
      confirmed: timings.length,
      p50Ms: latencies.length === 0 ? Number.NaN : percentile(latencies, 50),
      p99Ms: latencies.length === 0 ? Number.NaN : percentile(latencies, 99),
    };
  } finally {
    await pipeline.stop();
  }
}

/** Write units per order by actor, as text (`orders 12.00, relay 4.00, …`). */
export function writeUnitsByActor(lines: readonly CapacityLine[]): string {
  const byActor = new Map<string, number>();
  for (const line of lines) byActor.set(line.actor, (byActor.get(line.actor) ?? 0) + line.writeUnits);
  return [...byActor].map(([actor, units]) => `${actor} ${formatNumber(units, 2)}`).join(', ');
}
