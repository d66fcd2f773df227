/**
 * `serverless-outbox/cdk`: the CDK side of the outbox — the `TransactionalOutbox` construct (outbox table,
 * topic queues with dead-letter queues, stream relay, scheduled sweeper, consumers with inboxes, audit table,
 * alarms, dashboard, the optional archive and the IAM-authorised admin API), the `OutboxSubscription` a subscriber's
 * own stack receives its deliveries with, and the function and queue constructs they are built from.
 */
export {
  ALARM_DEFAULTS,
  ARCHIVE_DEFAULTS,
  ARCHIVER_DEFAULTS,
  CLAIM_CHECK_DEFAULTS,
  CONSUMER_DEFAULTS,
  defaultBundling,
  FAILURE_QUEUE_DEFAULTS,
  FUNCTION_DEFAULTS,
  METRICS_DEFAULTS,
  OUTBOX_STREAM_DEFAULTS,
  QUEUE_DEFAULTS,
  RELAY_DEFAULTS,
  SCHEDULE_DEFAULTS,
  SWEEPER_DEFAULTS,
  TABLE_DEFAULTS,
} from './defaults.ts';
export { grantKeyUse, KEY_ACTIONS, type KeyUse } from './key-grants.ts';
export { LOCAL_ENTRY_METADATA } from './local-metadata.ts';
export {
  ADMIN_DEFAULTS,
  type OutboxAdminApi,
  type OutboxAdminApiProps,
} from './outbox-admin-api.ts';
export type { OutboxAlarmThresholds } from './outbox-alarm-thresholds.ts';
export type { OutboxArchiveProps } from './outbox-archive.ts';
export {
  OutboxClaimCheck,
  type OutboxClaimCheckOptions,
  type OutboxClaimCheckProps,
} from './outbox-claim-check.ts';
export { OutboxFunction, type OutboxFunctionProps } from './outbox-function.ts';
export {
  OUTBOX_METRIC_DIMENSIONS,
  OutboxMetricName,
  type OutboxMetricOptions,
  outboxMetric,
} from './outbox-metrics.ts';
export type { OrderedTopicMonitoring } from './outbox-monitoring.ts';
export { OutboxReceipts } from './outbox-receipts.ts';
export { OutboxSubscription, type OutboxSubscriptionProps } from './outbox-subscription.ts';
export type { OutboxSubscriptionSpec } from './outbox-subscription-spec.ts';
export {
  QueueWithDlq,
  type QueueWithDlqProps,
  type QueueWithDlqSettings,
  queueEncryption,
} from './queue-with-dlq.ts';
export { grantOnTable, grantQueryOnIndexes } from './table-grants.ts';
export {
  markOutboxRole,
  OUTBOX_NAME_METADATA,
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_TOPICS_METADATA,
  OutboxResourceRole,
  type OutboxRoleDetails,
} from './template-metadata.ts';
export { TransactionalOutbox } from './transactional-outbox.ts';
export type {
  OutboxConsumer,
  OutboxConsumerFunctionProps,
  OutboxConsumerProps,
  OutboxOrderedTopicProps,
  OutboxQueueProps,
  OutboxStreamProps,
  OutboxSubscriberProps,
  OutboxWriterBindingOptions,
  TransactionalOutboxProps,
} from './transactional-outbox-props.ts';
