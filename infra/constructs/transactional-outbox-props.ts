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
  /**
   * The queue only drains what was written before its topics got subscribers: every topic of it must also be in
   * `subscribers`, new messages of them are stored as deliveries to the subscribers, and the messages written
   * before (one row each, no subscriber) still go to this queue and its consumer, which confirms them in the outbox
   * as before. Remove the queue (and its consumer) once `outbox stats` shows none of them left in flight.
   * @default false - the queue carries its topics, which then have no subscribers
   */
  readonly drainOnly?: boolean;
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
 * A subscriber of some of the outbox's topics: a service of its own, in its own stack and possibly its own account,
 * that receives each message of them on its own queue (created by its `OutboxSubscription`), applies it once in its
 * own inbox and confirms it by receipt. The outbox only needs to know where that queue is: its name is derived
 * from the outbox's name and the subscriber's (`<outbox name>-<subscriber>`), so neither stack references the other.
 */
export interface OutboxSubscriberProps {
  /**
   * The topics delivered to it (dotted lowercase). A message of a topic with subscribers is stored as one delivery
   * per subscriber, each with its own status, retries and confirmation; such a topic goes to no queue of `queues`.
   */
  readonly topics: readonly string[];
  /**
   * The account of the subscriber's stack.
   * @default - the outbox's account
   */
  readonly account?: string;
  /**
   * The region of the subscriber's stack.
   * @default - the outbox's region
   */
  readonly region?: string;
  /**
   * Whether the subscriber's queue is FIFO (its `OutboxSubscription` creates it so): each order key's messages in
   * one message group. The consumer keeps each order key's sequence either way.
   * @default false
   */
  readonly fifo?: boolean;
  /**
   * How failed sends to this subscriber are retried and how many reconciliation rounds its deliveries get,
   * over the topic's policy (`retryPolicies`): one subscriber's slow recovery need not change another's.
   * @default - the topic's policy
   */
  readonly retryPolicy?: RetryPolicy;
  /**
   * The ARN of the customer-managed KMS key the subscriber encrypts its queue with, when it does: the relay and the
   * sweeper get `kms:GenerateDataKey` and `kms:Decrypt` on it (the key's policy, in the subscriber's stack, allows
   * them: `OutboxSubscription` adds that statement to a key it is given).
   * @default - the subscriber's queue uses SSE-SQS: sending needs no key
   */
  readonly queueKeyArn?: string;
}

/** Props of a {@link TransactionalOutbox}. */
export interface TransactionalOutboxProps {
  /**
   * The outbox's name: the base of the names it shares with its subscribers (their queues
   * `<name>-<subscriber>`, its receipt queue `<name>-receipts`, the IAM paths of the roles on either side), which
   * both sides derive instead of referencing each other. 1–34 letters, digits, `-` or `_`, unique in its account:
   * the IAM paths of its roles are account-wide, so a stack deployed to two regions of one account gives each copy a
   * name of its own (the region in it, say). Changing it renames those queues: deploy the subscribers again after.
   * @default - `<stack name>-<construct path>` (e.g. `OutboxOrders-Outbox`), or a shortened unique form of it when
   * that is longer than 34 characters
   */
  readonly name?: string;
  /**
   * The topic queues, by name: each with the topics routed to it and its queue settings.
   * @default - none: every topic goes to subscribers
   */
  readonly queues?: Readonly<Record<string, OutboxQueueProps>>;
  /**
   * The subscribers the outbox delivers to, by name (lowercase letters, digits and -, e.g. `inventory`): each gets
   * one delivery of every message of its topics, sent to its queue `<name>-<subscriber>` (which its own stack
   * creates with an `OutboxSubscription` built from `subscriptionSpec(subscriber)`). The first subscriber adds
   * the receipt queue and the receipts function (`receipts`), and puts the relay's and the sweeper's roles under
   * the IAM path the subscribers' queue policies allow.
   * @example
   * subscribers: { inventory: { topics: ['order.created'] }, loyalty: { topics: ['order.created'], account: '222222222222' } }
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

/** What every consumer's function takes: its handler, its inbox and its batches. */
export interface OutboxConsumerFunctionProps {
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
}

/** Props of a consumer added with {@link TransactionalOutbox.addConsumer}. */
export interface OutboxConsumerProps extends OutboxConsumerFunctionProps {
  /**
   * The name of the outbox queue the consumer reads (a key of `queues`). A subscriber's consumer is not added
   * here but in the subscriber's own stack, with an `OutboxSubscription`.
   */
  readonly queue: string;
  /**
   * Whether the consumer confirms each message after applying it.
   * @default true
   */
  readonly confirm?: boolean;
  /**
   * Whether the sweeper reads this consumer's inbox to settle SENT-but-unconfirmed messages of the queue's
   * topics (CONFIRMED when the row exists, resent otherwise).
   * @default true
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
