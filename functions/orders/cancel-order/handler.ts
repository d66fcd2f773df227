import { requireEnv } from 'serverless-outbox';
import { outboxWriterFromEnv } from 'serverless-outbox/lambda';
import { httpHandler } from '../../http/http-handler.ts';
import { cancelOrder } from './cancel-order.ts';

/** `POST /orders/{orderId}/cancel`: ORDERS_TABLE, and the writer's settings `outbox.bindWriter` sets. */
export const handler = httpHandler('cancel-order', (env) => {
  const deps = {
    writer: outboxWriterFromEnv(env),
    ordersTable: requireEnv(env, 'ORDERS_TABLE'),
    clock: () => new Date(),
  };
  return (event) => cancelOrder(event, deps);
});
