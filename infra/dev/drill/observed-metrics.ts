import type { MetricsByTopic } from '../../../shared/lambda/index.ts';
import { OutboxMetricName } from '../../../shared/memory/index.ts';

/** The counted metrics the drill sums over a run, in the order its report prints them. */
export const COUNTED_METRICS = [
  OutboxMetricName.MESSAGES_SENT,
  OutboxMetricName.SEND_FAILURES,
  OutboxMetricName.RETRIES_SCHEDULED,
  OutboxMetricName.MESSAGES_FAILED,
  OutboxMetricName.MESSAGES_APPLIED,
  OutboxMetricName.DUPLICATES_SUPPRESSED,
  OutboxMetricName.BUSINESS_REJECTIONS,
  OutboxMetricName.DEAD_LETTERED,
  OutboxMetricName.REQUEUED,
  OutboxMetricName.MESSAGES_PARKED,
] as const;

/** One of {@link COUNTED_METRICS}. */
export type CountedMetric = (typeof COUNTED_METRICS)[number];

/** What the functions published for one topic over a run: each count summed, every latency value kept. */
export interface TopicMetricTotals {
  readonly counts: Readonly<Record<CountedMetric, number>>;
  readonly confirmLatenciesMs: readonly number[];
}

/** {@link TopicMetricTotals} by topic. */
export type ObservedMetrics = Readonly<Record<string, TopicMetricTotals>>;

/**
 * What the functions of a drill would have published: the relay's and the sweepers' sends per topic (every
 * subscriber's deliveries together, as they publish them), and each subscriber's consumer's outcomes per topic.
 */
export interface DrillMetrics {
  readonly sends: ObservedMetrics;
  readonly consumers: Readonly<Record<string, ObservedMetrics>>;
}

/**
 * Sums the metrics the relay, sweeper and consumer functions would have published, invocation by invocation,
 * per topic. The sweeper's backlog gauges are not summed: a gauge read each run adds up to nothing.
 * @example
 * tally.add(sendMetrics(report.topics));
 */
export class MetricsTally {
  readonly #topics = new Map<string, { counts: Record<CountedMetric, number>; latencies: number[] }>();

  /** Adds what one invocation would have published. */
  add(byTopic: MetricsByTopic): void {
    for (const [topic, values] of Object.entries(byTopic)) {
      let totals = this.#topics.get(topic);
      if (totals === undefined) {
        totals = {
          counts: Object.fromEntries(COUNTED_METRICS.map((name) => [name, 0])) as Record<
            CountedMetric,
            number
          >,
          latencies: [],
        };
        this.#topics.set(topic, totals);
      }
      for (const name of COUNTED_METRICS) totals.counts[name] += sum(values[name]);
      const latencies = values[OutboxMetricName.CONFIRM_LATENCY_MS];
      if (latencies !== undefined)
        totals.latencies.push(...(typeof latencies === 'number' ? [latencies] : latencies));
    }
  }

  /** The totals so far, by topic (a copy). */
  totals(): ObservedMetrics {
    return Object.fromEntries(
      [...this.#topics].map(([topic, { counts, latencies }]) => [
        topic,
        { counts: { ...counts }, confirmLatenciesMs: [...latencies] },
      ]),
    );
  }
}

/** A counted metric summed over every topic. */
export function metricTotal(metrics: ObservedMetrics, name: CountedMetric): number {
  return Object.values(metrics).reduce((total, topic) => total + topic.counts[name], 0);
}

/** The nearest-rank percentile (0–100) of `values`; undefined when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

function sum(value: number | readonly number[] | undefined): number {
  if (value === undefined) return 0;
  return typeof value === 'number' ? value : value.reduce((total, one) => total + one, 0);
}
