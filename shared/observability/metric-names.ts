/**
 * The metrics the shipped functions publish with Powertools Metrics (embedded metric format), in the outbox's
 * namespace, with the publishing function's `service` and the message's `topic` as dimensions; the relay's and the
 * sweeper's figures of deliveries to subscribers also with `subscriber` (per topic, and over all its topics). The
 * publishers and the CDK alarms and dashboard read these names from here, so they cannot disagree.
 */

/** The namespace the outbox's metrics go to unless the construct is given another. */
export const DEFAULT_METRICS_NAMESPACE = 'ServerlessOutbox';

/** The names of the outbox metrics, by what they count. */
export const OutboxMetricName = {
  /** Relay and sweeper: messages SQS accepted. */
  MESSAGES_SENT: 'MessagesSent',
  /** Relay and sweeper: sends SQS refused or that timed out. */
  SEND_FAILURES: 'SendFailures',
  /** Relay and sweeper: failed sends given another attempt. */
  RETRIES_SCHEDULED: 'RetriesScheduled',
  /** Relay and sweeper: messages that became FAILED. */
  MESSAGES_FAILED: 'MessagesFailed',
  /** Consumer: messages applied (the inbox row committed with the effect). */
  MESSAGES_APPLIED: 'MessagesApplied',
  /** Consumer: copies of messages already applied, skipped. */
  DUPLICATES_SUPPRESSED: 'DuplicatesSuppressed',
  /** Consumer: messages whose business condition failed (recorded as their outcome). */
  BUSINESS_REJECTIONS: 'BusinessRejections',
  /** Consumer: messages it sent to the dead-letter queue. */
  DEAD_LETTERED: 'DeadLettered',
  /** Consumer: messages it put back on the queue as fresh copies (lost transaction conflicts). */
  REQUEUED: 'Requeued',
  /** Consumer, ordered topics: messages held until their predecessor is applied. */
  MESSAGES_PARKED: 'MessagesParked',
  /** Consumer: milliseconds from the message's creation to its confirmation. */
  CONFIRM_LATENCY_MS: 'ConfirmLatencyMs',
  /** Sweeper, each run: PENDING messages. */
  BACKLOG_PENDING: 'BacklogPending',
  /** Sweeper, each run: SENT messages not confirmed yet. */
  BACKLOG_SENT_UNCONFIRMED: 'BacklogSentUnconfirmed',
  /** Sweeper, each run: age of the oldest PENDING message. */
  OLDEST_PENDING_AGE_SECONDS: 'OldestPendingAgeSeconds',
  /**
   * Sweeper, each run: age (since it was created) of the oldest SENT message not confirmed yet; for a subscriber,
   * how long its oldest delivery has waited for its receipt.
   */
  OLDEST_UNCONFIRMED_AGE_SECONDS: 'OldestUnconfirmedAgeSeconds',
  /** Sweeper, each run: FAILED messages (a gauge, not a count of new failures). */
  FAILED_MESSAGES: 'FailedMessages',
  /**
   * Sweeper, ordered topics: messages a consumer held past the gap timeout waiting for a predecessor (each run
   * counts an open gap again until it closes).
   */
  ORDERING_GAPS: 'OrderingGaps',
} as const;

/** A value of {@link OutboxMetricName}. */
export type OutboxMetricName = (typeof OutboxMetricName)[keyof typeof OutboxMetricName];

/**
 * The dimensions of the outbox metrics: every one has `service`; a topic's has `topic`, a subscriber's figure of
 * one topic `topic` and `subscriber`, a subscriber's figure over all its topics `subscriber`.
 */
export const OUTBOX_METRIC_DIMENSIONS = {
  service: 'service',
  topic: 'topic',
  subscriber: 'subscriber',
} as const;

/** The `topic` dimension of a message whose stored item or record could not be read. */
export const UNKNOWN_TOPIC = '(unknown)';

/** Values of outbox metrics for one topic: a count or gauge, or one value per message (a latency). */
export type TopicMetricValues = Partial<Record<OutboxMetricName, number | readonly number[]>>;

/** {@link TopicMetricValues} by topic. */
export type MetricsByTopic = Readonly<Record<string, TopicMetricValues>>;

/** The values of one subscriber's metrics: of its deliveries of each topic, and of all of them together. */
export interface SubscriberMetricValues {
  readonly topics: MetricsByTopic;
  /** Over every topic: counts added up, the oldest of the ages. */
  readonly total: TopicMetricValues;
}

/** {@link SubscriberMetricValues} by subscriber. */
export type MetricsBySubscriber = Readonly<Record<string, SubscriberMetricValues>>;
