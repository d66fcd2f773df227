import { awsClientConfig, createDocumentClient, requireEnv } from 'serverless-outbox';
import { httpHandler } from '../../http/http-handler.ts';
import { putStock } from '../stock.ts';

/** `PUT /inventory/{sku}`: INVENTORY_TABLE. */
export const handler = httpHandler('put-stock', (env) => {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    inventoryTable: requireEnv(env, 'INVENTORY_TABLE'),
    clock: () => new Date(),
  };
  return (event) => putStock(event, deps);
});
