import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricsOptions, MetricUnit as Unit } from '@aws-lambda-powertools/metrics/types';
import { ConfigError } from '../errors.ts';
import {
  DEFAULT_METRICS_NAMESPACE,
  type MetricsBySubscriber,
  type MetricsByTopic,
  OUTBOX_METRIC_DIMENSIONS,
  OutboxMetricName,
  type TopicMetricValues,
} from '../observability/metric-names.ts';
import type { Env } from '../settings/setting.ts';

/**
 * Publishes outbox metrics, each topic's with its own `topic` dimension; and each subscriber's, with `subscriber`:
 * per topic (`topic` and `subscriber`), and over all its topics (`subscriber` alone).
 */
export interface OutboxMetricsPublisher {
  publish(byTopic: MetricsByTopic, bySubscriber?: MetricsBySubscriber): void;
}

/**
 * Powertools flushes on its own when one metric reaches 100 values, and that flush clears the `topic`
 * dimension for whatever follows; a flush carries at most this many values of a metric.
 */
const MAX_VALUES_PER_FLUSH = 99;

const UNITS: Record<OutboxMetricName, Unit> = {
  [OutboxMetricName.MESSAGES_SENT]: MetricUnit.Count,
  [OutboxMetricName.SEND_FAILURES]: MetricUnit.Count,
  [OutboxMetricName.RETRIES_SCHEDULED]: MetricUnit.Count,
  [OutboxMetricName.MESSAGES_FAILED]: MetricUnit.Count,
  [OutboxMetricName.MESSAGES_APPLIED]: MetricUnit.Count,
  [OutboxMetricName.DUPLICATES_SUPPRESSED]: MetricUnit.Count,
  [OutboxMetricName.BUSINESS_REJECTIONS]: MetricUnit.Count,
  [OutboxMetricName.DEAD_LETTERED]: MetricUnit.Count,
  [OutboxMetricName.REQUEUED]: MetricUnit.Count,
  [OutboxMetricName.MESSAGES_PARKED]: MetricUnit.Count,
  [OutboxMetricName.CONFIRM_LATENCY_MS]: MetricUnit.Milliseconds,
  [OutboxMetricName.BACKLOG_PENDING]: MetricUnit.Count,
  [OutboxMetricName.BACKLOG_SENT_UNCONFIRMED]: MetricUnit.Count,
  [OutboxMetricName.OLDEST_PENDING_AGE_SECONDS]: MetricUnit.Seconds,
  [OutboxMetricName.OLDEST_UNCONFIRMED_AGE_SECONDS]: MetricUnit.Seconds,
  [OutboxMetricName.FAILED_MESSAGES]: MetricUnit.Count,
  [OutboxMetricName.ORDERING_GAPS]: MetricUnit.Count,
};

const TRUE_VALUES = ['1', 'true', 'yes', 'on'];
const FALSE_VALUES = ['0', 'false', 'no', 'off', ''];

/** What the function's metrics are built with. */
export interface OutboxMetricsOptions {
  /** The service dimension when `POWERTOOLS_SERVICE_NAME` is not set. */
  readonly defaultService: string;
  /** Where Powertools' own warnings go (the function's logger, so they follow its log level). */
  readonly logger: NonNullable<MetricsOptions['logger']>;
}

/**
 * Outbox metrics in the embedded metric format (Powertools Metrics), from the function's environment: the
 * namespace `POWERTOOLS_METRICS_NAMESPACE` (default `ServerlessOutbox`), the `service` dimension
 * `POWERTOOLS_SERVICE_NAME`. Nothing is written when `POWERTOOLS_METRICS_DISABLED` is true, or, when that is not
 * set, when `POWERTOOLS_DEV` is (Powertools' own rule, read from the given environment so each function of the
 * local runtime decides for itself).
 * @example
 * const metrics = createOutboxMetrics(env, { defaultService: 'outbox-relay', logger });
 * metrics.publish(
 *   { 'order.created': { MessagesSent: 3 } },
 *   { inventory: { topics: { 'order.created': { MessagesSent: 2 } }, total: { MessagesSent: 2 } } },
 * );
 */
export function createOutboxMetrics(env: Env, options: OutboxMetricsOptions): OutboxMetricsPublisher {
  const namespace = env.POWERTOOLS_METRICS_NAMESPACE ?? DEFAULT_METRICS_NAMESPACE;
  if (namespace.trim() === '') throw new ConfigError('POWERTOOLS_METRICS_NAMESPACE must not be empty');
  if (metricsDisabled(env)) return { publish: () => undefined };
  const metrics = new Metrics({
    namespace,
    serviceName: env.POWERTOOLS_SERVICE_NAME ?? options.defaultService,
    logger: options.logger,
  });
  const { topic, subscriber } = OUTBOX_METRIC_DIMENSIONS;
  return {
    publish(byTopic, bySubscriber = {}) {
      for (const [name, values] of sortedEntries(byTopic))
        publishDocument(metrics, { [topic]: name }, values);
      for (const [name, own] of sortedEntries(bySubscriber)) {
        publishDocument(metrics, { [subscriber]: name }, own.total);
        for (const [topicName, values] of sortedEntries(own.topics)) {
          publishDocument(metrics, { [topic]: topicName, [subscriber]: name }, values);
        }
      }
    },
  };
}

function sortedEntries<T>(record: Readonly<Record<string, T>>): [string, T][] {
  return Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
}

/**
 * One EMF document per dimension set (EMF has one per document here: a value published under two sets would be
 * counted in each), more when it holds many values. The `service` dimension is Powertools' default.
 */
function publishDocument(
  metrics: Metrics,
  dimensions: Readonly<Record<string, string>>,
  values: TopicMetricValues,
): void {
  const series = (Object.entries(values) as [OutboxMetricName, number | readonly number[]][]).map(
    ([name, value]) => ({ name, values: typeof value === 'number' ? [value] : value }),
  );
  for (let offset = 0; series.some((s) => s.values.length > offset); offset += MAX_VALUES_PER_FLUSH) {
    for (const [name, value] of Object.entries(dimensions)) metrics.addDimension(name, value);
    for (const { name, values: all } of series) {
      for (const value of all.slice(offset, offset + MAX_VALUES_PER_FLUSH)) {
        metrics.addMetric(name, UNITS[name], value);
      }
    }
    metrics.publishStoredMetrics();
  }
}

/** `POWERTOOLS_METRICS_DISABLED` when set, otherwise `POWERTOOLS_DEV`; an unreadable value fails loudly. */
function metricsDisabled(env: Env): boolean {
  const explicit = readFlag(env, 'POWERTOOLS_METRICS_DISABLED');
  return explicit ?? readFlag(env, 'POWERTOOLS_DEV') ?? false;
}

function readFlag(env: Env, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const value = raw.trim().toLowerCase();
  if (TRUE_VALUES.includes(value)) return true;
  if (FALSE_VALUES.includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}
