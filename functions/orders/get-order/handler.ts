import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients';
import { type Env, requireSetting } from '../../../shared/config/require-setting';
import { httpHandler } from '../../../shared/lambda/http-handler';
import { lazyHandler } from '../../../shared/lambda/lazy-handler';
import { getOrder } from './get-order';

/** Builds the `GET /orders/{orderId}` handler from its environment (ORDERS_TABLE, OUTBOX_TABLE). */
export function createHandler(env: Env) {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    ordersTable: requireSetting(env, 'ORDERS_TABLE'),
    outboxTable: requireSetting(env, 'OUTBOX_TABLE'),
  };
  return httpHandler('get-order', env, (event) => getOrder(event, deps));
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
