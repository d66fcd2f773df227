import { MessageStatus } from '../../../shared/index.ts';
import type { OutboxIndex } from './drill-snapshot.ts';
import { SUBSCRIBERS, type Subscriber } from './drill-subscribers.ts';
import { percentile } from './observed-metrics.ts';

/** Percentiles of some deliveries' confirm latencies, in milliseconds (undefined when there were none). */
export interface LatencySummary {
  readonly count: number;
  readonly mean?: number;
  readonly p50?: number;
  readonly p95?: number;
}

/**
 * One subscriber's confirm latency: over all its deliveries, and over those of the regular orders' messages written
 * during the stop or outside it (the hot SKU's burst apart: its latency is the contention's).
 */
export interface SubscriberLatency {
  readonly all: LatencySummary;
  readonly duringStop: LatencySummary;
  readonly outsideStop: LatencySummary;
}

/** Each subscriber's confirm latency: from a message's write to that subscriber's delivery CONFIRMED. */
export type ConfirmLatency = Readonly<Record<Subscriber, SubscriberLatency>>;

/**
 * Each subscriber's confirm latency, read from the tables: from a message's write (its `createdAt`) to that
 * subscriber's delivery CONFIRMED (its `confirmedAt`, when the producer applied the receipt), for every order
 * message confirmed there; and, for the orders not in `burst`, apart for the messages written while the stopped
 * subscriber was stopped (`[stoppedAt, restartedAt)`, on the tables' clock) and the others.
 */
export function confirmLatency(
  index: OutboxIndex,
  stop: { readonly stoppedAt: number; readonly restartedAt: number },
  burst: ReadonlySet<string>,
): ConfirmLatency {
  const latencies = Object.fromEntries(
    SUBSCRIBERS.map((subscriber) => [
      subscriber,
      { all: [] as number[], during: [] as number[], outside: [] as number[] },
    ]),
  ) as Record<Subscriber, { all: number[]; during: number[]; outside: number[] }>;
  for (const { subscriber, row, message } of index.deliveries()) {
    if (row.status !== MessageStatus.CONFIRMED) continue;
    const writtenAt = Date.parse(String(row.createdAt));
    const confirmedAt = Date.parse(String(row.confirmedAt));
    if (!Number.isFinite(writtenAt) || !Number.isFinite(confirmedAt)) continue;
    const latency = Math.max(0, confirmedAt - writtenAt);
    latencies[subscriber].all.push(latency);
    if (burst.has(message.orderId)) continue;
    const during = writtenAt >= stop.stoppedAt && writtenAt < stop.restartedAt;
    latencies[subscriber][during ? 'during' : 'outside'].push(latency);
  }
  return Object.fromEntries(
    SUBSCRIBERS.map((subscriber) => {
      const { all, during, outside } = latencies[subscriber];
      return [subscriber, { all: summary(all), duringStop: summary(during), outsideStop: summary(outside) }];
    }),
  ) as Record<Subscriber, SubscriberLatency>;
}

function summary(values: readonly number[]): LatencySummary {
  const p50 = percentile(values, 50);
  const p95 = percentile(values, 95);
  return {
    count: values.length,
    ...(values.length === 0 ? {} : { mean: values.reduce((sum, value) => sum + value, 0) / values.length }),
    ...(p50 === undefined ? {} : { p50 }),
    ...(p95 === undefined ? {} : { p95 }),
  };
}

/** `during` over `outside`, when both are known and `outside` is not zero. */
export function latencyRatio(during: number | undefined, outside: number | undefined): number | undefined {
  return during === undefined || outside === undefined || outside === 0 ? undefined : during / outside;
}
