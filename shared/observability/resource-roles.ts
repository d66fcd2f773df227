/**
 * What each resource of an outbox is, as the template metadata says it: operator tools read a stack's template
 * (GetTemplate) and its physical ids (ListStackResources) and find the outbox table, the queues and the
 * functions by role — never by names, which CloudFormation generates. The construct writes these.
 */

/** Resource metadata key whose value is the resource's {@link OutboxResourceRole}. */
export const OUTBOX_ROLE_METADATA = 'serverless-outbox:role';

/** Resource metadata key of a topic queue or an inbox table: the topics it carries, as a JSON array. */
export const OUTBOX_TOPICS_METADATA = 'serverless-outbox:topics';

/** Resource metadata key of a dead-letter queue: the logical id of the topic queue it takes dead letters from. */
export const OUTBOX_SOURCE_METADATA = 'serverless-outbox:source';

/**
 * Resource metadata key of a subscriber's resources (its queue, dead-letter queue, inbox table and consumer, in the
 * subscriber's own stack): the subscriber's name, as the producer declared it.
 */
export const OUTBOX_SUBSCRIBER_METADATA = 'serverless-outbox:subscriber';

/**
 * Resource metadata key of a subscriber's queue: the name of the producer's outbox it subscribes to (the name both
 * sides derive the queue and receipt-queue names from).
 */
export const OUTBOX_NAME_METADATA = 'serverless-outbox:outbox';

/** What a resource is to the outbox. */
export const OutboxResourceRole = {
  OUTBOX_TABLE: 'outbox-table',
  AUDIT_TABLE: 'audit-table',
  TOPIC_QUEUE: 'topic-queue',
  DEAD_LETTER_QUEUE: 'dead-letter-queue',
  /** A subscriber's queue (the topics it receives in the metadata), and its dead-letter queue. */
  SUBSCRIBER_QUEUE: 'subscriber-queue',
  SUBSCRIBER_DEAD_LETTER_QUEUE: 'subscriber-dead-letter-queue',
  FAILURE_QUEUE: 'failure-queue',
  INBOX_TABLE: 'inbox-table',
  RELAY: 'relay',
  SWEEPER: 'sweeper',
  CONSUMER: 'consumer',
  ADMIN: 'admin',
  ARCHIVER: 'archiver',
  /** The producer's receipts function, and the queue its subscribers send receipts to. */
  RECEIPTS: 'receipts',
  RECEIPT_QUEUE: 'receipt-queue',
  ARCHIVE_BUCKET: 'archive-bucket',
  ALARM_TOPIC: 'alarm-topic',
} as const;

/** A value of {@link OutboxResourceRole}. */
export type OutboxResourceRole = (typeof OutboxResourceRole)[keyof typeof OutboxResourceRole];
