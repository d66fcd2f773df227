import { requireEnv } from 'serverless-outbox';
import { outboxWriterFromEnv } from 'serverless-outbox/lambda';
import { ulid } from 'ulid';
import { httpHandler } from '../../http/http-handler.ts';
import { createOrder } from './create-order.ts';

/** `POST /orders`: ORDERS_TABLE, and the outbox writer's settings that `outbox.bindWriter` sets. */
export const handler = httpHandler('create-order', (env) => {
  const writer = outboxWriterFromEnv(env);
  const deps = {
    writer,
    ordersTable: requireEnv(env, 'ORDERS_TABLE'),
    clock: () => new Date(),
    newOrderId: () => ulid(),
  };
  return (event) => createOrder(event, deps);
});
