import { ulid } from 'ulid';
import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients.ts';
import { type Env, integerSetting, requireSetting } from '../../../shared/config/require-setting.ts';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';
import { DEFAULT_STREAM_GRACE_MS } from '../../../shared/outbox/outbox-item.ts';
import { httpHandler } from '../../http/http-handler.ts';
import { createOrder } from './create-order.ts';

/** Builds the `POST /orders` handler from its environment (ORDERS_TABLE, OUTBOX_TABLE, STREAM_GRACE_MS?). */
export function createHandler(env: Env) {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    ordersTable: requireSetting(env, 'ORDERS_TABLE'),
    outboxTable: requireSetting(env, 'OUTBOX_TABLE'),
    clock: () => new Date(),
    newOrderId: () => ulid(),
    streamGraceMs: integerSetting(env, 'STREAM_GRACE_MS', DEFAULT_STREAM_GRACE_MS),
  };
  return httpHandler('create-order', env, (event) => createOrder(event, deps));
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
