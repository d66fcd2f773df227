import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { awsClientConfig, createDocumentClient, createSqsClient } from '../aws/clients.ts';
import { type DynamoOutboxStoreOptions, DynamoRelayStore } from '../aws/outbox-table/relay-store.ts';
import { SqsPublisher } from '../aws/sqs-publisher.ts';
import { sendMetrics, subscriberSendMetrics } from '../observability/report-metrics.ts';
import { subscriberQueueOf } from '../outbox/subscriptions.ts';
import type { RelayDeps } from '../relay/relay-messages.ts';
import { retryPolicyLookup } from '../retry/topic-policies.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readSetting } from '../settings/setting.ts';
import { createLogger } from './create-logger.ts';
import { createTracer } from './create-tracer.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';
import { createOutboxMetrics } from './outbox-metrics-publisher.ts';
import { relayStreamEvent } from './relay-stream-batch.ts';

/** What the relay's adapters may be built with instead of their defaults. */
export interface RelayParts {
  /** @default a Document client from the environment's AWS settings */
  readonly client?: DynamoDBDocumentClient;
  /** @default an SQS client from the environment's AWS settings */
  readonly sqsClient?: SQSClient;
  /** Who the message history names for the changes this function makes. @default 'relay' */
  readonly actor?: string;
}

/**
 * The relay's adapters from its environment (see `RELAY_SETTINGS`): the SQS publisher, the outbox store,
 * the topic routes and retry policies. Tests and drills wrap one of them to inject a fault.
 */
export function relayDeps(
  env: Env,
  parts: RelayParts = {},
): RelayDeps & { readonly store: DynamoRelayStore } {
  return { ...relayRouting(env, parts), store: new DynamoRelayStore(outboxStoreOptions(env, parts)) };
}

/**
 * What the relay and the sweeper send with, from the environment: the SQS publisher, where each topic's messages
 * (or each subscriber's deliveries) go, the retry policies, the clock.
 */
export function relayRouting(env: Env, parts: Pick<RelayParts, 'sqsClient'> = {}): Omit<RelayDeps, 'store'> {
  const routes = new Map(Object.entries(readSetting(env, OutboxSettings.topicQueues)));
  const subscriptions = readSetting(env, OutboxSettings.subscriptions);
  return {
    publisher: new SqsPublisher(parts.sqsClient ?? createSqsClient(awsClientConfig(env))),
    queueFor: (topic: string, subscriber?: string) =>
      subscriber === undefined ? routes.get(topic) : subscriberQueueOf(subscriptions, topic, subscriber),
    retryPolicyFor: retryPolicyLookup(
      readSetting(env, OutboxSettings.retryPolicies),
      readSetting(env, OutboxSettings.subscriberRetryPolicies),
    ),
    clock: () => new Date(),
    random: Math.random,
  };
}

/** The outbox store's settings from the environment: what the relay and the sweeper build their store with. */
export function outboxStoreOptions(env: Env, parts: RelayParts): DynamoOutboxStoreOptions {
  return {
    client: parts.client ?? createDocumentClient(awsClientConfig(env)),
    tableName: readSetting(env, OutboxSettings.outboxTable),
    confirmDeadlineMs: readSetting(env, OutboxSettings.confirmDeadlineMs),
    retentionDays: readSetting(env, OutboxSettings.retentionDays),
    // FAILED messages are filed under their due shard for the operators' attention index.
    dueShards: readSetting(env, OutboxSettings.dueShards),
    actor: parts.actor ?? 'relay',
  };
}

/**
 * The outbox stream → SQS relay as a Lambda handler: forwards each new message to its topic's queue, marks it
 * SENT or records the failed attempt on the message, and reports as batch item failures only the records
 * whose outcome could not be recorded. It publishes MessagesSent, SendFailures, RetriesScheduled and
 * MessagesFailed per topic, and MessagesSent, SendFailures and MessagesFailed of each subscriber's deliveries (per
 * topic and over all), traces its SDK calls, and passes each message's trace on to SQS.
 * `TransactionalOutbox` deploys it with its settings.
 * @example
 * export const handler = createRelayHandler();
 */
export function createRelayHandler(): EnvHandler<DynamoDBStreamEvent, DynamoDBBatchResponse> {
  return handlerFromEnv((env) => {
    const logger = createLogger(RELAY_SERVICE, env);
    const tracer = createTracer(RELAY_SERVICE, env);
    const metrics = createOutboxMetrics(env, { defaultService: RELAY_SERVICE, logger });
    const clients = awsClientConfig(env);
    const deps = relayDeps(env, {
      client: tracer.captureAWSv3Client(createDocumentClient(clients)),
      sqsClient: tracer.captureAWSv3Client(createSqsClient(clients)),
    });
    return middy(async (event: DynamoDBStreamEvent) => {
      const { response, report } = await relayStreamEvent(event, deps, logger);
      metrics.publish(sendMetrics(report.topics), subscriberSendMetrics(report.topics));
      return response;
    })
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      .use(injectLambdaContext(logger));
  });
}

/** The relay's service name when `POWERTOOLS_SERVICE_NAME` is not set. */
const RELAY_SERVICE = 'outbox-relay';
