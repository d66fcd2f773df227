import { awsClientConfig, createDocumentClient } from '../../../shared/aws/clients';
import { type Env, requireSetting } from '../../../shared/config/require-setting';
import { httpHandler } from '../../../shared/lambda/http-handler';
import { lazyHandler } from '../../../shared/lambda/lazy-handler';
import { putStock } from '../stock';

/** Builds the `PUT /inventory/{sku}` handler from its environment (INVENTORY_TABLE). */
export function createHandler(env: Env) {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    inventoryTable: requireSetting(env, 'INVENTORY_TABLE'),
    clock: () => new Date(),
  };
  return httpHandler('put-stock', env, (event) => putStock(event, deps));
}

/** Lambda entry point. */
export const handler = lazyHandler(() => createHandler(process.env));
