/**
 * The settings contract of the shipped functions: every environment variable the relay, the sweeper, a
 * consumer and a writer read, defined once. The handlers read these definitions and the CDK construct
 * writes them, so a name is written in one place and a value is checked the same way at synth and at start.
 */
import * as z from 'zod/mini';
// The writer's bounds as plain constants: the writer's option objects built from them stay out of the bundles of
// functions that only read settings.
import {
  DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
  MAX_CLAIM_CHECK_THRESHOLD_BYTES,
  MIN_CLAIM_CHECK_THRESHOLD_BYTES,
} from '../claim-check/claim-check-reference.ts';
import { DEFAULT_VISIBILITY_BACKOFF, MAX_VISIBILITY_SECONDS } from '../consumer/failure-handling.ts';
import { DEFAULT_INBOX_RETENTION_DAYS } from '../consumer/inbox-record.ts';
import { CONTROL_TOPICS } from '../message/control-topics.ts';
import { topicSchema } from '../message/envelope.ts';
import {
  describeMixedSources,
  MAX_GAP_TIMEOUT_MS,
  mixedSequenceSources,
  type OrderedTopic,
  SequenceSource,
  scopeSchema,
} from '../ordering/ordering.ts';
import { DEFAULT_RETENTION_DAYS, MAX_STREAM_GRACE_MS } from '../outbox/outbox-defaults.ts';
import { DEFAULT_DUE_SHARDS, DEFAULT_STREAM_GRACE_MS, MAX_DUE_SHARDS } from '../outbox/outbox-item.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS, MAX_CONFIRM_DEADLINE_MS } from '../outbox/outbox-store.ts';
import { subscriberNameSchema } from '../receipts/receipt.ts';
import { retryPolicySchema } from '../retry/retry-policy.ts';
import {
  DEFAULT_SWEEPER_MAX_MESSAGES_PER_SECOND,
  MAX_SWEEPER_MESSAGES_PER_SECOND,
} from '../sweeper/sweep.ts';
import { integerSetting, jsonSetting, textSetting } from './setting.ts';

/** DynamoDB's table names: 3–255 of letters, digits, `_`, `.` and `-`. */
const tableName = z.string().check(z.regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name'));

/** S3's bucket names: 3–63 of lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit. */
const bucketName = z
  .string()
  .check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name'));

/** An SQS queue URL. */
const queueUrl = z.url('must be a queue URL');

/** The shortest gap timeout: a consumer holds an early message at least this long before its gap is alarmed. */
const MIN_GAP_TIMEOUT_MS = 1_000;

/** One ordered topic's scope, gap timeout and seq source, as ORDERED_TOPICS spells it. */
const orderedTopicSchema = z.strictObject({
  scope: scopeSchema,
  sequence: z.optional(
    z.enum([SequenceSource.COUNTER, SequenceSource.AGGREGATE_VERSION], {
      error: `must be '${SequenceSource.COUNTER}' or '${SequenceSource.AGGREGATE_VERSION}'`,
    }),
  ),
  gapTimeoutMs: z
    .number({ error: `must be an integer from ${MIN_GAP_TIMEOUT_MS} to ${MAX_GAP_TIMEOUT_MS}` })
    .check(
      z.int(`must be an integer from ${MIN_GAP_TIMEOUT_MS} to ${MAX_GAP_TIMEOUT_MS}`),
      z.minimum(MIN_GAP_TIMEOUT_MS, `must be an integer from ${MIN_GAP_TIMEOUT_MS} to ${MAX_GAP_TIMEOUT_MS}`),
      z.maximum(MAX_GAP_TIMEOUT_MS, `must be an integer from ${MIN_GAP_TIMEOUT_MS} to ${MAX_GAP_TIMEOUT_MS}`),
    ),
}) satisfies z.ZodMiniType<OrderedTopic>;

/**
 * The most subscribers of one topic: each is a row in the writer's transaction (at most 100 items), so a write of
 * a few messages stays well inside it.
 */
export const MAX_SUBSCRIBERS_PER_TOPIC = 10;

/**
 * The most topics of one subscriber: a receipt's condition lists them with the control topics, which every
 * subscriber may confirm, and DynamoDB's IN takes 100 values.
 */
export const MAX_TOPICS_PER_SUBSCRIBER = 100 - CONTROL_TOPICS.length;

/** SQS's redrive policy allows 1–1000 receives. */
const MAX_RECEIVE_COUNT = 1_000;

/** Every variable a shipped function reads, by what it configures. */
export const OutboxSettings = {
  outboxTable: textSetting({ name: 'OUTBOX_TABLE', description: 'the outbox table' }, tableName),
  topicQueues: jsonSetting(
    { name: 'TOPIC_QUEUES', description: 'JSON object: topic → URL of the queue it is sent to' },
    z.record(topicSchema, queueUrl),
  ),
  retryPolicies: jsonSetting(
    {
      name: 'RETRY_POLICIES',
      description: 'JSON object: topic → {baseDelayMs, multiplier, maxDelayMs, maxAttempts}',
      defaultValue: {},
    },
    z.record(topicSchema, retryPolicySchema),
  ),
  subscriberRetryPolicies: jsonSetting(
    {
      name: 'SUBSCRIBER_RETRY_POLICIES',
      description:
        "JSON object: subscriber → {baseDelayMs, multiplier, maxDelayMs, maxAttempts}, over its topics' RETRY_POLICIES for that subscriber's deliveries",
      defaultValue: {},
    },
    z.record(subscriberNameSchema, retryPolicySchema),
  ),
  confirmDeadlineMs: integerSetting({
    name: 'CONFIRM_DEADLINE_MS',
    description: 'how long a SENT message may go unconfirmed before the sweeper asks the downstream',
    min: 1_000,
    max: MAX_CONFIRM_DEADLINE_MS,
    defaultValue: DEFAULT_CONFIRM_DEADLINE_MS,
  }),
  dueShards: integerSetting({
    name: 'DUE_SHARDS',
    description: 'partitions of the due index; the writers and the sweeper must agree',
    min: 1,
    max: MAX_DUE_SHARDS,
    defaultValue: DEFAULT_DUE_SHARDS,
  }),
  sweeperMaxMessagesPerSecond: integerSetting({
    name: 'SWEEPER_MAX_MESSAGES_PER_SECOND',
    description:
      'the most messages a sweeper run claims per second on average (bounds its DynamoDB writes and SQS requests while it drains a backlog)',
    min: 1,
    max: MAX_SWEEPER_MESSAGES_PER_SECOND,
    defaultValue: DEFAULT_SWEEPER_MAX_MESSAGES_PER_SECOND,
  }),
  streamGraceMs: integerSetting({
    name: 'STREAM_GRACE_MS',
    description: 'how long a new message waits for the stream relay before the sweeper may send it',
    min: 0,
    max: MAX_STREAM_GRACE_MS,
    defaultValue: DEFAULT_STREAM_GRACE_MS,
  }),
  retentionDays: integerSetting({
    name: 'RETENTION_DAYS',
    description: 'days a CONFIRMED or CANCELLED message is kept before TTL removes it',
    min: 1,
    max: 3_650,
    defaultValue: DEFAULT_RETENTION_DAYS,
  }),
  auditTable: textSetting(
    { name: 'AUDIT_TABLE', description: "the audit trail of operators' actions and the DLQ redrive journal" },
    tableName,
  ),
  deadLetterQueues: jsonSetting(
    {
      name: 'DEAD_LETTER_QUEUES',
      description: "JSON object: topic → URL of the dead-letter queue of the topic's queue",
      defaultValue: {},
    },
    z.record(topicSchema, queueUrl),
  ),
  deliveryInboxes: jsonSetting(
    {
      name: 'DELIVERY_INBOXES',
      description: "JSON object: topic → the consumer's inbox table that proves delivery",
      defaultValue: {},
    },
    z.record(topicSchema, tableName),
  ),
  inboxTable: textSetting({ name: 'INBOX_TABLE', description: "the consumer's inbox table" }, tableName),
  inboxRetentionDays: integerSetting({
    name: 'INBOX_RETENTION_DAYS',
    description: 'days an inbox row is kept; must outlast every redelivery',
    min: 1,
    max: 3_650,
    defaultValue: DEFAULT_INBOX_RETENTION_DAYS,
  }),
  sourceQueueUrl: textSetting(
    { name: 'SOURCE_QUEUE_URL', description: 'the queue the consumer reads' },
    queueUrl,
  ),
  deadLetterQueueUrl: textSetting(
    { name: 'DEAD_LETTER_QUEUE_URL', description: "the consumer queue's dead-letter queue" },
    queueUrl,
  ),
  maxReceiveCount: integerSetting({
    name: 'MAX_RECEIVE_COUNT',
    description: "the source queue's maxReceiveCount",
    min: 1,
    max: MAX_RECEIVE_COUNT,
  }),
  visibilityBackoffBaseSeconds: integerSetting({
    name: 'VISIBILITY_BACKOFF_BASE_SECONDS',
    description: 'visibility timeout after the first failed receive',
    min: 1,
    max: MAX_VISIBILITY_SECONDS,
    defaultValue: DEFAULT_VISIBILITY_BACKOFF.baseSeconds,
  }),
  visibilityBackoffMaxSeconds: integerSetting({
    name: 'VISIBILITY_BACKOFF_MAX_SECONDS',
    description: 'longest visibility timeout after a failed receive',
    min: 1,
    max: MAX_VISIBILITY_SECONDS,
    defaultValue: DEFAULT_VISIBILITY_BACKOFF.maxSeconds,
  }),
  archiveBucket: textSetting(
    { name: 'ARCHIVE_BUCKET', description: 'the S3 bucket the archiver writes expired messages to' },
    bucketName,
  ),
  receiptQueueUrl: textSetting(
    {
      name: 'RECEIPT_QUEUE_URL',
      description:
        "the producer's receipt queue: the consumer confirms each message by a receipt sent there instead of writing the producer's outbox",
    },
    queueUrl,
  ),
  subscriber: textSetting(
    {
      name: 'SUBSCRIBER',
      description:
        'the name the producer declared this consumer by; it signs every receipt (with RECEIPT_QUEUE_URL)',
    },
    subscriberNameSchema,
  ),
  subscriptions: jsonSetting(
    {
      name: 'SUBSCRIPTIONS',
      description:
        "JSON object: topic → {subscriber name → URL of that subscriber's queue}; a topic listed is stored as one delivery per subscriber and each delivery sent to its subscriber's queue",
      defaultValue: {},
    },
    z
      .record(
        topicSchema,
        z
          .record(subscriberNameSchema, queueUrl)
          .check(
            z.refine(
              (queues) =>
                Object.keys(queues).length >= 1 && Object.keys(queues).length <= MAX_SUBSCRIBERS_PER_TOPIC,
              `must name from 1 to ${MAX_SUBSCRIBERS_PER_TOPIC} subscribers`,
            ),
          ),
      )
      .check(
        z.refine(
          (subscriptions) => {
            const topics = new Map<string, number>();
            for (const queues of Object.values(subscriptions)) {
              for (const name of Object.keys(queues)) topics.set(name, (topics.get(name) ?? 0) + 1);
            }
            return [...topics.values()].every((count) => count <= MAX_TOPICS_PER_SUBSCRIBER);
          },
          // A receipt's confirmation names the subscriber's topics in one condition (DynamoDB's IN takes 100).
          `gives a subscriber more than ${MAX_TOPICS_PER_SUBSCRIBER} topics`,
        ),
      ),
  ),
  claimCheckBucket: textSetting(
    {
      name: 'CLAIM_CHECK_BUCKET',
      description:
        'the S3 bucket of claim-checked payloads; absent: large messages are refused and references unread',
    },
    bucketName,
  ),
  claimCheckThresholdBytes: integerSetting({
    name: 'CLAIM_CHECK_THRESHOLD_BYTES',
    description: 'the wire size above which a message keeps its payload in S3 and carries a reference',
    min: MIN_CLAIM_CHECK_THRESHOLD_BYTES,
    max: MAX_CLAIM_CHECK_THRESHOLD_BYTES,
    defaultValue: DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
  }),
  orderedTopics: jsonSetting(
    {
      name: 'ORDERED_TOPICS',
      description:
        'JSON object: ordered topic → {scope, gapTimeoutMs, sequence?}; a topic not listed is unordered (the default: none)',
      defaultValue: {},
    },
    z.record(topicSchema, orderedTopicSchema).check(
      z.refine((ordering) => mixedSequenceSources(ordering).length === 0, {
        error: (issue) => {
          const [mixed] = mixedSequenceSources(issue.input as Record<string, OrderedTopic>);
          return mixed === undefined ? 'mixes seq sources in one scope' : describeMixedSources(mixed);
        },
      }),
    ),
  ),
  sequenceTable: textSetting(
    {
      name: 'SEQUENCE_TABLE',
      description:
        "the table of each order key's last seq, for ordered messages written without an aggregate version",
    },
    tableName,
  ),
} as const;

/**
 * A function's list of settings, as `list` builds it. Only the CDK construct reads these lists, never a handler;
 * built in a call marked pure, a list (its reads of `OutboxSettings`, which a bundler must otherwise keep) is left
 * out of every Lambda bundle.
 */
function settingsList<const T extends readonly unknown[]>(list: () => T): T {
  return list();
}

/** The variables the shipped archiver reads. */
export const ARCHIVER_SETTINGS = /* @__PURE__ */ settingsList(() => [OutboxSettings.archiveBucket]);

/**
 * The variables the shipped stream relay reads. DUE_SHARDS because a message the relay fails is filed in the
 * attention index under its due shard, which the admin must find; ORDERED_TOPICS because it sends the messages
 * of one order key in seq order.
 */
export const RELAY_SETTINGS = /* @__PURE__ */ settingsList(() => [
  OutboxSettings.outboxTable,
  OutboxSettings.topicQueues,
  OutboxSettings.subscriptions,
  OutboxSettings.retryPolicies,
  OutboxSettings.subscriberRetryPolicies,
  OutboxSettings.confirmDeadlineMs,
  OutboxSettings.retentionDays,
  OutboxSettings.dueShards,
  OutboxSettings.orderedTopics,
]);

/** The variables the shipped sweeper reads. */
export const SWEEPER_SETTINGS = /* @__PURE__ */ settingsList(() => [
  ...RELAY_SETTINGS,
  OutboxSettings.deliveryInboxes,
  OutboxSettings.sweeperMaxMessagesPerSecond,
]);

/**
 * The variables a consumer built with `createConsumerHandler` reads (OUTBOX_TABLE only to confirm in the
 * producer's outbox, RECEIPT_QUEUE_URL and SUBSCRIBER only to confirm by receipt, CLAIM_CHECK_BUCKET only to read claim-checked payloads, ORDERED_TOPICS for the ordering of its topics).
 */
export const CONSUMER_SETTINGS = /* @__PURE__ */ settingsList(() => [
  OutboxSettings.inboxTable,
  OutboxSettings.inboxRetentionDays,
  OutboxSettings.outboxTable,
  OutboxSettings.retentionDays,
  OutboxSettings.sourceQueueUrl,
  OutboxSettings.deadLetterQueueUrl,
  OutboxSettings.maxReceiveCount,
  OutboxSettings.visibilityBackoffBaseSeconds,
  OutboxSettings.visibilityBackoffMaxSeconds,
  OutboxSettings.receiptQueueUrl,
  OutboxSettings.subscriber,
  OutboxSettings.claimCheckBucket,
  OutboxSettings.orderedTopics,
]);

/**
 * The variables the producer's receipts function reads: the outbox it confirms in, the retention a confirmed
 * delivery gets, and the subscribers of each topic (a receipt confirms only a delivery its subscriber is declared for).
 */
export const RECEIPTS_SETTINGS = /* @__PURE__ */ settingsList(() => [
  OutboxSettings.outboxTable,
  OutboxSettings.retentionDays,
  OutboxSettings.subscriptions,
]);

/**
 * The variables the admin core reads (`adminDeps`): the outbox and its indexes, the audit trail, each topic's
 * queue, dead-letter queue and delivery inbox (for erase), the retention a cancel sets, and the ordered topics
 * (to skip a gap in an order key).
 */
export const ADMIN_SETTINGS = /* @__PURE__ */ settingsList(() => [
  OutboxSettings.outboxTable,
  OutboxSettings.auditTable,
  OutboxSettings.topicQueues,
  OutboxSettings.subscriptions,
  OutboxSettings.deadLetterQueues,
  OutboxSettings.deliveryInboxes,
  OutboxSettings.dueShards,
  OutboxSettings.retentionDays,
  // Only to erase claim-checked payloads with their messages.
  OutboxSettings.claimCheckBucket,
  OutboxSettings.orderedTopics,
]);

/**
 * The variables a writer reads with `outboxWriterFromEnv` (CLAIM_CHECK_BUCKET only to claim-check payloads,
 * SEQUENCE_TABLE only when a topic is ordered and a message comes without its aggregate's version).
 */
export const WRITER_SETTINGS = /* @__PURE__ */ settingsList(() => [
  OutboxSettings.outboxTable,
  OutboxSettings.dueShards,
  OutboxSettings.streamGraceMs,
  OutboxSettings.claimCheckBucket,
  OutboxSettings.claimCheckThresholdBytes,
  OutboxSettings.orderedTopics,
  OutboxSettings.sequenceTable,
  OutboxSettings.subscriptions,
]);
