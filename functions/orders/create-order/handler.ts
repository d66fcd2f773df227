import { ulid } from 'ulid';
import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients';
import { type Env, integerSetting, requireSetting } from '../../../shared/config/require-setting';
import { httpHandler } from '../../../shared/lambda/http-handler';
import { lazyHandler } from '../../../shared/lambda/lazy-handler';
import { DEFAULT_STREAM_GRACE_MS } from '../../../shared/outbox/outbox-item';
import { createOrder } from './create-order';

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
