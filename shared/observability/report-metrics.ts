/**
 * The outbox metrics of what the cores report: the relay's and the sweeper's sends per topic, the consumer's
 * outcomes per topic, and the sweeper's backlog gauges. Pure: the handler factories publish the result.
 */
import type { OutboxCounts } from '../admin/outbox-stats.ts';
import type { ConsumeCountsByTopic } from '../consumer/consume-counts.ts';
import type { SendCountsByTopic } from '../relay/send-counts.ts';
import type { MetricsByTopic, TopicMetricValues } from './metric-names.ts';
import { OutboxMetricName } from './metric-names.ts';

/** MessagesSent, SendFailures, RetriesScheduled and MessagesFailed of each topic the relay or sweeper handled. */
export function sendMetrics(topics: Readonly<SendCountsByTopic>): MetricsByTopic {
  return mapTopics(topics, (counts) => ({
    [OutboxMetricName.MESSAGES_SENT]: counts.accepted,
    [OutboxMetricName.SEND_FAILURES]: counts.sendFailures,
    [OutboxMetricName.RETRIES_SCHEDULED]: counts.retryScheduled,
    [OutboxMetricName.MESSAGES_FAILED]: counts.failed,
  }));
}

/** The consumer's outcomes of each topic it received, and one ConfirmLatencyMs value per confirmation. */
export function consumeMetrics(topics: Readonly<ConsumeCountsByTopic>): MetricsByTopic {
  return mapTopics(topics, (counts) => ({
    [OutboxMetricName.MESSAGES_APPLIED]: counts.applied,
    [OutboxMetricName.DUPLICATES_SUPPRESSED]: counts.duplicates,
    [OutboxMetricName.BUSINESS_REJECTIONS]: counts.rejected,
    [OutboxMetricName.DEAD_LETTERED]: counts.deadLettered,
    [OutboxMetricName.REQUEUED]: counts.requeued,
    // Only ordered topics park: the others publish no zero for it.
    ...(counts.parked === 0 ? {} : { [OutboxMetricName.MESSAGES_PARKED]: counts.parked }),
    ...(counts.confirmLatenciesMs.length === 0
      ? {}
      : { [OutboxMetricName.CONFIRM_LATENCY_MS]: counts.confirmLatenciesMs }),
  }));
}

/** The sweeper's gauges per topic: PENDING, SENT-unconfirmed and FAILED counts, the oldest PENDING age. */
export function backlogMetrics(counts: OutboxCounts): MetricsByTopic {
  return mapTopics(counts.topics, (topic) => ({
    [OutboxMetricName.BACKLOG_PENDING]: topic.PENDING,
    [OutboxMetricName.BACKLOG_SENT_UNCONFIRMED]: topic.SENT,
    [OutboxMetricName.OLDEST_PENDING_AGE_SECONDS]: topic.oldestPendingAgeSeconds,
    [OutboxMetricName.FAILED_MESSAGES]: topic.FAILED,
  }));
}

/**
 * The sweeper's OrderingGaps of each ordered topic: the gaps it found this run, 0 for an ordered topic without one
 * (so an alarm on it has data while all is well).
 */
export function orderingGapMetrics(
  gaps: Readonly<Record<string, number>>,
  orderedTopics: readonly string[],
): MetricsByTopic {
  const topics = [...new Set([...orderedTopics, ...Object.keys(gaps)])];
  return Object.fromEntries(
    topics.map((topic) => [
      topic,
      { [OutboxMetricName.ORDERING_GAPS]: Object.hasOwn(gaps, topic) ? (gaps[topic] ?? 0) : 0 },
    ]),
  );
}

/** Both sets of metrics, a topic's in one entry (one EMF document per topic instead of two). */
export function mergeMetrics(first: MetricsByTopic, second: MetricsByTopic): MetricsByTopic {
  const merged: Record<string, TopicMetricValues> = { ...first };
  for (const [topic, values] of Object.entries(second)) merged[topic] = { ...merged[topic], ...values };
  return merged;
}

function mapTopics<T>(
  topics: Readonly<Record<string, T>>,
  map: (value: T) => TopicMetricValues,
): MetricsByTopic {
  return Object.fromEntries(Object.entries(topics).map(([topic, value]) => [topic, map(value)]));
}
