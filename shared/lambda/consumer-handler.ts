import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { awsClientConfig, createDocumentClient, createS3Client, createSqsClient } from '../aws/clients.ts';
import { DynamoOutboxConfirmer } from '../aws/outbox-table/outbox-confirmer.ts';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.ts';
import { SqsQueueOperations } from '../aws/sqs-queue-operations.ts';
import { SqsReceiptQueue } from '../aws/sqs-receipt-queue.ts';
import type { PlanEffect } from '../consumer/consume-message.ts';
import type { Confirmer } from '../consumer/consume-types.ts';
import { ConfigError } from '../errors.ts';
import { consumeMetrics } from '../observability/report-metrics.ts';
import { ReceiptConfirmer } from '../receipts/receipt-confirmer.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readOptionalSetting, readSetting } from '../settings/setting.ts';
import { createLogger } from './create-logger.ts';
import { createTracer } from './create-tracer.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';
import { type ConsumeDeps, consumePorts } from './inbox-consumer.ts';
import { createOutboxMetrics } from './outbox-metrics-publisher.ts';
import {
  type ConflictKeys,
  type ConsumedSqsBatch,
  consumeSqsEvent as consumeSqsEventWithPorts,
  type SqsConsumer as SqsConsumerWithPorts,
} from './sqs-batch-consumer.ts';

/** Everything an SQS consumer needs besides the event: its plan, its deps (with its inbox table) and its logger. */
export interface SqsConsumer extends Omit<SqsConsumerWithPorts, 'deps'> {
  readonly deps: ConsumeDeps;
}

/**
 * The consumer function's core: consumes each SQS record exactly once in effect and reports the records
 * that failed transiently as partial batch failures, so only they are redelivered. With `failures`, a
 * failed record is also given an exponential visibility backoff, and a poison message (or one on its last
 * receive) is dead-lettered at once with its reason. On a FIFO queue a failed record fails only the records of
 * its message group that follow it; the other groups go on.
 *
 * The batch keeps to the invocation's time (the context's remaining time, less `wrapUp`): conflict retries stop
 * before the wrap-up point, and there every record not finished — still running on a slow backend, or waiting for
 * an earlier record of its key — is handed back as a fresh copy (with `failures`) and acknowledged, so the function
 * returns before Lambda stops it. A stopped invocation returns no partial batch response: SQS would count a receive
 * against every record of the batch, and after maxReceiveCount of them its redrive policy would dead-letter
 * records that never failed, without a reason.
 */
export async function consumeSqsBatch(
  event: SQSEvent,
  context: Context,
  consumer: SqsConsumer,
): Promise<SQSBatchResponse> {
  return (await consumeSqsEvent(event, context, consumer)).response;
}

/**
 * {@link consumeSqsBatch} that also returns what happened per topic, which the consumer function publishes as
 * metrics. With `failures`, a failed record is given an exponential visibility backoff, and a poison message (or
 * one on its last receive) is dead-lettered at once with its reason; the batch keeps to the invocation's time.
 * @example
 * const { response, topics } = await consumeSqsEvent(event, context, consumer);
 */
export function consumeSqsEvent(
  event: SQSEvent,
  context: Context,
  consumer: SqsConsumer,
): Promise<ConsumedSqsBatch> {
  return consumeSqsEventWithPorts(event, context, { ...consumer, deps: consumePorts(consumer.deps) });
}

/** What a consumer function is made of. */
export interface ConsumerHandlerOptions {
  /**
   * Builds the business side from the function's environment, once at start: read your own table names
   * here, and return the pure function that turns a message into the actions to commit with the inbox row.
   */
  readonly plan: (env: Env) => PlanEffect;
  /**
   * The items a message's effect touches, so that the records of a batch run concurrently when they touch
   * different items and one after another, in batch order, when they share one (two concurrent transactions on
   * one item would cancel each other with TransactionConflict). Return every item your plan writes or checks;
   * for a payload you cannot read, return a key of its own (e.g. the message id): the plan will reject it.
   * @default every record shares one key: the batch is applied one record after another
   * @example
   * // Orders for different SKUs apply at once; two orders for one SKU apply in turn.
   * conflictKeys: (message) => (message.payload as Order).items.map((item) => `sku:${item.sku}`),
   */
  readonly conflictKeys?: ConflictKeys;
  /**
   * Logger service name when `POWERTOOLS_SERVICE_NAME` is not set.
   * @default 'outbox-consumer'
   */
  readonly serviceName?: string;
}

/** The SDK clients a consumer may be built with instead of new ones (the handler passes traced ones). */
export interface ConsumerClients {
  /** @default a Document client from the environment's AWS settings */
  readonly client?: DynamoDBDocumentClient;
  /** @default an SQS client from the environment's AWS settings */
  readonly sqsClient?: SQSClient;
  /** @default an S3 client from the environment's AWS settings (used only with CLAIM_CHECK_BUCKET) */
  readonly s3Client?: S3Client;
}

/**
 * A consumer's parts from its environment (see `CONSUMER_SETTINGS`): the inbox, the confirmation of the
 * producer's outbox (when `OUTBOX_TABLE` is set), the claim check it reads large payloads from (when
 * `CLAIM_CHECK_BUCKET` is set), and failure handling on its queue and dead-letter queue.
 */
export function consumerParts(
  env: Env,
  plan: (env: Env) => PlanEffect,
  parts: ConsumerClients = {},
): Omit<SqsConsumer, 'logger'> {
  const clients = awsClientConfig(env);
  const client = parts.client ?? createDocumentClient(clients);
  const confirmer = confirmerOf(env, {
    client,
    sqsClient: () => parts.sqsClient ?? createSqsClient(clients),
  });
  const claimCheckBucket = readOptionalSetting(env, OutboxSettings.claimCheckBucket);
  const subscriber = readOptionalSetting(env, OutboxSettings.subscriber);
  return {
    plan: plan(env),
    deps: {
      client,
      inboxTable: readSetting(env, OutboxSettings.inboxTable),
      inboxRetentionDays: readSetting(env, OutboxSettings.inboxRetentionDays),
      ...(subscriber === undefined ? {} : { subscriber }),
      ...(confirmer === undefined ? {} : { confirmer }),
      ...(claimCheckBucket === undefined
        ? {}
        : {
            claimCheck: {
              store: new S3ClaimCheckStore(parts.s3Client ?? createS3Client(clients)),
              bucket: claimCheckBucket,
            },
          }),
      clock: () => new Date(),
    },
    failures: {
      queues: new SqsQueueOperations(parts.sqsClient ?? createSqsClient(clients)),
      sourceQueueUrl: readSetting(env, OutboxSettings.sourceQueueUrl),
      deadLetterQueueUrl: readSetting(env, OutboxSettings.deadLetterQueueUrl),
      maxReceiveCount: readSetting(env, OutboxSettings.maxReceiveCount),
      backoff: {
        baseSeconds: readSetting(env, OutboxSettings.visibilityBackoffBaseSeconds),
        maxSeconds: readSetting(env, OutboxSettings.visibilityBackoffMaxSeconds),
      },
      random: Math.random,
    },
  };
}

/**
 * How the consumer tells the producer it applied a message: by a receipt on the producer's receipt queue
 * (RECEIPT_QUEUE_URL, signed with SUBSCRIBER), or by confirming in the producer's outbox (OUTBOX_TABLE), or not
 * at all. Both at once is refused: a receipt is what keeps a consumer out of the producer's table.
 */
function confirmerOf(
  env: Env,
  parts: { readonly client: DynamoDBDocumentClient; readonly sqsClient: () => SQSClient },
): Confirmer | undefined {
  const outboxTable = readOptionalSetting(env, OutboxSettings.outboxTable);
  const receiptQueueUrl = readOptionalSetting(env, OutboxSettings.receiptQueueUrl);
  if (receiptQueueUrl !== undefined) {
    if (outboxTable !== undefined) {
      throw new ConfigError(
        'RECEIPT_QUEUE_URL and OUTBOX_TABLE are both set: a consumer confirms by receipt or in the outbox, not both',
      );
    }
    return new ReceiptConfirmer({
      subscriber: readSetting(env, OutboxSettings.subscriber),
      queue: new SqsReceiptQueue({ client: parts.sqsClient(), queueUrl: receiptQueueUrl }),
    });
  }
  if (outboxTable === undefined) return undefined;
  return new DynamoOutboxConfirmer({
    client: parts.client,
    tableName: outboxTable,
    actor: 'consumer',
    retentionDays: readSetting(env, OutboxSettings.retentionDays),
  });
}

/**
 * An SQS consumer as a Lambda handler: each message is applied exactly once in effect (the inbox row and
 * your plan's actions commit in one transaction), the producer's outbox is told, a transient failure is
 * retried alone with backoff, and a message that can never be processed is dead-lettered with its reason.
 * Messages of an ordered topic are applied in their order per aggregate (one that arrives early is parked until
 * its predecessor is applied); on a FIFO queue a failed record holds back only its own message group. It keeps to
 * the function's timeout: 5 s before it, the records not finished (a slow backend, a hot item) are handed back as
 * fresh copies, so Lambda never stops an invocation that would spend a receive of every record in its batch.
 * The outbox's own messages to a subscriber (an operator's erase or skip) are applied by the consumer itself: your
 * plan and conflict keys never see one.
 * It publishes MessagesApplied, DuplicatesSuppressed, BusinessRejections, DeadLettered, Requeued,
 * MessagesParked (ordered topics) and ConfirmLatencyMs per topic, and traces its SDK calls (the invocation joins the producer's trace through the
 * message's `AWSTraceHeader`). Deploy it with `TransactionalOutbox.addConsumer`, which sets its environment
 * and grants.
 * @example
 * export const handler = createConsumerHandler({
 *   plan: (env) => planStockReservation(requireEnv(env, 'INVENTORY_TABLE')),
 *   // Orders for different SKUs apply at once; orders sharing a SKU, one after another.
 *   conflictKeys: (message) => skusOf(message),
 * });
 */
export function createConsumerHandler(
  options: ConsumerHandlerOptions,
): EnvHandler<SQSEvent, SQSBatchResponse> {
  return handlerFromEnv((env) => {
    const service = options.serviceName ?? 'outbox-consumer';
    const logger = createLogger(service, env);
    const tracer = createTracer(service, env);
    const metrics = createOutboxMetrics(env, { defaultService: service, logger });
    const clients = awsClientConfig(env);
    const parts = consumerParts(env, options.plan, {
      client: tracer.captureAWSv3Client(createDocumentClient(clients)),
      sqsClient: tracer.captureAWSv3Client(createSqsClient(clients)),
      s3Client: tracer.captureAWSv3Client(createS3Client(clients)),
    });
    const consumer: SqsConsumer = {
      ...parts,
      logger,
      ...(options.conflictKeys === undefined ? {} : { conflictKeys: options.conflictKeys }),
    };
    return middy(async (event: SQSEvent, context: Context) => {
      const { response, topics } = await consumeSqsEvent(event, context, consumer);
      metrics.publish(consumeMetrics(topics));
      return response;
    })
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      .use(injectLambdaContext(logger));
  });
}
