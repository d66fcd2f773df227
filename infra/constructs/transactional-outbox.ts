import { fileURLToPath } from 'node:url';
import { type Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { OUTBOX_KEYS } from '../../shared/outbox/outbox-item.ts';
import type { RetryPolicy } from '../../shared/retry/retry-policy.ts';
import { parseRetryPolicies } from '../../shared/retry/topic-policies.ts';
import {
  OUTBOX_DEFAULTS,
  OUTBOX_STREAM_DEFAULTS,
  OUTBOX_VARIABLES,
  RELAY_DEFAULTS,
  SCHEDULE_DEFAULTS,
  SWEEPER_DEFAULTS,
  TABLE_DEFAULTS,
} from './defaults.ts';
import { QueueWithDlq, type QueueWithDlqProps } from './queue-with-dlq.ts';
import { ServiceFunction, type ServiceFunctionProps } from './service-function.ts';
import { grantTableAccess } from './table-access.ts';

/** The relay handler this package ships. */
const SHIPPED_RELAY_ENTRY = fileURLToPath(
  new URL('../../functions/outbox/relay/handler.ts', import.meta.url),
);

/** The sweeper handler this package ships. */
const SHIPPED_SWEEPER_ENTRY = fileURLToPath(
  new URL('../../functions/outbox/sweeper/handler.ts', import.meta.url),
);

/** A queue the relay forwards messages to, with the topics routed to it. */
export interface OutboxTopicQueueProps extends QueueWithDlqProps {
  /** Topics whose messages go to this queue; a topic goes to exactly one queue. */
  readonly topics: readonly string[];
}

/** Settings of the relay function. */
export interface OutboxRelayProps
  extends Omit<ServiceFunctionProps, 'entry' | 'serviceName' | 'environment' | 'timeout' | 'memorySize'> {
  /**
   * Handler module of the relay; it exports `handler`.
   * @default - the relay shipped in functions/outbox/relay/handler.ts
   */
  readonly entry?: string;
  /**
   * @default 'outbox-relay'
   */
  readonly serviceName?: string;
  /**
   * @default Duration.seconds(30)
   */
  readonly timeout?: Duration;
  /**
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * Variable that carries the outbox table's name.
   * @default 'OUTBOX_TABLE'
   */
  readonly tableVariable?: string;
  /**
   * Variable that carries the JSON object mapping each topic to its queue URL.
   * @default 'TOPIC_QUEUES'
   */
  readonly topicQueuesVariable?: string;
}

/** Settings of the sweeper function and the schedule that runs it. */
export interface OutboxSweeperProps
  extends Omit<ServiceFunctionProps, 'entry' | 'serviceName' | 'environment' | 'timeout' | 'memorySize'> {
  /**
   * Handler module of the sweeper; it exports `handler`.
   * @default - the sweeper shipped in functions/outbox/sweeper/handler.ts
   */
  readonly entry?: string;
  /**
   * @default 'outbox-sweeper'
   */
  readonly serviceName?: string;
  /**
   * How long one run may take; the shipped sweeper works until about 5 s before it.
   * @default Duration.seconds(60)
   */
  readonly timeout?: Duration;
  /**
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * When the sweeper runs.
   * @default events.Schedule.rate(Duration.minutes(1))
   */
  readonly schedule?: events.Schedule;
  /**
   * Per topic, the downstream's inbox table: a row keyed by the message id proves the message was applied,
   * so a SENT message past its confirmation deadline becomes CONFIRMED instead of being resent. The sweeper
   * may read these tables, nothing more.
   * @default - no topic has a check; an unconfirmed message is resent and the consumer dedupes it
   */
  readonly deliveryInboxes?: Readonly<Record<string, dynamodb.ITable>>;
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
   * Concurrent batches per shard (1–10); above 1, order per item is no longer kept.
   * @default 1
   */
  readonly parallelizationFactor?: number;
  /**
   * Event filter patterns; a record reaches the relay when any matches.
   * @default [{ eventName: ['INSERT'] }]
   */
  readonly filters?: readonly Record<string, unknown>[];
}

/** Props of a {@link TransactionalOutbox}. */
export interface TransactionalOutboxProps {
  /** The queues the relay forwards to, by name. */
  readonly topicQueues: Readonly<Record<string, OutboxTopicQueueProps>>;
  /**
   * The queue that receives the metadata of stream batches the relay gave up on.
   * @default - a queue with the {@link QueueWithDlq} defaults
   */
  readonly failureQueue?: QueueWithDlqProps;
  /**
   * @default - the {@link OutboxRelayProps} defaults
   */
  readonly relay?: OutboxRelayProps;
  /**
   * @default - the {@link OutboxStreamProps} defaults
   */
  readonly stream?: OutboxStreamProps;
  /**
   * @default - the {@link OutboxSweeperProps} defaults
   */
  readonly sweeper?: OutboxSweeperProps;
  /**
   * Per topic, how failed sends are retried (`RETRY_POLICIES`). One setting for the relay and the sweeper,
   * which both schedule retries, so they cannot disagree.
   * @default - every topic gets DEFAULT_RETRY_POLICY (shared/retry/retry-policy.ts)
   */
  readonly retryPolicies?: Readonly<Record<string, RetryPolicy>>;
  /**
   * How long a SENT message may wait for its consumer's confirmation before the sweeper reconciles it
   * (`CONFIRM_DEADLINE_MS`). The relay stamps the deadline when it marks a message SENT and the sweeper
   * stamps it when it resends, so both get this one value.
   * @default Duration.minutes(5)
   */
  readonly confirmDeadline?: Duration;
  /**
   * What happens to the outbox table when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The outbox around a service: the outbox table and its stream, the relay that forwards new messages to
 * their topic queues, each queue's DLQ, the queue that records stream batches the relay gave up on, and the
 * scheduled sweeper that retries, recovers and reconciles what the relay could not finish.
 * @example
 * const outbox = new TransactionalOutbox(this, 'Outbox', {
 *   topicQueues: { orderEvents: { topics: ['order.created'], visibilityTimeout: Duration.minutes(3) } },
 *   sweeper: { deliveryInboxes: { 'order.created': inventoryInbox } },
 * });
 * grantTableAccess(outbox.table, createOrder, 'write');
 * grantTableAccess(outbox.table, inventoryConsumer, 'update'); // a consumer that confirms what it applied
 */
export class TransactionalOutbox extends Construct {
  /** The outbox table (key and index names in OUTBOX_KEYS). */
  public readonly table: dynamodb.Table;
  /** ARN of the outbox table's stream. */
  public readonly streamArn: string;
  /** The topic queues, by the names given in `topicQueues`. */
  public readonly topicQueues: Readonly<Record<string, QueueWithDlq>>;
  /** Each topic's queue. */
  public readonly topicRoutes: ReadonlyMap<string, sqs.IQueue>;
  /** The stream mapping's on-failure destination. */
  public readonly failureQueue: QueueWithDlq;
  /** The relay function. */
  public readonly relay: nodejs.NodejsFunction;
  /** The relay's log group. */
  public readonly relayLogGroup: logs.LogGroup;
  /** The stream → relay event source. */
  public readonly streamSource: sources.DynamoEventSource;
  /** The sweeper function: due retries, lost stream records, expired claims, unconfirmed messages. */
  public readonly sweeper: nodejs.NodejsFunction;
  /** The sweeper's log group. */
  public readonly sweeperLogGroup: logs.LogGroup;
  /** The EventBridge rule that runs the sweeper. */
  public readonly sweeperSchedule: events.Rule;

  constructor(scope: Construct, id: string, props: TransactionalOutboxProps) {
    super(scope, id);
    this.table = outboxTable(this, props.removalPolicy ?? TABLE_DEFAULTS.removalPolicy);
    if (this.table.tableStreamArn === undefined)
      throw new Error('TransactionalOutbox: the table has no stream');
    this.streamArn = this.table.tableStreamArn;

    const queues: Record<string, QueueWithDlq> = {};
    const routes = new Map<string, sqs.IQueue>();
    for (const [name, queueProps] of Object.entries(props.topicQueues)) {
      const topicQueue = new QueueWithDlq(this, `${name}Queue`, queueProps);
      queues[name] = topicQueue;
      for (const topic of queueProps.topics) {
        if (routes.has(topic)) {
          throw new Error(`TransactionalOutbox: topic '${topic}' is routed to more than one queue`);
        }
        routes.set(topic, topicQueue.queue);
      }
    }
    this.topicQueues = queues;
    this.topicRoutes = routes;
    this.failureQueue = new QueueWithDlq(this, 'RelayFailureQueue', props.failureQueue);

    const { entry, serviceName, timeout, memorySize, tableVariable, topicQueuesVariable, ...functionProps } =
      props.relay ?? {};
    const routeUrls = Object.fromEntries([...routes].map(([topic, queue]) => [topic, queue.queueUrl]));
    const topicQueuesJson = Stack.of(this).toJsonString(routeUrls);
    // The relay and the sweeper both send, mark SENT and schedule retries: they get the same policies.
    const sendSettings = {
      [OUTBOX_VARIABLES.retryPolicies]: retryPoliciesJson(props.retryPolicies ?? {}, routes),
      [OUTBOX_VARIABLES.confirmDeadlineMs]: confirmDeadlineMs(
        props.confirmDeadline ?? OUTBOX_DEFAULTS.confirmDeadline,
      ),
    };
    const relay = new ServiceFunction(this, 'Relay', {
      ...functionProps,
      entry: entry ?? SHIPPED_RELAY_ENTRY,
      serviceName: serviceName ?? RELAY_DEFAULTS.serviceName,
      timeout: timeout ?? RELAY_DEFAULTS.timeout,
      memorySize: memorySize ?? RELAY_DEFAULTS.memorySize,
      logRemovalPolicy: functionProps.logRemovalPolicy ?? props.removalPolicy,
      environment: {
        [tableVariable ?? RELAY_DEFAULTS.tableVariable]: this.table.tableName,
        [topicQueuesVariable ?? RELAY_DEFAULTS.topicQueuesVariable]: topicQueuesJson,
        ...sendSettings,
      },
    });
    this.relay = relay.function;
    this.relayLogGroup = relay.logGroup;

    // The relay marks messages SENT or records a failed attempt: UpdateItem only, no put, delete or read.
    grantTableAccess(this.table, this.relay, 'update');
    for (const queue of routes.values()) queue.grantSendMessages(this.relay);

    const stream = { ...OUTBOX_STREAM_DEFAULTS, ...props.stream };
    this.streamSource = new sources.DynamoEventSource(this.table, {
      // From the oldest record: messages written before the mapping existed are forwarded too.
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: stream.batchSize,
      maxBatchingWindow: stream.maxBatchingWindow,
      retryAttempts: stream.retryAttempts,
      maxRecordAge: stream.maxRecordAge,
      bisectBatchOnError: stream.bisectBatchOnError,
      parallelizationFactor: stream.parallelizationFactor,
      filters: stream.filters.map((pattern) => lambda.FilterCriteria.filter(pattern)),
      // One failed record fails alone; the relay reports it instead of failing the batch.
      reportBatchItemFailures: true,
      onFailure: new sources.SqsDlq(this.failureQueue.queue),
    });
    this.relay.addEventSource(this.streamSource);

    const sweeper = this.createSweeper(props, routes, {
      ...sendSettings,
      [OUTBOX_VARIABLES.topicQueues]: topicQueuesJson,
    });
    this.sweeper = sweeper.function;
    this.sweeperLogGroup = sweeper.logGroup;
    this.sweeperSchedule = new events.Rule(this, 'SweeperSchedule', {
      description: 'Runs the outbox sweeper',
      schedule: props.sweeper?.schedule ?? events.Schedule.rate(SWEEPER_DEFAULTS.scheduleRate),
      targets: [new targets.LambdaFunction(this.sweeper, SCHEDULE_DEFAULTS)],
    });
  }

  /** The sweeper function with its least-privilege grants (its schedule is added by the constructor). */
  private createSweeper(
    props: TransactionalOutboxProps,
    routes: ReadonlyMap<string, sqs.IQueue>,
    /** What the sweeper shares with the relay: topic routes, retry policies, confirmation deadline. */
    sharedSettings: Readonly<Record<string, string>>,
  ): ServiceFunction {
    const {
      entry,
      serviceName,
      timeout,
      memorySize,
      schedule: _schedule,
      deliveryInboxes = {},
      ...functionProps
    } = props.sweeper ?? {};
    for (const topic of Object.keys(deliveryInboxes)) {
      if (!routes.has(topic)) {
        throw new Error(
          `TransactionalOutbox: sweeper.deliveryInboxes names topic '${topic}', which no queue carries`,
        );
      }
    }
    const inboxNames = Object.fromEntries(
      Object.entries(deliveryInboxes).map(([topic, inbox]) => [topic, inbox.tableName]),
    );
    const sweeper = new ServiceFunction(this, 'Sweeper', {
      ...functionProps,
      entry: entry ?? SHIPPED_SWEEPER_ENTRY,
      serviceName: serviceName ?? SWEEPER_DEFAULTS.serviceName,
      timeout: timeout ?? SWEEPER_DEFAULTS.timeout,
      memorySize: memorySize ?? SWEEPER_DEFAULTS.memorySize,
      logRemovalPolicy: functionProps.logRemovalPolicy ?? props.removalPolicy,
      environment: {
        [OUTBOX_VARIABLES.table]: this.table.tableName,
        [OUTBOX_VARIABLES.deliveryInboxes]: Stack.of(this).toJsonString(inboxNames),
        ...sharedSettings,
      },
    });
    // Reads the due index (Query on the GSI, whose ARN the grant includes) and claims, marks, requeues and
    // releases with conditional updates: no Scan, GetItem, PutItem or DeleteItem.
    grantTableAccess(this.table, sweeper.function, 'queryUpdate');
    for (const queue of routes.values()) queue.grantSendMessages(sweeper.function);
    // Reconciliation only asks whether the inbox has the message: reads, never writes.
    for (const inbox of Object.values(deliveryInboxes)) grantTableAccess(inbox, sweeper.function, 'read');
    return sweeper;
  }
}

/** `RETRY_POLICIES`: the policies as JSON, checked now with the handlers' own parser so a bad one fails synth. */
function retryPoliciesJson(
  policies: Readonly<Record<string, RetryPolicy>>,
  routes: ReadonlyMap<string, sqs.IQueue>,
): string {
  for (const topic of Object.keys(policies)) {
    if (!routes.has(topic)) {
      throw new Error(`TransactionalOutbox: retryPolicies names topic '${topic}', which no queue carries`);
    }
  }
  const json = JSON.stringify(policies);
  try {
    parseRetryPolicies(json, 'retryPolicies');
  } catch (cause) {
    throw new Error(`TransactionalOutbox: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
  return json;
}

/** `CONFIRM_DEADLINE_MS`: a positive whole number of milliseconds. */
function confirmDeadlineMs(deadline: Duration): string {
  if (deadline.isUnresolved()) throw new Error('TransactionalOutbox: confirmDeadline must be known at synth');
  // Throws itself for a fraction of a millisecond.
  const ms = deadline.toMilliseconds();
  if (ms <= 0) {
    throw new Error(`TransactionalOutbox: confirmDeadline must be a positive whole number of ms, got ${ms}`);
  }
  return String(ms);
}

/** The outbox table: keyed by message id, streamed, with the sparse due index and the aggregate index. */
function outboxTable(scope: Construct, removalPolicy: RemovalPolicy): dynamodb.Table {
  const table = new dynamodb.Table(scope, 'Table', {
    partitionKey: { name: OUTBOX_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
    billingMode: TABLE_DEFAULTS.billingMode,
    // The relay filters on INSERT; the old image lets an operator's tooling see what a transition changed.
    stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    timeToLiveAttribute: OUTBOX_KEYS.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
    removalPolicy,
  });
  for (const index of [OUTBOX_KEYS.dueIndex, OUTBOX_KEYS.aggregateIndex]) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      // Whole items: the sweeper resends from the index and the order page shows statuses without a read per item.
      projectionType: dynamodb.ProjectionType.ALL,
    });
  }
  return table;
}
