import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Aws, type Duration, Lazy, type RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { AUDIT_KEYS } from '../../shared/aws/audit-table.ts';
import {
  DEFAULT_GAP_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  INBOX_KEYS,
  MAX_GAP_TIMEOUT_MS,
  type OrderedTopic,
  OUTBOX_KEYS,
  OutboxSettings,
  type RetryPolicy,
  redeliveryHorizonMs,
  SEQUENCE_KEYS,
  SequenceSource,
  type Setting,
  scopeSchema,
  topicSchema,
} from '../../shared/index.ts';
import {
  describeMixedSources,
  mixedSequenceSources,
  sequenceSourceOf,
} from '../../shared/ordering/ordering.ts';
import type { OutboxIndexProjection } from '../../shared/outbox/outbox-item.ts';
import {
  CONFIRMATION_ATTRIBUTES,
  CONFIRMATION_RETURN_VALUES,
} from '../../shared/outbox/transition-updates.ts';
import {
  CONSUMER_DEFAULTS,
  FAILURE_QUEUE_DEFAULTS,
  METRICS_DEFAULTS,
  OUTBOX_STREAM_DEFAULTS,
  QUEUE_DEFAULTS,
  RELAY_DEFAULTS,
  SCHEDULE_DEFAULTS,
  SWEEPER_DEFAULTS,
  TABLE_DEFAULTS,
} from './defaults.ts';
import { grantKeyUse } from './key-grants.ts';
import { acknowledgeOutboxNagFindings } from './nag-suppressions.ts';
import { addOutboxAdminApi, type OutboxAdminApi, type OutboxAdminApiProps } from './outbox-admin-api.ts';
import { addOutboxArchive, type OutboxArchiveProps } from './outbox-archive.ts';
import { OutboxClaimCheck, type OutboxClaimCheckProps } from './outbox-claim-check.ts';
import { kebabCase, OutboxFunction } from './outbox-function.ts';
import { type OutboxAlarmThresholds, OutboxMonitoring } from './outbox-monitoring.ts';
import { QueueWithDlq, type QueueWithDlqProps, queueEncryption } from './queue-with-dlq.ts';
import {
  grantLimitedUpdate,
  grantOnTable,
  grantQueryOnIndexes,
  grantSendMessage,
  queueEventSource,
  queueFailureDestination,
} from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** CloudWatch namespaces: letters, digits and `. - _ / # :`, at most 255, never `AWS/`. */
const METRICS_NAMESPACE = /^(?!AWS\/)[A-Za-z0-9.\-_/#:]{1,255}$/;

/** CloudWatch dashboard names: letters, digits, `-` and `_`, at most 255. */
const DASHBOARD_NAME = /^[A-Za-z0-9_-]{1,255}$/;

/** The shortest gap timeout: the one ORDERED_TOPICS accepts. */
const MIN_GAP_TIMEOUT_MS = 1_000;

/** Lambda takes at most 10 messages per batch from a FIFO queue, and no batching window. */
const MAX_FIFO_BATCH_SIZE = 10;

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

/** Props of a {@link TransactionalOutbox}. */
export interface TransactionalOutboxProps {
  /** The topic queues, by name: each with the topics routed to it and its queue settings. */
  readonly queues: Readonly<Record<string, OutboxQueueProps>>;
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
  /** The name of the outbox queue the consumer reads (a key of `queues`). */
  readonly queue: string;
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
   * Whether the consumer confirms each message in the producer's outbox after applying it.
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

/** The relay handler this package ships: TypeScript source here, compiled JavaScript in the published package. */
const SHIPPED_RELAY_ENTRY = shippedEntry('../../shared/lambda/entries/relay');

/** The sweeper handler this package ships. */
const SHIPPED_SWEEPER_ENTRY = shippedEntry('../../shared/lambda/entries/sweeper');

/** The archiver handler this package ships. */
const SHIPPED_ARCHIVER_ENTRY = shippedEntry('../../shared/lambda/entries/archiver');

/** The admin API handler this package ships. */
const SHIPPED_ADMIN_ENTRY = shippedEntry('../../shared/lambda/entries/admin');

/**
 * The outbox side of a service on AWS: the outbox table with its stream and indexes, one queue (with a
 * dead-letter queue) per group of topics, the stream relay, the scheduled sweeper, and — added with
 * {@link TransactionalOutbox.addConsumer} — consumers with their inboxes; for operators, the audit table,
 * alarms sent to one SNS topic, a CloudWatch dashboard and, with `archive`, an S3 archive of expired messages.
 * Every function is traced with X-Ray and publishes its metrics to `metricsNamespace`, gets its settings from
 * the library's settings contract, and every setting is checked at `cdk synth` with the rule the function
 * applies at start. Each resource an operator tool needs carries its role in the template metadata.
 * @example
 * const outbox = new TransactionalOutbox(this, 'Outbox', { queues: { orderEvents: { topics: ['order.created'] } } });
 * outbox.bindWriter(createOrder);
 * outbox.addConsumer('InventoryConsumer', { queue: 'orderEvents', entry: 'src/inventory/apply-order.ts' });
 */
export class TransactionalOutbox extends Construct {
  /** The outbox table. */
  public readonly table: dynamodb.ITable;
  /** ARN of the outbox table's stream. */
  public readonly streamArn: string;
  /** The topic queues by name, each with its dead-letter queue. */
  public readonly queues: Readonly<Record<string, QueueWithDlq>>;
  /** Topic → the queue its messages go to. */
  public readonly topicRoutes: ReadonlyMap<string, sqs.IQueue>;
  /** Receives the metadata of stream batches the relay gave up on (the sweeper delivers their messages). */
  public readonly failureQueue: sqs.Queue;
  /** The stream → SQS relay. */
  public readonly relay: OutboxFunction;
  /** The relay's stream mapping. */
  public readonly streamSource: sources.DynamoEventSource;
  /** The sweeper: due retries, lost stream records, expired claims, unconfirmed messages. */
  public readonly sweeper: OutboxFunction;
  /** The EventBridge rule that runs the sweeper. */
  public readonly sweeperSchedule: events.Rule;
  /** The audit trail of operator actions (replay, cancel, redrive, erase), keyed `subject`/`actionId`. */
  public readonly auditTable: dynamodb.Table;
  /** The topic every alarm of the outbox notifies. */
  public readonly alarmTopic: sns.ITopic;
  /**
   * The alarms by name: `deadLetters/<queue>`, `relayFailures`, `failedMessages/<topic>`,
   * `oldestPendingAge/<topic>`, `orderingGaps/<topic>` (ordered topics), `relayIteratorAge`, and
   * `errors/<function id>` and `throttles/<function id>` for the relay, the sweeper, the archiver and each consumer.
   */
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** The outbox's CloudWatch dashboard: alarms, queues, functions, and each topic's metrics. */
  public readonly dashboard: cloudwatch.Dashboard;
  /** The archive of expired messages, when `archive` is set. */
  public readonly archiveBucket: s3.IBucket | undefined;
  /** The archiver, when `archive` is set. */
  public readonly archiver: OutboxFunction | undefined;
  /** The customer-managed key of the outbox's tables, queues and archive, when `encryptionKey` is set. */
  public readonly encryptionKey: kms.IKey | undefined;
  /** The claim check of large payloads (its bucket, threshold and expiry), unless `claimCheck` is false. */
  public readonly claimCheck: OutboxClaimCheck | undefined;
  /** The ordered topics with their scope and gap timeout in ms (as ORDERED_TOPICS holds them); `{}` when none. */
  public readonly orderedTopics: Readonly<Record<string, OrderedTopic>>;

  readonly #props: TransactionalOutboxProps;
  readonly #removalPolicy: RemovalPolicy | undefined;
  /** Topic → the inbox table name the sweeper checks (filled by `addConsumer`). */
  readonly #deliveryInboxes = new Map<string, string>();
  readonly #consumersByQueue = new Map<string, OutboxConsumer>();
  readonly #problems: string[] = [];
  readonly #monitoring: OutboxMonitoring;
  #adminApi: OutboxAdminApi | undefined;
  #sequenceTable: dynamodb.Table | undefined;

  constructor(scope: Construct, id: string, props: TransactionalOutboxProps) {
    super(scope, id);
    this.#props = props;
    this.#removalPolicy = props.removalPolicy;
    this.encryptionKey = props.encryptionKey;
    this.node.addValidation({ validate: () => [...new Set(this.#problems)] });

    this.table = props.existingOutboxTable ?? this.#newOutboxTable(props.outboxTableProps ?? {});
    if (props.existingOutboxTable !== undefined && props.outboxTableProps !== undefined) {
      this.#problem('give either existingOutboxTable or outboxTableProps, not both');
    }
    if (this.table.tableStreamArn === undefined) {
      throw new Error(`TransactionalOutbox ${this.node.path}: the outbox table has no stream`);
    }
    this.streamArn = this.table.tableStreamArn;

    const queues: Record<string, QueueWithDlq> = {};
    const routes = new Map<string, sqs.IQueue>();
    for (const [name, queueProps] of Object.entries(props.queues)) {
      const { topics, ...settings } = queueProps;
      const queue = new QueueWithDlq(this, `${name}Queue`, {
        encryptionKey: props.encryptionKey,
        ...settings,
      });
      markOutboxRole(queue.queue, OutboxResourceRole.TOPIC_QUEUE, { topics });
      markOutboxRole(queue.deadLetterQueue, OutboxResourceRole.DEAD_LETTER_QUEUE, { source: queue.queue });
      queues[name] = queue;
      for (const topic of topics) {
        if (!topicSchema.safeParse(topic).success) {
          this.#problem(`queue '${name}': topic '${topic}' is not dotted lowercase (e.g. order.created)`);
        }
        if (routes.has(topic)) this.#problem(`topic '${topic}' is routed to more than one queue`);
        routes.set(topic, queue.queue);
      }
    }
    if (routes.size === 0) this.#problem('no topic is routed to a queue');
    this.queues = queues;
    this.topicRoutes = routes;
    for (const topic of Object.keys(props.retryPolicies ?? {})) {
      if (!routes.has(topic)) this.#problem(`retryPolicies names topic '${topic}', which no queue carries`);
    }
    this.orderedTopics = this.#checkedOrdering(props);
    const ordered = Object.keys(this.orderedTopics).length > 0;

    this.failureQueue = new sqs.Queue(this, 'RelayFailureQueue', {
      ...queueEncryption(props.encryptionKey),
      enforceSSL: QUEUE_DEFAULTS.enforceSSL,
      retentionPeriod: FAILURE_QUEUE_DEFAULTS.retentionPeriod,
    });
    markOutboxRole(this.failureQueue, OutboxResourceRole.FAILURE_QUEUE);
    if (!METRICS_NAMESPACE.test(this.metricsNamespace)) {
      this.#problem(
        `metricsNamespace must be 1–255 letters, digits or . - _ / # : and not start with AWS/, got ` +
          `'${this.metricsNamespace}'`,
      );
    }

    const routeUrls = Object.fromEntries([...routes].map(([topic, queue]) => [topic, queue.queueUrl]));
    // What the relay and the sweeper share: both send, mark SENT and schedule retries.
    const sendSettings = {
      [OutboxSettings.outboxTable.name]: this.table.tableName,
      [OutboxSettings.topicQueues.name]: Stack.of(this).toJsonString(routeUrls),
      [OutboxSettings.retryPolicies.name]: this.#setting(
        OutboxSettings.retryPolicies,
        props.retryPolicies ?? {},
        'retryPolicies',
      ),
      [OutboxSettings.confirmDeadlineMs.name]: this.#setting(
        OutboxSettings.confirmDeadlineMs,
        this.#milliseconds(props.confirmDeadline, OutboxSettings.confirmDeadlineMs),
        'confirmDeadline',
      ),
      [OutboxSettings.retentionDays.name]: this.#setting(
        OutboxSettings.retentionDays,
        this.#retentionDays(),
        'retention',
      ),
      // A message that becomes FAILED is filed in the attention index under its due shard.
      [OutboxSettings.dueShards.name]: this.#setting(OutboxSettings.dueShards, this.dueShards, 'dueShards'),
      // Both send an order key's messages in seq order; the sweeper also holds one whose predecessor is not out.
      ...this.#orderingSettings(),
    };

    this.relay = new OutboxFunction(this, 'Relay', {
      timeout: RELAY_DEFAULTS.timeout,
      memorySize: RELAY_DEFAULTS.memorySize,
      logGroupRemovalPolicy: this.#removalPolicy,
      description: 'Outbox stream → SQS: forwards new messages, marks them SENT or records the failure',
      ...props.relayFunctionProps,
      entry: SHIPPED_RELAY_ENTRY,
      handler: 'handler',
      serviceName: 'outbox-relay',
      metricsNamespace: this.metricsNamespace,
      environment: { ...props.relayFunctionProps?.environment, ...sendSettings },
    });
    markOutboxRole(this.relay, OutboxResourceRole.RELAY);
    // Marks messages SENT or records a failed attempt: UpdateItem on the table, nothing else.
    grantOnTable(this.table, this.relay, ['dynamodb:UpdateItem']);
    for (const queue of routes.values()) grantSendMessage(queue, this.relay);

    const stream = { ...OUTBOX_STREAM_DEFAULTS, ...props.streamProps };
    this.streamSource = new sources.DynamoEventSource(this.table, {
      // From the oldest record: messages written before the mapping existed are forwarded too.
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: stream.batchSize,
      maxBatchingWindow: stream.maxBatchingWindow,
      retryAttempts: stream.retryAttempts,
      maxRecordAge: stream.maxRecordAge,
      bisectBatchOnError: stream.bisectBatchOnError,
      parallelizationFactor: stream.parallelizationFactor,
      filters: OUTBOX_STREAM_DEFAULTS.filters.map((pattern) => lambda.FilterCriteria.filter(pattern)),
      // One failed record fails alone; the relay reports it instead of failing the batch.
      reportBatchItemFailures: true,
      // Lambda sends the metadata of a batch it gives up on with the relay's role: SendMessage only.
      onFailure: queueFailureDestination(this.failureQueue),
    });
    this.relay.addEventSource(this.streamSource);
    // Reads the stream, updates items and sends (the failure queue too, from the mapping).
    grantKeyUse(this.encryptionKey, this.relay, 'write');

    this.sweeper = new OutboxFunction(this, 'Sweeper', {
      timeout: SWEEPER_DEFAULTS.timeout,
      memorySize: SWEEPER_DEFAULTS.memorySize,
      logGroupRemovalPolicy: this.#removalPolicy,
      description:
        'Sends due retries and lost stream records, recovers expired claims, reconciles unconfirmed messages',
      ...props.sweeperFunctionProps,
      entry: SHIPPED_SWEEPER_ENTRY,
      handler: 'handler',
      serviceName: 'outbox-sweeper',
      metricsNamespace: this.metricsNamespace,
      environment: {
        ...props.sweeperFunctionProps?.environment,
        ...sendSettings,
        [OutboxSettings.sweeperMaxMessagesPerSecond.name]: this.#setting(
          OutboxSettings.sweeperMaxMessagesPerSecond,
          props.sweeperMaxMessagesPerSecond ?? OutboxSettings.sweeperMaxMessagesPerSecond.defaultValue ?? 1,
          'sweeperMaxMessagesPerSecond',
        ),
        // Consumers added later register their inboxes, so this is resolved at synth.
        [OutboxSettings.deliveryInboxes.name]: Lazy.string({
          produce: () => Stack.of(this).toJsonString(Object.fromEntries(this.#deliveryInboxes)),
        }),
      },
    });
    markOutboxRole(this.sweeper, OutboxResourceRole.SWEEPER);
    const sweeperTimeout = props.sweeperFunctionProps?.timeout ?? SWEEPER_DEFAULTS.timeout;
    if (sweeperTimeout.toSeconds() < SWEEPER_DEFAULTS.minimumTimeout.toSeconds()) {
      this.#problem(
        `the sweeper's timeout must be at least ${SWEEPER_DEFAULTS.minimumTimeout.toSeconds()} s ` +
          `(a run stops 5 s before it), got ${sweeperTimeout.toSeconds()} s`,
      );
    }
    // Reads the due index and claims, marks, requeues and releases with conditional updates; counts FAILED
    // messages in the attention index for its gauge. No Scan, PutItem or DeleteItem on the outbox, and GetItem
    // only with ordering: it looks up an ordered message's predecessors in the keys-only byOrderKey index and
    // reads each one's status.
    grantQueryOnIndexes(this.table, this.sweeper, [
      OUTBOX_KEYS.dueIndex.name,
      OUTBOX_KEYS.attentionIndex.name,
      ...(ordered ? [OUTBOX_KEYS.orderIndex.name] : []),
    ]);
    grantOnTable(this.table, this.sweeper, ['dynamodb:UpdateItem', ...(ordered ? ['dynamodb:GetItem'] : [])]);
    for (const queue of routes.values()) grantSendMessage(queue, this.sweeper);
    grantKeyUse(this.encryptionKey, this.sweeper, 'write');
    this.sweeperSchedule = new events.Rule(this, 'SweeperSchedule', {
      description: 'Runs the outbox sweeper',
      schedule: props.sweeperSchedule ?? events.Schedule.rate(SWEEPER_DEFAULTS.scheduleRate),
      targets: [new targets.LambdaFunction(this.sweeper, SCHEDULE_DEFAULTS)],
    });

    // No function is granted the audit table here: only the admin API writes it.
    this.auditTable = this.#newAuditTable(props.auditTableProps ?? {});

    this.#monitoring = this.#newMonitoring(props);
    this.alarmTopic = this.#monitoring.alarmTopic;
    this.alarms = this.#monitoring.alarms;
    this.dashboard = this.#monitoring.dashboard;

    const archive =
      props.archive === undefined || props.archive === false
        ? undefined
        : addOutboxArchive(this, {
            ...(props.archive === true ? {} : props.archive),
            table: this.table,
            entry: SHIPPED_ARCHIVER_ENTRY,
            metricsNamespace: this.metricsNamespace,
            removalPolicy: this.#removalPolicy,
            ...(props.encryptionKey === undefined ? {} : { encryptionKey: props.encryptionKey }),
          });
    // Reads the stream and writes objects (into a new bucket encrypted with the key).
    // The archiver only reads the stream (its records are decrypted with the caller's right); its puts are
    // granted with the bucket.
    if (archive !== undefined) this.encryptionKey?.grant(archive.archiver, 'kms:Decrypt');
    this.archiveBucket = archive?.bucket;
    this.claimCheck =
      props.claimCheck === false
        ? undefined
        : new OutboxClaimCheck(this, 'ClaimCheck', {
            ...props,
            ...props.claimCheck,
            queues: this.queues,
            topicRoutes: routes,
          });
    this.archiver = archive?.archiver;
    if (archive !== undefined) this.#monitoring.watchFunction(archive.archiver);
    // cdk-nag findings that are the outbox's design, with their reasons (see nag-suppressions.ts).
    acknowledgeOutboxNagFindings(this);
  }

  /** The CloudWatch namespace of the metrics every function of the outbox publishes. */
  get metricsNamespace(): string {
    return this.#props.metricsNamespace ?? METRICS_DEFAULTS.namespace;
  }

  /** The number of due-index partitions writers and the sweeper use. */
  get dueShards(): number {
    return this.#props.dueShards ?? OutboxSettings.dueShards.defaultValue ?? 1;
  }

  /**
   * The writers' counter of each order key's last seq (`orderKey` → `lastSeq`): created when a topic is ordered
   * and a writer is bound that numbers messages with it (see `bindWriter`). A table of its own, so counter
   * updates never reach the outbox stream.
   */
  get sequenceTable(): dynamodb.ITable | undefined {
    return this.#sequenceTable;
  }

  /** The admin API, once {@link TransactionalOutbox.addAdminApi} added it. */
  get adminApi(): OutboxAdminApi | undefined {
    return this.#adminApi;
  }

  /**
   * Adds the admin API to `api`: GET and POST on `/admin/{proxy+}`, AWS_IAM-authorised (never open), served by
   * the shipped admin function with the admin's settings (`ADMIN_SETTINGS`) and the grants it needs — list and
   * show messages, replay, cancel, bulk replay, DLQ redrive, stats and erase, every action audited under the
   * IAM caller's ARN — with its errors and throttles alarms. Add the consumers first: an erase clears their
   * inboxes.
   * @example
   * const api = new apigateway.RestApi(this, 'Api', { deployOptions: { tracingEnabled: true } });
   * outbox.addAdminApi(api);
   */
  addAdminApi(api: apigateway.IRestApi, props: OutboxAdminApiProps = {}): OutboxAdminApi {
    if (this.#adminApi !== undefined) {
      throw new Error(`TransactionalOutbox ${this.node.path}: addAdminApi was already called`);
    }
    const consumers = [...this.#consumersByQueue.values()];
    const inboxes = Object.fromEntries(
      consumers.flatMap((consumer) =>
        [...this.topicRoutes]
          .filter(([, routed]) => routed === consumer.queue.queue)
          .map(([topic]) => [topic, consumer.inboxTable.tableName]),
      ),
    );
    const topicUrls = (pick: (queue: QueueWithDlq) => sqs.IQueue) =>
      Stack.of(this).toJsonString(
        Object.fromEntries(
          Object.values(this.queues).flatMap((queue) =>
            [...this.topicRoutes]
              .filter(([, routed]) => routed === queue.queue)
              .map(([topic]) => [topic, pick(queue).queueUrl]),
          ),
        ),
      );
    const adminApi = addOutboxAdminApi(this, {
      ...props,
      api,
      entry: SHIPPED_ADMIN_ENTRY,
      outboxTable: this.table,
      auditTable: this.auditTable,
      queues: Object.values(this.queues),
      // A skip of an ordering gap moves the order key's cursor in the inboxes of the ordered topics' consumers.
      orderedInboxTables: consumers
        .filter((consumer) =>
          [...this.topicRoutes].some(
            ([topic, routed]) => routed === consumer.queue.queue && this.orderedTopics[topic] !== undefined,
          ),
        )
        .map((consumer) => consumer.inboxTable),
      // Each name once, from the settings contract: the variables `adminDeps` reads (ADMIN_SETTINGS).
      environment: {
        [OutboxSettings.outboxTable.name]: this.table.tableName,
        [OutboxSettings.auditTable.name]: this.auditTable.tableName,
        [OutboxSettings.topicQueues.name]: topicUrls((queue) => queue.queue),
        [OutboxSettings.deadLetterQueues.name]: topicUrls((queue) => queue.deadLetterQueue),
        [OutboxSettings.deliveryInboxes.name]: Stack.of(this).toJsonString(inboxes),
        [OutboxSettings.dueShards.name]: this.#setting(OutboxSettings.dueShards, this.dueShards, 'dueShards'),
        [OutboxSettings.retentionDays.name]: this.#setting(
          OutboxSettings.retentionDays,
          this.#retentionDays(),
          'retention',
        ),
        // To skip a gap: the scope of an order key's topics.
        ...this.#orderingSettings(),
      },
      metricsNamespace: this.metricsNamespace,
      ...(this.#removalPolicy === undefined ? {} : { removalPolicy: this.#removalPolicy }),
    });
    this.#monitoring.watchFunction(adminApi.function);
    // An erase deletes the aggregate's claim-checked payloads with its messages.
    this.claimCheck?.bindEraser(adminApi.function);
    grantKeyUse(this.encryptionKey, adminApi.function, 'write');
    // The admin's inboxes and grants are those of the consumers added so far.
    this.node.addValidation({
      validate: () =>
        this.#consumersByQueue.size === consumers.length
          ? []
          : [
              'TransactionalOutbox: addAdminApi was called before addConsumer; add every consumer first, so ' +
                "that an erase clears each consumer's inbox",
            ],
    });
    this.#adminApi = adminApi;
    return adminApi;
  }

  /**
   * Lets `fn` write messages with `writeWithOutbox`: sets the writer's settings (OUTBOX_TABLE, DUE_SHARDS,
   * STREAM_GRACE_MS, read with `outboxWriterFromEnv`) and allows PutItem on the outbox table — nothing else but,
   * with the claim check, its settings and s3:PutObject under the bucket's `claim-check/` prefix, and with ordered
   * topics, ORDERED_TOPICS, SEQUENCE_TABLE and GetItem and UpdateItem on the sequence table (a writer reads an
   * order key's counter and advances it in the message's transaction) unless `options.sequenceCounter` is false.
   * @example
   * outbox.bindWriter(createOrder);
   * // Writes ordered messages only with `aggregateVersions`, so never reads or advances a counter:
   * outbox.bindWriter(cancelOrder, { sequenceCounter: false });
   */
  bindWriter(fn: lambda.Function, options: OutboxWriterBindingOptions = {}): void {
    fn.addEnvironment(OutboxSettings.outboxTable.name, this.table.tableName);
    fn.addEnvironment(
      OutboxSettings.dueShards.name,
      this.#setting(OutboxSettings.dueShards, this.dueShards, 'dueShards'),
    );
    fn.addEnvironment(
      OutboxSettings.streamGraceMs.name,
      this.#setting(
        OutboxSettings.streamGraceMs,
        this.#milliseconds(this.#props.streamGracePeriod, OutboxSettings.streamGraceMs),
        'streamGracePeriod',
      ),
    );
    grantOnTable(this.table, fn, ['dynamodb:PutItem']);
    for (const [name, value] of Object.entries(this.#orderingSettings())) fn.addEnvironment(name, value);
    const counted = Object.values(this.orderedTopics).some(
      (topic) => sequenceSourceOf(topic) === SequenceSource.COUNTER,
    );
    if (counted && options.sequenceCounter !== false) {
      this.#sequenceTable ??= this.#newSequenceTable();
      fn.addEnvironment(OutboxSettings.sequenceTable.name, this.#sequenceTable.tableName);
      grantOnTable(this.#sequenceTable, fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    }
    this.claimCheck?.bindWriter(fn);
    grantKeyUse(this.encryptionKey, fn, 'write');
  }

  /**
   * Lets `fn` list an aggregate's messages (`readAggregateMessages`), e.g. to show an order's delivery status: sets
   * OUTBOX_TABLE and allows Query on the `byAggregate` index, which holds keys only, and GetItem on the table to read
   * each message.
   */
  bindReader(fn: lambda.Function): void {
    fn.addEnvironment(OutboxSettings.outboxTable.name, this.table.tableName);
    grantQueryOnIndexes(this.table, fn, [OUTBOX_KEYS.aggregateIndex.name]);
    grantOnTable(this.table, fn, ['dynamodb:GetItem']);
    grantKeyUse(this.encryptionKey, fn, 'read');
  }

  /**
   * Adds a consumer of one of the outbox's queues: the function (built from `entry`, a module exporting
   * `createConsumerHandler(...)`), its inbox table, the SQS mapping with partial batch responses, its settings
   * and grants, and — unless `reconcile` is false — its inbox as the sweeper's proof of delivery for the
   * queue's topics. Grant the function your own tables yourself.
   * @example
   * const consumer = outbox.addConsumer('InventoryConsumer', {
   *   queue: 'orderEvents',
   *   entry: 'functions/inventory/apply-order/handler.ts',
   *   functionProps: { environment: { INVENTORY_TABLE: inventory.tableName } },
   * });
   * inventory.grant(consumer.function, 'dynamodb:UpdateItem');
   */
  addConsumer(id: string, props: OutboxConsumerProps): OutboxConsumer {
    const queue = this.queues[props.queue];
    if (queue === undefined) {
      throw new Error(
        `TransactionalOutbox ${this.node.path}: addConsumer('${id}') names queue '${props.queue}'; ` +
          `the outbox has ${Object.keys(this.queues).join(', ')}`,
      );
    }
    if (this.#consumersByQueue.has(props.queue)) {
      this.#problem(`queue '${props.queue}' has more than one consumer (${id}); a queue has one consumer`);
    }
    if (props.existingInboxTable !== undefined && props.inboxTableProps !== undefined) {
      this.#problem(`consumer ${id}: give either existingInboxTable or inboxTableProps, not both`);
    }
    const inboxTable =
      props.existingInboxTable ?? this.#newInboxTable(`${id}Inbox`, props.inboxTableProps ?? {});
    const settings = queue.settings;
    const inboxRetentionDays = this.#days(props.inboxRetention, OutboxSettings.inboxRetentionDays);
    const timeout = props.functionProps?.timeout ?? CONSUMER_DEFAULTS.timeout;
    const fn = new OutboxFunction(this, id, {
      timeout: CONSUMER_DEFAULTS.timeout,
      memorySize: CONSUMER_DEFAULTS.memorySize,
      logGroupRemovalPolicy: this.#removalPolicy,
      ...props.functionProps,
      entry: props.entry,
      metricsNamespace: this.metricsNamespace,
      environment: {
        ...props.functionProps?.environment,
        [OutboxSettings.inboxTable.name]: inboxTable.tableName,
        [OutboxSettings.inboxRetentionDays.name]: this.#setting(
          OutboxSettings.inboxRetentionDays,
          inboxRetentionDays,
          `${id}.inboxRetention`,
        ),
        [OutboxSettings.sourceQueueUrl.name]: queue.queue.queueUrl,
        [OutboxSettings.deadLetterQueueUrl.name]: queue.deadLetterQueue.queueUrl,
        [OutboxSettings.maxReceiveCount.name]: this.#setting(
          OutboxSettings.maxReceiveCount,
          settings.maxReceiveCount,
          `queues.${props.queue}.maxReceiveCount`,
        ),
        ...this.#orderingSettings(),
        ...(props.confirm === false
          ? {}
          : {
              [OutboxSettings.outboxTable.name]: this.table.tableName,
              [OutboxSettings.retentionDays.name]: this.#setting(
                OutboxSettings.retentionDays,
                this.#retentionDays(),
                'retention',
              ),
            }),
      },
    });
    const topics = [...this.topicRoutes]
      .filter(([, routed]) => routed === queue.queue)
      .map(([topic]) => topic);
    markOutboxRole(fn, OutboxResourceRole.CONSUMER);
    if (props.existingInboxTable === undefined) {
      markOutboxRole(inboxTable, OutboxResourceRole.INBOX_TABLE, { topics });
    }
    this.#monitoring.watchConsumer(fn, { service: fn.serviceName, topics });
    if (timeout.toSeconds() > settings.visibilityTimeout.toSeconds()) {
      this.#problem(
        `queue '${props.queue}': its visibility timeout (${settings.visibilityTimeout.toSeconds()} s) must be at ` +
          `least consumer ${id}'s timeout (${timeout.toSeconds()} s); AWS advises 6 times it`,
      );
    }
    this.#checkInboxRetention(id, props.queue, inboxRetentionDays);
    const batchSize = props.batchSize ?? CONSUMER_DEFAULTS.batchSize;
    if (settings.fifo) this.#checkFifoMapping(id, { ...props, batchSize });

    fn.addEventSource(
      queueEventSource(queue.queue, {
        batchSize,
        // Lambda refuses a batching window on a FIFO queue.
        ...(settings.fifo
          ? {}
          : { maxBatchingWindow: props.maxBatchingWindow ?? CONSUMER_DEFAULTS.maxBatchingWindow }),
      }),
    );
    const ordered = topics.some((topic) => this.orderedTopics[topic] !== undefined);
    // The inbox put commits with the effect in one transaction: PutItem on the inbox, nothing else there —
    // unless the queue carries ordered topics: then the same transaction advances the order key's cursor row
    // (UpdateItem) or parks an early message (PutItem, ConditionCheckItem on the cursor), and the consumer reads
    // the parked successor (GetItem) and removes it once applied (DeleteItem).
    grantOnTable(inboxTable, fn, [
      'dynamodb:PutItem',
      ...(ordered
        ? ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem']
        : []),
    ]);
    // A message that can never be processed is dead-lettered by the consumer itself, with its reason.
    grantSendMessage(queue.deadLetterQueue, fn);
    this.claimCheck?.bindConsumer(fn);
    // Confirming touches only the confirmation's attributes and asks nothing back.
    if (props.confirm !== false) {
      grantLimitedUpdate(this.table, fn, {
        attributes: CONFIRMATION_ATTRIBUTES,
        returnValues: [CONFIRMATION_RETURN_VALUES],
      });
    }
    if (props.reconcile !== false) {
      for (const topic of topics) this.#deliveryInboxes.set(topic, inboxTable.tableName);
      // Reconciliation only asks whether the inbox has the message.
      grantOnTable(inboxTable, this.sweeper, ['dynamodb:GetItem']);
    }
    // Receives, writes its inbox and confirms in the outbox, and dead-letters itself.
    grantKeyUse(this.encryptionKey, fn, 'write');
    const consumer = { function: fn, inboxTable, queue };
    this.#consumersByQueue.set(props.queue, consumer);
    return consumer;
  }

  #newOutboxTable(overrides: Partial<dynamodb.TableProps>): dynamodb.Table {
    if (
      overrides.partitionKey !== undefined ||
      overrides.sortKey !== undefined ||
      overrides.stream !== undefined
    ) {
      this.#problem('outboxTableProps may not change the key or the stream of the outbox table');
    }
    const table = new dynamodb.Table(this, 'Table', {
      billingMode: TABLE_DEFAULTS.billingMode,
      ...this.#tableEncryption(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
      removalPolicy: this.#removalPolicy ?? TABLE_DEFAULTS.removalPolicy,
      timeToLiveAttribute: OUTBOX_KEYS.ttlAttribute,
      ...overrides,
      partitionKey: { name: OUTBOX_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
      // The relay filters on INSERT; the old image lets an operator's tooling see what a transition changed.
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    });
    for (const index of [OUTBOX_KEYS.dueIndex, OUTBOX_KEYS.aggregateIndex, OUTBOX_KEYS.attentionIndex]) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        // As the library's readers expect it (each index's projection is defined beside its keys).
        ...indexProjection(index.projection),
      });
    }
    // Sparse: only ordered messages carry orderKey and seq. Created whether or not a topic is ordered, so that
    // ordering a topic later changes no index of a table that already holds messages. seq is a number, so an
    // order key's messages sort (and range-query) by it.
    const orderIndex = OUTBOX_KEYS.orderIndex;
    table.addGlobalSecondaryIndex({
      indexName: orderIndex.name,
      partitionKey: { name: orderIndex.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: orderIndex.sortKey, type: dynamodb.AttributeType.NUMBER },
      ...indexProjection(orderIndex.projection),
    });
    markOutboxRole(table, OutboxResourceRole.OUTBOX_TABLE);
    return table;
  }

  /**
   * The ordered topics of `props.ordering`, each checked: routed to a queue, a valid scope, a gap timeout of
   * 1 s – 12 h, and the topics of one scope on one queue (they share one sequence per aggregate, which a
   * consumer can only follow when it receives all of them). A bad entry is reported and left out.
   */
  #checkedOrdering(props: TransactionalOutboxProps): Record<string, OrderedTopic> {
    const queueOfTopic = new Map(
      Object.entries(props.queues).flatMap(([name, queue]) =>
        queue.topics.map((topic) => [topic, name] as const),
      ),
    );
    const ordered: Record<string, OrderedTopic> = {};
    const topicsOfScope = new Map<string, string[]>();
    for (const [topic, ordering] of Object.entries(props.ordering ?? {})) {
      if (!queueOfTopic.has(topic)) {
        this.#problem(`ordering names topic '${topic}', which no queue carries; route it to a queue first`);
        continue;
      }
      if (ordering === 'none') continue;
      if (!scopeSchema.safeParse(ordering.scope).success) {
        this.#problem(
          `ordering['${topic}'].scope must be 1–32 lowercase letters, digits or - (starting with a letter or ` +
            `digit), got '${ordering.scope}'`,
        );
        continue;
      }
      const gapTimeoutMs = this.#gapTimeoutMs(topic, ordering.gapTimeout);
      if (gapTimeoutMs === undefined) continue;
      const sequence = ordering.sequence ?? SequenceSource.COUNTER;
      if (!(Object.values(SequenceSource) as string[]).includes(sequence)) {
        this.#problem(
          `ordering['${topic}'].sequence must be '${SequenceSource.COUNTER}' or '${SequenceSource.AGGREGATE_VERSION}', got '${sequence}'`,
        );
        continue;
      }
      ordered[topic] = { scope: ordering.scope, gapTimeoutMs, sequence };
      topicsOfScope.set(ordering.scope, [...(topicsOfScope.get(ordering.scope) ?? []), topic]);
    }
    for (const mixed of mixedSequenceSources(ordered)) this.#problem(describeMixedSources(mixed));
    for (const [scope, topics] of topicsOfScope) {
      const queues = new Set(topics.map((topic) => queueOfTopic.get(topic)));
      if (queues.size > 1) {
        this.#problem(
          `ordering scope '${scope}': its topics go to different queues (` +
            `${topics.map((topic) => `${topic} → ${queueOfTopic.get(topic)}`).join(', ')}); the topics of one ` +
            "scope share each aggregate's sequence, so route them to one queue",
        );
      }
    }
    return ordered;
  }

  /** A topic's gap timeout in ms, or `undefined` (reported) when it is not a whole ms from 1 s to 12 h. */
  #gapTimeoutMs(topic: string, gapTimeout: Duration | undefined): number | undefined {
    if (gapTimeout === undefined) return DEFAULT_GAP_TIMEOUT_MS;
    const prop = `ordering['${topic}'].gapTimeout`;
    if (gapTimeout.isUnresolved()) {
      this.#problem(`${prop} must be known at synth`);
      return undefined;
    }
    const ms = gapTimeout.toMilliseconds({ integral: false });
    if (!Number.isInteger(ms) || ms < MIN_GAP_TIMEOUT_MS || ms > MAX_GAP_TIMEOUT_MS) {
      this.#problem(
        `${prop} must be a whole number of ms from 1 s to 12 h, got ${gapTimeout.toHumanString()}`,
      );
      return undefined;
    }
    return ms;
  }

  /** ORDERED_TOPICS for every function of an outbox with ordered topics; nothing otherwise. */
  #orderingSettings(): Record<string, string> {
    if (Object.keys(this.orderedTopics).length === 0) return {};
    return {
      [OutboxSettings.orderedTopics.name]: this.#setting(
        OutboxSettings.orderedTopics,
        this.orderedTopics,
        'ordering',
      ),
    };
  }

  /** Lambda reads a FIFO queue in batches of at most 10 and without a batching window. */
  #checkFifoMapping(id: string, props: OutboxConsumerProps & { readonly batchSize: number }): void {
    if (props.batchSize > MAX_FIFO_BATCH_SIZE) {
      this.#problem(
        `consumer ${id}: queue '${props.queue}' is FIFO, so batchSize must be at most ${MAX_FIFO_BATCH_SIZE}, ` +
          `got ${props.batchSize}`,
      );
    }
    if (props.maxBatchingWindow !== undefined) {
      this.#problem(
        `consumer ${id}: queue '${props.queue}' is FIFO, and Lambda takes no maxBatchingWindow from a FIFO queue`,
      );
    }
  }

  /**
   * The sequence table: each order key's last seq, which a writer without an aggregate version reads and
   * advances in its transaction. No stream (counter updates are no messages) and no TTL (a counter that
   * vanished would restart an order key at 1).
   */
  #newSequenceTable(): dynamodb.Table {
    return new dynamodb.Table(this, 'SequenceTable', {
      billingMode: TABLE_DEFAULTS.billingMode,
      ...this.#tableEncryption(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
      removalPolicy: this.#removalPolicy ?? TABLE_DEFAULTS.removalPolicy,
      partitionKey: { name: SEQUENCE_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
    });
  }

  #newAuditTable(overrides: Partial<dynamodb.TableProps>): dynamodb.Table {
    if (overrides.partitionKey !== undefined || overrides.sortKey !== undefined) {
      this.#problem('auditTableProps may not change the key of the audit table');
    }
    const table = new dynamodb.Table(this, 'AuditTable', {
      billingMode: TABLE_DEFAULTS.billingMode,
      ...this.#tableEncryption(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
      removalPolicy: this.#removalPolicy ?? TABLE_DEFAULTS.removalPolicy,
      ...overrides,
      partitionKey: { name: AUDIT_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: AUDIT_KEYS.sortKey, type: dynamodb.AttributeType.STRING },
    });
    markOutboxRole(table, OutboxResourceRole.AUDIT_TABLE);
    return table;
  }

  /** The alarms and the dashboard of what the constructor built; consumers add theirs in `addConsumer`. */
  #newMonitoring(props: TransactionalOutboxProps): OutboxMonitoring {
    const scopes = this.node.scopes;
    const path = scopes.slice(scopes.indexOf(Stack.of(this)) + 1).map((scope) => scope.node.id);
    // Named after the deployed stack (not the stack construct), so two deployments of one template never
    // share a dashboard or an alarm.
    const dashboardName =
      props.dashboardName ?? `${Aws.STACK_NAME}-${kebabCase(path.join('-')).replace(/[^a-z0-9_-]/g, '-')}`;
    if (!Token.isUnresolved(dashboardName) && !DASHBOARD_NAME.test(dashboardName)) {
      this.#problem(`dashboardName must be 1–255 letters, digits, - or _, got '${dashboardName}'`);
    }
    const monitoring = new OutboxMonitoring(this, 'Monitoring', {
      namespace: this.metricsNamespace,
      ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
      ...(props.alarmThresholds === undefined ? {} : { thresholds: props.alarmThresholds }),
      dashboardName,
      alarmNamePrefix: [Aws.STACK_NAME, ...path].join('-'),
      ...(this.#removalPolicy === undefined ? {} : { removalPolicy: this.#removalPolicy }),
    });
    for (const [name, queue] of Object.entries(this.queues)) {
      monitoring.watchDeadLetters(name, queue.deadLetterQueue);
    }
    monitoring.watchFailureQueue(this.failureQueue);
    monitoring.watchRelay(this.relay);
    monitoring.watchFunction(this.sweeper);
    for (const topic of this.topicRoutes.keys()) {
      const publishers = { relay: this.relay.serviceName, sweeper: this.sweeper.serviceName };
      monitoring.watchTopic(topic, publishers);
      const ordering = this.orderedTopics[topic];
      if (ordering !== undefined) monitoring.watchOrderingGaps(topic, { ...publishers, ...ordering });
    }
    return monitoring;
  }

  #newInboxTable(id: string, overrides: Partial<dynamodb.TableProps>): dynamodb.Table {
    if (overrides.partitionKey !== undefined || overrides.sortKey !== undefined) {
      this.#problem(`${id}: inboxTableProps may not change the key of the inbox table`);
    }
    return new dynamodb.Table(this, id, {
      billingMode: TABLE_DEFAULTS.billingMode,
      ...this.#tableEncryption(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
      removalPolicy: this.#removalPolicy ?? TABLE_DEFAULTS.removalPolicy,
      timeToLiveAttribute: INBOX_KEYS.ttlAttribute,
      ...overrides,
      partitionKey: { name: INBOX_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
    });
  }

  /**
   * An inbox row must outlive every copy of a message that can still arrive, or the late copy applies twice:
   * the longest redelivery horizon of the queue's topics, the queue's retention and then the dead-letter queue's
   * (the consumer dead-letters a copy with a fresh send, which can be redriven until it expires there).
   */
  #checkInboxRetention(id: string, queueName: string, inboxRetentionDays: number): void {
    const queue = this.queues[queueName];
    if (queue === undefined) return;
    const confirmDeadlineMs = this.#milliseconds(
      this.#props.confirmDeadline,
      OutboxSettings.confirmDeadlineMs,
    );
    const queueRetentionMs = queue.settings.retentionPeriod.toMilliseconds();
    const deadLetterRetentionMs = queue.settings.deadLetterRetention.toMilliseconds();
    for (const [topic, routed] of this.topicRoutes) {
      if (routed !== queue.queue) continue;
      const policy = this.#props.retryPolicies?.[topic] ?? DEFAULT_RETRY_POLICY;
      const horizonMs = redeliveryHorizonMs({
        policy,
        confirmDeadlineMs,
        queueRetentionMs,
        deadLetterRetentionMs,
      });
      const retentionMs = inboxRetentionDays * 86_400_000;
      if (retentionMs <= horizonMs) {
        this.#problem(
          `consumer ${id}: inboxRetention (${OutboxSettings.inboxRetentionDays.name} = ${inboxRetentionDays} days) ` +
            'must be longer than the redelivery horizon ' +
            `of topic '${topic}' (${(horizonMs / 86_400_000).toFixed(1)} days: every delivery round's deadline, ` +
            "send retries, the queue's retention and then the dead-letter queue's), or a late copy would be applied twice",
        );
      }
    }
  }

  /** The outbox's key for a new table, when it has one. */
  #tableEncryption(): Pick<dynamodb.TableProps, 'encryption' | 'encryptionKey'> {
    return this.encryptionKey === undefined
      ? {}
      : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: this.encryptionKey };
  }

  #retentionDays(): number {
    return this.#days(this.#props.retention, OutboxSettings.retentionDays);
  }

  /** A Duration prop in whole milliseconds, or the setting's default; a fraction is reported, not thrown. */
  #milliseconds(duration: Duration | undefined, setting: Setting<number>): number {
    if (duration === undefined) return setting.defaultValue ?? 0;
    if (duration.isUnresolved()) {
      this.#problem(`${setting.name} must be known at synth`);
      return setting.defaultValue ?? 0;
    }
    return duration.toMilliseconds({ integral: false });
  }

  #days(duration: Duration | undefined, setting: Setting<number>): number {
    if (duration === undefined) return setting.defaultValue ?? 0;
    if (duration.isUnresolved()) {
      this.#problem(`${setting.name} must be known at synth`);
      return setting.defaultValue ?? 0;
    }
    return duration.toDays({ integral: false });
  }

  /** The variable's text for `value` of prop `prop`, checked by the rule the function applies at start. */
  #setting<T>(setting: Setting<T>, value: T, prop: string): string {
    if (typeof value === 'string' && Token.isUnresolved(value)) return value;
    try {
      return setting.format(value);
    } catch (error) {
      this.#problem(`${prop}: ${error instanceof Error ? error.message : String(error)}`);
      return typeof value === 'string' ? value : JSON.stringify(value);
    }
  }

  #problem(message: string): void {
    this.#problems.push(`TransactionalOutbox: ${message}`);
  }
}

/** A handler module of this package, as TypeScript source (this repository) or compiled JavaScript (npm). */
function shippedEntry(pathWithoutExtension: string): string {
  for (const extension of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`${pathWithoutExtension}${extension}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error(
    `serverless-outbox: the shipped handler ${pathWithoutExtension} is missing from the package`,
  );
}

/** The CDK projection of an outbox index. */
function indexProjection(
  projection: OutboxIndexProjection,
): Pick<dynamodb.GlobalSecondaryIndexProps, 'projectionType' | 'nonKeyAttributes'> {
  if (projection.type === 'INCLUDE') {
    return {
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...(projection.nonKeyAttributes ?? [])],
    };
  }
  return {
    projectionType:
      projection.type === 'KEYS_ONLY' ? dynamodb.ProjectionType.KEYS_ONLY : dynamodb.ProjectionType.ALL,
  };
}
