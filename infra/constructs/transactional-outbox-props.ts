/**
 * The props of a `TransactionalOutbox` and of what it adds: its topic queues and their ordering, the stream
 * mapping, its consumers and the writers it binds.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { SequenceSource } from '../../shared/ordering/ordering.ts';
import type { RetryPolicy } from '../../shared/retry/retry-policy.ts';
import type { OutboxAlarmThresholds } from './outbox-alarm-thresholds.ts';
import type { OutboxArchiveProps } from './outbox-archive.ts';
import type { OutboxClaimCheckProps } from './outbox-claim-check.ts';
import type { OutboxFunction } from './outbox-function.ts';
import type { QueueWithDlq, QueueWithDlqProps } from './queue-with-dlq.ts';

/** A queue the relay forwards messages to, with the topics routed to it. */
export interface OutboxQueueProps extends QueueWithDlqProps {
  /** Topics whose messages go to this queue (dotted lowercase, e.g. `order.created`); a topic goes to exactly one queue. */
  readonly topics: readonly string[];
}

/**
 * Per-aggregate ordering of one topic: its messages carry an order key (`<scope>#<aggregateId>`) and a sequence
 * number, and each consumer applies an order key's messages in sequence, holding (parking) one whose
 * predecessor has not been applied yet. The transport may still reorder; the consumer restores the order.
 */
export interface OutboxOrderedTopicProps {
  /**
   * The sequence the topic's messages are numbered in, per aggregate: 1–32 lowercase letters, digits or `-`.
   * Topics that share a scope share one sequence per aggregate (e.g. `order.created` and `order.cancelled` in
   * scope `order`), so they must be routed to the same queue.
   */
  readonly scope: string;
  /**
   * How long a consumer may hold a message whose predecessor has not arrived before the sweeper counts a gap
   * (the `OrderingGaps` metric and its alarm) and resends the predecessor (1 s – 12 h).
   * @default Duration.minutes(5)
   */
  readonly gapTimeout?: Duration;
  /**
   * Where the writer takes each message's seq from: `'counter'`, a row per aggregate in the sequence table, read
   * and advanced in the write's transaction (any writer, no coordination); or `'aggregate-version'`, the version the
   * write gives for its aggregate (`aggregateVersions`), which the business item must keep under its own condition —
   * cheaper, and every write of the scope must give it. The topics of one scope must name the same source (synth
   * fails otherwise: two sources would give two messages of one aggregate one seq).
   * @default 'counter'
   */
  readonly sequence?: SequenceSource;
}

/** Settings of the outbox stream → relay event source mapping. */
export interface OutboxStreamProps {
  /**
   * Records per relay invocation (Lambda allows up to 10,000).
   * @default 100
   */
  readonly batchSize?: number;
  /**
   * @default Duration.seconds(1)
   */
  readonly maxBatchingWindow?: Duration;
  /**
   * Retries of a failing batch before its metadata goes to the failure queue (-1 = until the record expires).
   * @default 10
   */
  readonly retryAttempts?: number;
  /**
   * Oldest record the relay still takes; older ones go to the failure queue and the sweeper delivers them.
   * @default Duration.hours(1)
   */
  readonly maxRecordAge?: Duration;
  /**
   * @default true
   */
  readonly bisectBatchOnError?: boolean;
  /**
   * Concurrent batches per shard (1–10). Lambda keeps the order of each item's records at any factor; above 1,
   * records of different items (different messages) of a shard may be relayed out of order. Ordered topics do
   * not rely on the stream's order either way: their consumers apply each aggregate's messages by sequence number.
   * @default 1
   */
  readonly parallelizationFactor?: number;
}

/**
 * A subscriber of some of the outbox's topics: a service of its own that receives each message of them on its own
 * queue, applies it once in its own inbox and confirms it by receipt.
 */
export interface OutboxSubscriberProps extends QueueWithDlqProps {
  /**
   * The topics delivered to it (dotted lowercase). A message of a topic with subscribers is stored as one delivery
   * per subscriber, each with its own status, retries and confirmation; such a topic goes to no queue of `queues`.
   */
  readonly topics: readonly string[];
}

/** Props of a {@link TransactionalOutbox}. */
export interface TransactionalOutboxProps {
  /** The topic queues, by name: each with the topics routed to it and its queue settings. */
  readonly queues: Readonly<Record<string, OutboxQueueProps>>;
  /**
   * The subscribers the outbox delivers to, by name (lowercase letters, digits and -, e.g. `inventory`): each gets
   * its queue with a dead-letter queue (`<Name>SubscriberQueue`), one delivery of every message of its topics, and
   * a consumer with `addConsumer(id, { subscriber })`. The first subscriber adds the receipt queue and the
   * receipts function (`receipts`).
   * @example
   * subscribers: { inventory: { topics: ['order.created'] }, loyalty: { topics: ['order.created'] } }
   * @default - none: every topic goes to one queue
   */
  readonly subscribers?: Readonly<Record<string, OutboxSubscriberProps>>;
  /**
   * An outbox table you created: keyed `messageId` (string), with a stream of new and old images and the `due`
   * (`dueShard`/`nextAttemptAt`), `byAggregate` (`aggregateId`/`messageId`) and `attention`
   * (`attentionKey`/`createdAt`) indexes, TTL on `expiresAt`; with `ordering`, also the keys-only `byOrderKey`
   * index (`orderKey` string / `seq` number).
   * @default - a new table, see `outboxTableProps`
   */
  readonly existingOutboxTable?: dynamodb.ITable;
  /**
   * Props merged over the defaults of a new outbox table (on demand, PITR, stream, TTL, indexes). The key and
   * the stream cannot be changed.
   * @default - the defaults
   */
  readonly outboxTableProps?: Partial<dynamodb.TableProps>;
  /**
   * Per topic, how failed sends are retried and how many reconciliation rounds a message gets.
   * @default - DEFAULT_RETRY_POLICY: 2 s doubling to 15 min, 10 attempts
   */
  readonly retryPolicies?: Readonly<Record<string, RetryPolicy>>;
  /**
   * Per topic, whether consumers apply each aggregate's messages in the order they were written: `'none'`, or
   * the topic's ordering scope and gap timeout. Any ordered topic adds the sequence table once a writer needs it
   * (the writers' counter per order key, see `sequenceTable`), gives every function the `ORDERED_TOPICS`
   * setting, lets the sweeper look up predecessors in the `byOrderKey` index and adds the
   * `orderingGaps/<topic>` alarm. An ordered topic must be routed to a queue, and the topics of one scope to the
   * same queue.
   * @example
   * ordering: { 'order.created': { scope: 'order' }, 'order.cancelled': { scope: 'order' } }
   * @default - no topic is ordered
   */
  readonly ordering?: Readonly<Record<string, 'none' | OutboxOrderedTopicProps>>;
  /**
   * How long a SENT message may go unconfirmed before the sweeper asks its consumer (doubles per round, capped at 12 h).
   * @default Duration.minutes(5)
   */
  readonly confirmDeadline?: Duration;
  /**
   * Partitions of the sparse due index (1–64); writers and the sweeper get the same value.
   * @default 8
   */
  readonly dueShards?: number;
  /**
   * How long a new message waits for the stream relay before the sweeper may send it.
   * @default Duration.minutes(1)
   */
  readonly streamGracePeriod?: Duration;
  /**
   * How long a CONFIRMED or CANCELLED message is kept before TTL removes it (FAILED messages are never
   * removed).
   * @default Duration.days(30)
   */
  readonly retention?: Duration;
  /**
   * Keep expired messages in S3: `true` for a new bucket, or the bucket to use and when a new bucket's objects
   * move to Glacier Instant Retrieval. The archiver reads the stream's TTL deletions and writes gzip JSON Lines
   * partitioned by day.
   * @default - no archive: expired messages are gone
   */
  readonly archive?: boolean | OutboxArchiveProps;
  /**
   * Payloads too large for their queue: a message larger than `thresholdBytes` on the wire keeps its payload in
   * S3 under `claim-check/` and carries a reference, which consumers resolve and verify (see
   * `OutboxClaimCheck`); `false` refuses such messages at write instead.
   * @default - a new bucket, 64 KiB threshold
   */
  readonly claimCheck?: false | OutboxClaimCheckProps;
  /**
   * Props merged over the defaults of the audit table (operator actions: on demand, PITR, no TTL). The key
   * cannot be changed.
   * @default - the defaults
   */
  readonly auditTableProps?: Partial<dynamodb.TableProps>;
  /**
   * CloudWatch namespace of the metrics the outbox's functions publish (`POWERTOOLS_METRICS_NAMESPACE`), which
   * the alarms and the dashboard read. Give each outbox of an account its own.
   * @default 'ServerlessOutbox'
   */
  readonly metricsNamespace?: string;
  /**
   * The SNS topic every alarm notifies (on alarm and back to OK).
   * @default - a new topic, encrypted with a new KMS key that CloudWatch may use
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * When the alarms go off.
   * @default - ALARM_DEFAULTS: any dead letter, failure-queue record, FAILED message, ordering gap, error or throttle;
   * a message PENDING for 15 minutes; the relay 5 minutes behind the stream
   */
  readonly alarmThresholds?: OutboxAlarmThresholds;
  /**
   * The CloudWatch dashboard's name.
   * @default - `<deployed stack name>-<construct id in kebab case>`, e.g. `Shop-outbox`
   */
  readonly dashboardName?: string;
  /**
   * Props merged over the relay function's defaults (Node 24, ARM64, 30 s, 512 MB, the shipped handler).
   * @default - the defaults
   */
  readonly relayFunctionProps?: Partial<nodejs.NodejsFunctionProps>;
  /**
   * Props merged over the sweeper function's defaults (Node 24, ARM64, 60 s, 512 MB, the shipped handler).
   * @default - the defaults
   */
  readonly sweeperFunctionProps?: Partial<nodejs.NodejsFunctionProps>;
  /**
   * When the sweeper runs.
   * @default events.Schedule.rate(Duration.minutes(1))
   */
  readonly sweeperSchedule?: events.Schedule;
  /**
   * The most messages a sweeper run claims per second on average while it drains a backlog: each costs a claim
   * (3 write units), its share of a SendMessageBatch and a SENT update (2 write units).
   * @default 600 (a million due messages in under half an hour)
   */
  readonly sweeperMaxMessagesPerSecond?: number;
  /**
   * Settings of the stream → relay mapping.
   * @default - OUTBOX_STREAM_DEFAULTS
   */
  readonly streamProps?: OutboxStreamProps;
  /**
   * What happens to the tables and log groups the outbox creates when they leave the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * A customer-managed KMS key for everything the outbox creates that holds messages: the outbox, inbox and
   * audit tables (and so the outbox stream), every topic queue, dead-letter queue and the failure queue, and a
   * new archive bucket. Each function is granted exactly the use of the key its calls need (`kms:Decrypt` and
   * `kms:DescribeKey` to read; `kms:Encrypt` and `kms:GenerateDataKey*` as well to write).
   * Tables and queues you pass in keep their own encryption. The alarm topic has its own key either way.
   * @default - AWS-owned keys for the tables, SSE-SQS for the queues, SSE-S3 for the archive
   */
  readonly encryptionKey?: kms.IKey;
}

/** Options of {@link TransactionalOutbox.bindWriter}. */
export interface OutboxWriterBindingOptions {
  /**
   * Whether the writer numbers ordered messages with the sequence table's counter (SEQUENCE_TABLE, GetItem and
   * UpdateItem on it). Only scopes with `sequence: 'counter'` use it; a writer that writes none of their topics
   * may say `false` and gets neither.
   * @default - true when a topic of the outbox is numbered by the counter; false otherwise
   */
  readonly sequenceCounter?: boolean;
}

/** Props of a consumer added with {@link TransactionalOutbox.addConsumer}. */
export interface OutboxConsumerProps {
  /** The name of the outbox queue the consumer reads (a key of `queues`); give this or `subscriber`. */
  readonly queue?: string;
  /**
   * The subscriber the consumer is (a key of `subscribers`): it reads that subscriber's queue, keys its inbox
   * per subscriber, and confirms by receipt — `sqs:SendMessage` on the outbox's receipt queue and nothing on the
   * outbox table; the sweeper resends an unconfirmed delivery instead of reading its inbox. Give this or `queue`.
   */
  readonly subscriber?: string;
  /** The handler module; it exports `handler = createConsumerHandler({ plan })`. */
  readonly entry: string;
  /**
   * Props merged over the consumer function's defaults (Node 24, ARM64, 30 s, 256 MB); add your own
   * environment (your business tables) here.
   * @default - the defaults
   */
  readonly functionProps?: Partial<nodejs.NodejsFunctionProps>;
  /**
   * An inbox table you created: keyed `messageId` (string), TTL on `expiresAt`.
   * @default - a new table, see `inboxTableProps`
   */
  readonly existingInboxTable?: dynamodb.ITable;
  /**
   * Props merged over the defaults of a new inbox table. The key cannot be changed.
   * @default - the defaults
   */
  readonly inboxTableProps?: Partial<dynamodb.TableProps>;
  /**
   * How long an inbox row (the proof that a message was applied) is kept; it must outlast every redelivery.
   * @default Duration.days(30)
   */
  readonly inboxRetention?: Duration;
  /**
   * Messages per invocation (1–10 without a batching window).
   * @default 10
   */
  readonly batchSize?: number;
  /**
   * @default Duration.seconds(1)
   */
  readonly maxBatchingWindow?: Duration;
  /**
   * Whether the consumer confirms each message after applying it.
   * @default true
   */
  readonly confirm?: boolean;
  /**
   * Whether the sweeper reads this consumer's inbox to settle SENT-but-unconfirmed messages of the queue's
   * topics (CONFIRMED when the row exists, resent otherwise).
   * @default true, or false for a subscriber's consumer (which refuses true)
   */
  readonly reconcile?: boolean;
}

/** A consumer the outbox wired up. */
export interface OutboxConsumer {
  /** The consumer function. */
  readonly function: OutboxFunction;
  /** Its inbox (the dedupe records that commit with the effect). */
  readonly inboxTable: dynamodb.ITable;
  /** The queue it reads, with its dead-letter queue. */
  readonly queue: QueueWithDlq;
}
