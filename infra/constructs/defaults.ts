/**
 * The one place for the settings every table, queue and function of the outbox gets unless a prop says
 * otherwise (the Solutions Constructs `*-defaults.ts` pattern), so two constructs cannot drift apart.
 * Settings that the shipped functions read (deadlines, shards, retention) have their defaults in the
 * library's settings contract (`OutboxSettings`), not here.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { DEFAULT_METRICS_NAMESPACE } from '../../shared/observability/metric-names.ts';

/** Settings of every DynamoDB table the outbox creates. */
export const TABLE_DEFAULTS = {
  // On demand: outbox traffic follows the business traffic, which is spiky; no capacity to plan.
  billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
  // Point-in-time recovery: the outbox holds the only copy of an undelivered message.
  pointInTimeRecovery: true,
  // Tables hold business data and undelivered messages: deleting the stack must not delete them.
  removalPolicy: RemovalPolicy.RETAIN,
} as const;

/** Settings of every SQS queue and its dead-letter queue. */
export const QUEUE_DEFAULTS = {
  encryption: sqs.QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
  /** Receives before SQS moves a message to the DLQ (SQS allows 1–1000). */
  maxReceiveCount: 5,
  /** AWS advises 6 × the consumer's timeout; 6 × the consumer's 30 s default. */
  visibilityTimeout: Duration.seconds(180),
  /** SQS's default retention of a queue. */
  retentionPeriod: Duration.days(4),
  // 14 days is the SQS maximum (1,209,600 s): the longest an operator has to redrive a dead letter.
  deadLetterRetention: Duration.days(14),
} as const;

/** Settings of every Lambda function. */
export const FUNCTION_DEFAULTS = {
  // The newest Node.js runtime Lambda offers (aws-cdk-lib's NODEJS_LATEST, pinned so a CDK upgrade never
  // changes the runtime unseen); the handlers are bundled for the runtime they run on.
  runtime: lambda.Runtime.NODEJS_24_X,
  architecture: lambda.Architecture.ARM_64,
  timeout: Duration.seconds(10),
  memorySize: 256,
  logRetention: logs.RetentionDays.ONE_MONTH,
  logLevel: 'INFO',
  // X-Ray: the `traceparent` written with a message links the request, the relay, the consumer and the
  // confirmation in one trace, so every hop must be traced.
  tracing: lambda.Tracing.ACTIVE,
} as const;

/**
 * esbuild settings of every function: one minified ESM file with a source map, the AWS SDK included so a
 * function runs the SDK version it was tested with rather than whatever the runtime ships.
 */
export function defaultBundling(): nodejs.BundlingOptions {
  return {
    minify: true,
    // Minifying renames classes and functions; a logged error would read `ai` instead of `ConfigError`.
    keepNames: true,
    sourceMap: true,
    target: 'node24',
    format: nodejs.OutputFormat.ESM,
    // Prefer the ESM builds of dependencies (middy 6 ships ESM only; the SDK tree-shakes better as ESM).
    mainFields: ['module', 'main'],
    // ESM has no `require`; some CommonJS dependencies call it for Node built-ins, so give them one.
    banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    // Bundle everything, the AWS SDK v3 included (the default leaves `@aws-sdk/*` to the runtime).
    externalModules: [],
  };
}

/** Settings of the outbox relay function. */
export const RELAY_DEFAULTS = {
  // One batch is up to 100 records sent as parallel SendMessageBatch calls of 10 (the SQS batch limit).
  timeout: Duration.seconds(30),
  memorySize: 512,
} as const;

/** Settings of the outbox sweeper function and its schedule. */
export const SWEEPER_DEFAULTS = {
  // A run keeps working until about 5 s before its timeout, so a minute covers one scheduling period.
  timeout: Duration.seconds(60),
  /** A run stops starting new rounds 5 s before its timeout, so shorter timeouts leave it no time to work. */
  minimumTimeout: Duration.seconds(10),
  memorySize: 512,
  // Retries become due within seconds (the first backoff is 2 s), so the sweeper looks every minute, the
  // shortest EventBridge rate.
  scheduleRate: Duration.minutes(1),
} as const;

/** Settings of a consumer function and its queue mapping. */
export const CONSUMER_DEFAULTS = {
  timeout: Duration.seconds(30),
  memorySize: 256,
  // SQS allows up to 10 per batch without a batching window longer than 0.
  batchSize: 10,
  maxBatchingWindow: Duration.seconds(1),
} as const;

/** Settings of every EventBridge schedule that invokes a function. */
export const SCHEDULE_DEFAULTS = {
  // A failed scheduled run is superseded by the next one; EventBridge's default (185 retries over 24 h)
  // would only pile stale runs on top of fresh ones.
  retryAttempts: 2,
  maxEventAge: Duration.minutes(5),
} as const;

/** Settings of the outbox stream → relay mapping. */
export const OUTBOX_STREAM_DEFAULTS = {
  batchSize: 100,
  // No window: a record is relayed on Lambda's next poll of the shard (4 a second) instead of waiting up to a
  // second for a batch to fill. That takes about a second off every lone order's latency and costs at most 3 more
  // invocations a second per shard at low volume; under load the batches fill either way.
  maxBatchingWindow: Duration.seconds(0),
  // Bounded: the sweeper delivers whatever the stream gives up on, so the retries need not be endless
  // (Lambda allows -1 = forever, up to 10,000).
  retryAttempts: 10,
  // Stream records live 24 h; after an hour the sweeper has long picked the message up from the due index.
  maxRecordAge: Duration.hours(1),
  // Halve a failing batch to isolate the record that fails it, instead of retrying all of it.
  bisectBatchOnError: true,
  // Lambda keeps the order of each item's records at any factor; more than 1 lets records of different items
  // (different messages) of one shard be relayed concurrently, so out of order across items. Ordered topics do
  // not depend on it: their consumers apply each aggregate's messages by seq.
  parallelizationFactor: 1,
  // Only new messages: status updates and TTL deletions are the outbox's own bookkeeping.
  filters: [{ eventName: ['INSERT'] }] as readonly Record<string, unknown>[],
} as const;

/** Settings of the relay's on-failure destination (metadata of stream batches it gave up on). */
export const FAILURE_QUEUE_DEFAULTS = {
  // The longest SQS keeps a message: an operator has two weeks to see which records the relay skipped.
  retentionPeriod: Duration.days(14),
} as const;

/** Settings of the metrics the shipped functions publish (Powertools Metrics, embedded metric format). */
export const METRICS_DEFAULTS = {
  /** CloudWatch namespace of every outbox metric, unless the `metricsNamespace` prop names another. */
  namespace: DEFAULT_METRICS_NAMESPACE,
} as const;

/** Thresholds and evaluation of the outbox's alarms (each alarms above its threshold). */
export const ALARM_DEFAULTS = {
  /** One datapoint of this period breaching raises the alarm. */
  period: Duration.minutes(5),
  evaluationPeriods: 1,
  /** Any dead letter needs an operator: the consumer could not apply the message. */
  deadLetterMessages: 0,
  /** Any record there is a stream batch the relay gave up on (the sweeper still delivers its messages). */
  failureQueueMessages: 0,
  /** Any FAILED message waits for an operator: nothing retries it. */
  failedMessages: 0,
  /** Any gap past its timeout: a consumer holds an ordered message whose predecessor did not arrive. */
  orderingGaps: 0,
  /**
   * Delivery takes seconds; a message PENDING for 15 minutes has failed about eight sends in a row (2 s
   * doubling), or neither the relay nor the sweeper is running.
   */
  oldestPendingAge: Duration.minutes(15),
  /** The relay is this far behind the stream; records expire after 24 h and the mapping gives up after 1 h. */
  relayIteratorAge: Duration.minutes(5),
  /**
   * A receipt comes seconds after the send, and a lost one costs one round (the confirm deadline, 5 minutes by
   * default): a delivery unconfirmed for 15 minutes has gone about three rounds without one.
   */
  unconfirmedAge: Duration.minutes(15),
  /**
   * A consumer takes a message within seconds. One it cannot apply stays in the queue through its receives (five,
   * three minutes apart with the default visibility timeout) before it is dead-lettered, which raises an alarm of
   * its own: twice that long means the queue is not being drained.
   */
  queueMessageAge: Duration.minutes(30),
  errors: 0,
  throttles: 0,
} as const;

/** Settings of the optional S3 archive of expired messages. */
export const ARCHIVE_DEFAULTS = {
  /** Archived messages are rarely read after a quarter: Glacier Instant Retrieval keeps them readable in ms. */
  transitionAfter: Duration.days(90),
  storageClass: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
  encryption: s3.BucketEncryption.S3_MANAGED,
  enforceSSL: true,
  blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
  versioned: false,
} as const;

/**
 * Settings of the S3 bucket of claim-checked payloads (messages too large for their queue). The threshold is the
 * library's (`OutboxSettings.claimCheckThresholdBytes`); the objects' expiry is computed from the outbox's
 * retention and redelivery horizon.
 */
export const CLAIM_CHECK_DEFAULTS = {
  encryption: s3.BucketEncryption.S3_MANAGED,
  enforceSSL: true,
  blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
  objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
  // Off: each key names its content (message id and SHA-256) and is written once, so there is nothing to
  // restore, and noncurrent versions would outlive the expiry rule that bounds how long a payload is kept.
  versioned: false,
  // Payloads go in one PutObject; a multipart upload someone else left unfinished is removed the next day.
  abortIncompleteMultipartUploadAfter: Duration.days(1),
  // Past the retention and the redelivery horizon: the lifecycle counts whole days from midnight UTC.
  expirationMarginDays: 1,
} as const;

/** Settings of the archiver function and its stream mapping. */
export const ARCHIVER_DEFAULTS = {
  timeout: Duration.seconds(60),
  memorySize: 512,
  // Larger batches make fewer, larger objects, which are cheaper to store and to query; Lambda caps a
  // batch's payload at 6 MB whatever the count.
  batchSize: 1_000,
  maxBatchingWindow: Duration.seconds(60),
  // Only TTL deletions: DynamoDB's own service principal deletes expired items, and an operator's or an
  // erase's DeleteItem carries the caller's identity instead.
  filters: [
    {
      eventName: ['REMOVE'],
      userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] },
    },
  ] as readonly Record<string, unknown>[],
} as const;
