import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSEvent } from 'aws-lambda';
import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients';
import { type Env, requireSetting } from '../../../shared/config/require-setting';
import { consumeSqsBatch } from '../../../shared/consumer/sqs-consumer';
import { createLogger } from '../../../shared/lambda/create-logger';
import { lazyHandler } from '../../../shared/lambda/lazy-handler';
import { DynamoOutboxStore } from '../../../shared/outbox/outbox-store';
import { planStockReservation } from './plan-stock-reservation';

/** Builds the inventory consumer from its environment (INVENTORY_TABLE, INBOX_TABLE, OUTBOX_TABLE). */
export function createHandler(env: Env) {
  const client = createDocumentClient(awsClientConfig(env));
  const clock = () => new Date();
  const plan = planStockReservation(requireSetting(env, 'INVENTORY_TABLE'), clock);
  const deps = {
    client,
    inboxTable: requireSetting(env, 'INBOX_TABLE'),
    confirmer: new DynamoOutboxStore({ client, tableName: requireSetting(env, 'OUTBOX_TABLE') }),
    clock,
  };
  const logger = createLogger('inventory-consumer', env);
  return middy((event: SQSEvent, context: Context) =>
    consumeSqsBatch(event, context, plan, deps, logger),
  ).use(injectLambdaContext(logger));
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
