import {
  awsClientConfig,
  createDocumentClient,
  OutboxSettings,
  readSetting,
  requireEnv,
} from 'serverless-outbox';
import { httpHandler } from '../../http/http-handler.ts';
import { getOrder } from './get-order.ts';

/** `GET /orders/{orderId}`: ORDERS_TABLE and OUTBOX_TABLE. */
export const handler = httpHandler('get-order', (env) => {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    ordersTable: requireEnv(env, 'ORDERS_TABLE'),
    outboxTable: readSetting(env, OutboxSettings.outboxTable),
  };
  return (event) => getOrder(event, deps);
});
