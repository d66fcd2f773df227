/**
 * The outbox metrics of what the cores report: the relay's and the sweeper's sends per topic and per subscriber,
 * the consumer's outcomes per topic, and the sweeper's backlog gauges per topic and per subscriber. Pure: the
 * handler factories publish the result.
 */
import type { ConsumeCountsByTopic } from '../consumer/consume-counts.ts';
import type { SendCountsByTopic, SendFigures } from '../relay/send-counts.ts';
import type { Backlog, BacklogGauges } from '../sweeper/backlog-gauges.ts';
import type {
  MetricsBySubscriber,
  MetricsByTopic,
  SubscriberMetricValues,
  TopicMetricValues,
} from './metric-names.ts';
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

/**
 * MessagesSent, SendFailures and MessagesFailed of each subscriber the relay or sweeper sent deliveries to: per
 * topic, and added up over its topics.
 */
export function subscriberSendMetrics(topics: Readonly<SendCountsByTopic>): MetricsBySubscriber {
  const bySubscriber = new Map<string, Map<string, SendFigures>>();
  for (const [topic, counts] of Object.entries(topics)) {
    for (const [subscriber, figures] of Object.entries(counts.subscribers ?? {})) {
      const own = bySubscriber.get(subscriber) ?? new Map<string, SendFigures>();
      bySubscriber.set(subscriber, own.set(topic, figures));
    }
  }
  const values = (figures: SendFigures): TopicMetricValues => ({
    [OutboxMetricName.MESSAGES_SENT]: figures.accepted,
    [OutboxMetricName.SEND_FAILURES]: figures.sendFailures,
    [OutboxMetricName.MESSAGES_FAILED]: figures.failed,
  });
  return Object.fromEntries(
    [...bySubscriber].map(([subscriber, own]) => {
      const total = { accepted: 0, sendFailures: 0, retryScheduled: 0, failed: 0 };
      for (const figures of own.values()) {
        total.accepted += figures.accepted;
        total.sendFailures += figures.sendFailures;
        total.failed += figures.failed;
      }
      return [subscriber, { topics: mapTopics(Object.fromEntries(own), values), total: values(total) }];
    }),
  );
}

/**
 * The sweeper's gauges per topic: PENDING, SENT-unconfirmed and FAILED counts, the oldest PENDING and the oldest
 * unconfirmed age.
 */
export function backlogMetrics(backlog: Backlog): MetricsByTopic {
  return mapTopics(backlog.topics, gaugeValues);
}

/** The sweeper's gauges of each subscriber's deliveries: per topic, and over all its topics. */
export function subscriberBacklogMetrics(backlog: Backlog): MetricsBySubscriber {
  return Object.fromEntries(
    Object.entries(backlog.subscribers).map(([subscriber, own]) => [
      subscriber,
      { topics: mapTopics(own.topics, gaugeValues), total: gaugeValues(own.total) },
    ]),
  );
}

function gaugeValues(gauges: BacklogGauges): TopicMetricValues {
  return {
    [OutboxMetricName.BACKLOG_PENDING]: gauges.pending,
    [OutboxMetricName.BACKLOG_SENT_UNCONFIRMED]: gauges.sentUnconfirmed,
    [OutboxMetricName.OLDEST_PENDING_AGE_SECONDS]: gauges.oldestPendingAgeSeconds,
    [OutboxMetricName.OLDEST_UNCONFIRMED_AGE_SECONDS]: gauges.oldestUnconfirmedAgeSeconds,
    [OutboxMetricName.FAILED_MESSAGES]: gauges.failed,
  };
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
  const merged = new Map(Object.entries(first));
  for (const [topic, values] of Object.entries(second))
    merged.set(topic, { ...merged.get(topic), ...values });
  return Object.fromEntries(merged);
}

/** Both sets of a subscriber's metrics, each topic's and its total in one entry (one EMF document each). */
export function mergeSubscriberMetrics(
  first: MetricsBySubscriber,
  second: MetricsBySubscriber,
): MetricsBySubscriber {
  const merged = new Map<string, SubscriberMetricValues>(Object.entries(first));
  for (const [subscriber, values] of Object.entries(second)) {
    const before = merged.get(subscriber);
    merged.set(
      subscriber,
      before === undefined
        ? values
        : {
            topics: mergeMetrics(before.topics, values.topics),
            total: { ...before.total, ...values.total },
          },
    );
  }
  return Object.fromEntries(merged);
}

function mapTopics<T>(
  topics: Readonly<Record<string, T>>,
  map: (value: T) => TopicMetricValues,
): MetricsByTopic {
  return Object.fromEntries(Object.entries(topics).map(([topic, value]) => [topic, map(value)]));
}
