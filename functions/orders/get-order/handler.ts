import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients.ts';
import { type Env, requireSetting } from '../../../shared/config/require-setting.ts';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';
import { httpHandler } from '../../http/http-handler.ts';
import { getOrder } from './get-order.ts';

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
