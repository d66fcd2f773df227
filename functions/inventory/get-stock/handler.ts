import { awsClientConfig, createDocumentClient, requireEnv } from 'serverless-outbox';
import { httpHandler } from '../../http/http-handler.ts';
import { getStock } from '../stock.ts';

/** `GET /inventory/{sku}`: INVENTORY_TABLE. */
export const handler = httpHandler('get-stock', (env) => {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    inventoryTable: requireEnv(env, 'INVENTORY_TABLE'),
  };
  return (event) => getStock(event, deps);
});
