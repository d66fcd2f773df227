import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSEvent } from 'aws-lambda';
import { awsClientConfig, createDocumentClient, createSqsClient } from '../../../shared/aws/clients.ts';
import {
  type Env,
  integerSetting,
  requireIntegerSetting,
  requireSetting,
} from '../../../shared/config/require-setting.ts';
import type { ConsumeDeps, PlanEffect } from '../../../shared/consumer/consume-message.ts';
import {
  DEFAULT_VISIBILITY_BACKOFF,
  type FailureHandling,
} from '../../../shared/consumer/failure-handling.ts';
import { consumeSqsBatch } from '../../../shared/consumer/sqs-consumer.ts';
import { SqsQueueOperations } from '../../../shared/consumer/sqs-queue-operations.ts';
import { createLogger } from '../../../shared/lambda/create-logger.ts';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';
import { DynamoOutboxStore } from '../../../shared/outbox/outbox-store.ts';
import { planStockReservation } from './plan-stock-reservation.ts';

/**
 * The inventory consumer's parts from its environment: INVENTORY_TABLE, INBOX_TABLE, OUTBOX_TABLE, and for
 * failure handling SOURCE_QUEUE_URL, DEAD_LETTER_QUEUE_URL, MAX_RECEIVE_COUNT (VISIBILITY_BACKOFF_BASE_SECONDS
 * and VISIBILITY_BACKOFF_MAX_SECONDS optional).
 */
export function consumerParts(env: Env): { plan: PlanEffect; deps: ConsumeDeps; failures: FailureHandling } {
  const clients = awsClientConfig(env);
  const client = createDocumentClient(clients);
  const clock = () => new Date();
  const plan = planStockReservation(requireSetting(env, 'INVENTORY_TABLE'), clock);
  const deps = {
    client,
    inboxTable: requireSetting(env, 'INBOX_TABLE'),
    confirmer: new DynamoOutboxStore({ client, tableName: requireSetting(env, 'OUTBOX_TABLE') }),
    clock,
  };
  const failures = {
    queues: new SqsQueueOperations(createSqsClient(clients)),
    sourceQueueUrl: requireSetting(env, 'SOURCE_QUEUE_URL'),
    deadLetterQueueUrl: requireSetting(env, 'DEAD_LETTER_QUEUE_URL'),
    maxReceiveCount: requireIntegerSetting(env, 'MAX_RECEIVE_COUNT'),
    backoff: {
      baseSeconds: integerSetting(
        env,
        'VISIBILITY_BACKOFF_BASE_SECONDS',
        DEFAULT_VISIBILITY_BACKOFF.baseSeconds,
        1,
      ),
      maxSeconds: integerSetting(
        env,
        'VISIBILITY_BACKOFF_MAX_SECONDS',
        DEFAULT_VISIBILITY_BACKOFF.maxSeconds,
        1,
      ),
    },
    random: Math.random,
  };
  return { plan, deps, failures };
}

/** Builds the inventory consumer from its environment (see {@link consumerParts}). */
export function createHandler(env: Env) {
  const { plan, deps, failures } = consumerParts(env);
  const logger = createLogger('inventory-consumer', env);
  return middy((event: SQSEvent, context: Context) =>
    consumeSqsBatch(event, context, plan, deps, logger, failures),
  ).use(injectLambdaContext(logger));
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
