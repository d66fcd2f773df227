/**
 * The metrics the shipped functions publish with Powertools Metrics (embedded metric format), as the alarms
 * and the dashboard read them: in the outbox's namespace, with the publishing function's `service` and the
 * message's `topic` as dimensions.
 */
import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { OUTBOX_METRIC_DIMENSIONS, type OutboxMetricName } from '../../shared/observability/metric-names.ts';

export { OUTBOX_METRIC_DIMENSIONS, OutboxMetricName } from '../../shared/observability/metric-names.ts';

/** Which outbox metric, of which function and topic. */
export interface OutboxMetricOptions {
  readonly namespace: string;
  readonly name: OutboxMetricName;
  /** The publishing function's service name (its `POWERTOOLS_SERVICE_NAME`). */
  readonly service: string;
  readonly topic: string;
  /** @default 'Sum' */
  readonly statistic?: string;
  readonly period: Duration;
}

/** One outbox metric of one function and topic. */
export function outboxMetric(options: OutboxMetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: options.namespace,
    metricName: options.name,
    dimensionsMap: {
      [OUTBOX_METRIC_DIMENSIONS.service]: options.service,
      [OUTBOX_METRIC_DIMENSIONS.topic]: options.topic,
    },
    statistic: options.statistic ?? cloudwatch.Stats.SUM,
    period: options.period,
  });
}
