/**
 * The metrics the shipped functions publish with Powertools Metrics (embedded metric format), as the alarms
 * and the dashboard read them: in the outbox's namespace, with the publishing function's `service` and the
 * message's `topic` as dimensions, and a subscriber's with `subscriber` (and `topic`, per topic).
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

/** Which metric of a subscriber's deliveries, of which function: over all its topics, or of one. */
export interface OutboxSubscriberMetricOptions extends Omit<OutboxMetricOptions, 'topic'> {
  readonly subscriber: string;
  /** @default - over every topic of the subscriber (the `service` and `subscriber` dimensions only) */
  readonly topic?: string;
}

/** One outbox metric of one function and subscriber, over all its topics or of one. */
export function outboxSubscriberMetric(options: OutboxSubscriberMetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: options.namespace,
    metricName: options.name,
    dimensionsMap: {
      [OUTBOX_METRIC_DIMENSIONS.service]: options.service,
      ...(options.topic === undefined ? {} : { [OUTBOX_METRIC_DIMENSIONS.topic]: options.topic }),
      [OUTBOX_METRIC_DIMENSIONS.subscriber]: options.subscriber,
    },
    statistic: options.statistic ?? cloudwatch.Stats.SUM,
    period: options.period,
  });
}
