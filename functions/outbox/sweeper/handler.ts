import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { awsClientConfig, createDocumentClient, createSqsClient } from '../../../shared/aws/clients.ts';
import { type Env, integerSetting, requireSetting } from '../../../shared/config/require-setting.ts';
import { createLogger } from '../../../shared/lambda/create-logger.ts';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS, DynamoOutboxStore } from '../../../shared/outbox/outbox-store.ts';
import { SqsPublisher } from '../../../shared/relay/sqs-publisher.ts';
import { parseTopicRoutes, parseTopicTables } from '../../../shared/relay/topic-routes.ts';
import { parseRetryPolicies } from '../../../shared/retry/topic-policies.ts';
import { inboxDeliveryCheck } from '../../../shared/sweeper/inbox-delivery-check.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweeperDeps, sweep } from '../../../shared/sweeper/sweep.ts';

/**
 * The sweeper's dependencies from its environment: OUTBOX_TABLE, TOPIC_QUEUES, and optionally
 * RETRY_POLICIES, DELIVERY_INBOXES (topic → inbox table for reconciliation), CONFIRM_DEADLINE_MS.
 */
export function sweeperDeps(env: Env): Omit<SweeperDeps, 'owner' | 'remainingMs'> {
  const clients = awsClientConfig(env);
  const client = createDocumentClient(clients);
  const routes = parseTopicRoutes(env.TOPIC_QUEUES);
  const inboxes = parseTopicTables(env.DELIVERY_INBOXES, 'DELIVERY_INBOXES');
  const checks = new Map([...inboxes].map(([topic, table]) => [topic, inboxDeliveryCheck(client, table)]));
  return {
    publisher: new SqsPublisher(createSqsClient(clients)),
    store: new DynamoOutboxStore({
      client,
      tableName: requireSetting(env, 'OUTBOX_TABLE'),
      confirmDeadlineMs: integerSetting(env, 'CONFIRM_DEADLINE_MS', DEFAULT_CONFIRM_DEADLINE_MS, 1_000),
    }),
    queueFor: (topic: string) => routes.get(topic),
    retryPolicyFor: parseRetryPolicies(env.RETRY_POLICIES),
    deliveryCheckFor: (topic: string) => checks.get(topic),
    clock: () => new Date(),
    random: Math.random,
    sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    // The due-shard count is not configurable: the writer and the sweeper must agree on it.
    settings: DEFAULT_SWEEPER_SETTINGS,
  };
}

/** Builds the scheduled sweeper from its environment (see {@link sweeperDeps}). */
export function createHandler(env: Env) {
  const base = sweeperDeps(env);
  const logger = createLogger('sweeper', env);
  return middy(async (_event: unknown, context: Context) => {
    const report = await sweep({
      ...base,
      owner: context.awsRequestId,
      remainingMs: () => context.getRemainingTimeInMillis(),
    });
    logger.info('sweep finished', { ...report });
    return report;
  }).use(injectLambdaContext(logger));
}

/** Lambda entry point (EventBridge schedule). */
export const handler = lazyHandler(() => createHandler(process.env));
