import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients.ts';
import { type Env, requireSetting } from '../../../shared/config/require-setting.ts';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';
import { httpHandler } from '../../http/http-handler.ts';
import { getStock } from '../stock.ts';

/** Builds the `GET /inventory/{sku}` handler from its environment (INVENTORY_TABLE). */
export function createHandler(env: Env) {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    inventoryTable: requireSetting(env, 'INVENTORY_TABLE'),
    clock: () => new Date(),
  };
  return httpHandler('get-stock', env, (event) => getStock(event, deps));
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
