/**
 * The one place for the settings every table, queue and function of the outbox gets unless a prop says
 * otherwise (the Solutions Constructs `*-defaults.ts` pattern), so two constructs cannot drift apart.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../shared/outbox/outbox-store.ts';

/** Settings of every DynamoDB table. */
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
  /** AWS advises 6 × the consumer's timeout; 6 × the 30 s default Lambda timeout. */
  visibilityTimeout: Duration.seconds(180),
  // 14 days is the SQS maximum (1,209,600 s): the longest an operator has to redrive a dead letter.
  deadLetterRetention: Duration.days(14),
} as const;

/** Settings of every Lambda function. */
export const FUNCTION_DEFAULTS = {
  // nodejs20.x is deprecated on AWS (DESIGN §6); the handlers are bundled for the runtime they run on.
  runtime: lambda.Runtime.NODEJS_22_X,
  architecture: lambda.Architecture.ARM_64,
  timeout: Duration.seconds(10),
  memorySize: 256,
  logRetention: logs.RetentionDays.ONE_MONTH,
  logLevel: 'INFO',
} as const;

/**
 * esbuild settings of every function: one minified ESM file with a source map, the AWS SDK included so a
 * function runs the SDK version it was tested with rather than whatever the runtime ships.
 */
export function defaultBundling(): nodejs.BundlingOptions {
  return {
    minify: true,
    sourceMap: true,
    target: 'node22',
    format: nodejs.OutputFormat.ESM,
    // Prefer the ESM builds of dependencies (middy 6 ships ESM only; the SDK tree-shakes better as ESM).
    mainFields: ['module', 'main'],
    // ESM has no `require`; some CommonJS dependencies call it for Node built-ins, so give them one.
    banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    // Bundle everything, the AWS SDK v3 included (the default leaves `@aws-sdk/*` to the runtime).
    externalModules: [],
  };
}

/** Environment variables the shipped relay and sweeper read (functions/outbox/relay and /sweeper). */
export const OUTBOX_VARIABLES = {
  table: 'OUTBOX_TABLE',
  topicQueues: 'TOPIC_QUEUES',
  retryPolicies: 'RETRY_POLICIES',
  confirmDeadlineMs: 'CONFIRM_DEADLINE_MS',
  deliveryInboxes: 'DELIVERY_INBOXES',
} as const;

/** Settings the relay and the sweeper share, so that they cannot disagree. */
export const OUTBOX_DEFAULTS = {
  // How long a SENT message may go unconfirmed before the sweeper asks its downstream.
  confirmDeadline: Duration.millis(DEFAULT_CONFIRM_DEADLINE_MS),
} as const;

/** Settings of the outbox relay function. */
export const RELAY_DEFAULTS = {
  serviceName: 'outbox-relay',
  // One batch is up to 100 records sent as parallel SendMessageBatch calls of 10 (the SQS batch limit).
  timeout: Duration.seconds(30),
  memorySize: 512,
  tableVariable: OUTBOX_VARIABLES.table,
  topicQueuesVariable: OUTBOX_VARIABLES.topicQueues,
} as const;

/** Settings of the outbox sweeper function and its schedule (DESIGN §4, sweep and retry rows). */
export const SWEEPER_DEFAULTS = {
  serviceName: 'outbox-sweeper',
  // A run keeps working until about 5 s before its timeout, so a minute covers one scheduling period.
  timeout: Duration.seconds(60),
  memorySize: 512,
  // Retries become due within seconds (the first backoff is 2 s), so the sweeper looks every minute, the
  // shortest EventBridge rate.
  scheduleRate: Duration.minutes(1),
} as const;

/** Settings of every EventBridge schedule that invokes a function. */
export const SCHEDULE_DEFAULTS = {
  // A failed scheduled run is superseded by the next one; EventBridge's default (185 retries over 24 h)
  // would only pile stale runs on top of fresh ones.
  retryAttempts: 2,
  maxEventAge: Duration.minutes(5),
} as const;

/** Settings of the outbox stream → relay mapping (DESIGN §4, relay row). */
export const OUTBOX_STREAM_DEFAULTS = {
  batchSize: 100,
  maxBatchingWindow: Duration.seconds(1),
  // Bounded: the sweeper delivers whatever the stream gives up on, so the retries need not be endless
  // (Lambda allows -1 = forever, up to 10,000).
  retryAttempts: 10,
  // Stream records live 24 h; after an hour the sweeper has long picked the message up from the due index.
  maxRecordAge: Duration.hours(1),
  // Halve a failing batch to isolate the record that fails it, instead of retrying all of it.
  bisectBatchOnError: true,
  parallelizationFactor: 1,
  // Only new messages: status updates and TTL deletions are the outbox's own bookkeeping.
  filters: [{ eventName: ['INSERT'] }] as readonly Record<string, unknown>[],
} as const;
