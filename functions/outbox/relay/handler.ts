import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { awsClientConfig, createDocumentClient, createSqsClient } from '../../../shared/aws/clients.ts';
import { type Env, integerSetting, requireSetting } from '../../../shared/config/require-setting.ts';
import { createLogger } from '../../../shared/lambda/create-logger.ts';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS, DynamoOutboxStore } from '../../../shared/outbox/outbox-store.ts';
import type { RelayDeps } from '../../../shared/relay/relay-messages.ts';
import { relayStreamBatch } from '../../../shared/relay/relay-stream-batch.ts';
import { SqsPublisher } from '../../../shared/relay/sqs-publisher.ts';
import { parseTopicRoutes } from '../../../shared/relay/topic-routes.ts';
import { parseRetryPolicies } from '../../../shared/retry/topic-policies.ts';

/** The relay's dependencies from its environment (OUTBOX_TABLE, TOPIC_QUEUES, RETRY_POLICIES?, CONFIRM_DEADLINE_MS?). */
export function relayDeps(env: Env): RelayDeps {
  const clients = awsClientConfig(env);
  const routes = parseTopicRoutes(env.TOPIC_QUEUES);
  return {
    publisher: new SqsPublisher(createSqsClient(clients)),
    store: new DynamoOutboxStore({
      client: createDocumentClient(clients),
      tableName: requireSetting(env, 'OUTBOX_TABLE'),
      confirmDeadlineMs: integerSetting(env, 'CONFIRM_DEADLINE_MS', DEFAULT_CONFIRM_DEADLINE_MS, 1_000),
    }),
    queueFor: (topic: string) => routes.get(topic),
    retryPolicyFor: parseRetryPolicies(env.RETRY_POLICIES),
    clock: () => new Date(),
    random: Math.random,
  };
}

/** Builds the outbox stream → SQS relay from its environment (see {@link relayDeps}). */
export function createHandler(env: Env) {
  const deps = relayDeps(env);
  const logger = createLogger('relay', env);
  return middy((event: DynamoDBStreamEvent) => relayStreamBatch(event, deps, logger)).use(
    injectLambdaContext(logger),
  );
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
