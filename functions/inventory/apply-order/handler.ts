import { requireEnv } from 'serverless-outbox';
import { createConsumerHandler } from 'serverless-outbox/lambda';
import { planInventory } from './plan-inventory.ts';
import { stockConflictKeys } from './stock-conflict-keys.ts';

/**
 * The inventory consumer: `order.created` reserves stock, `order.cancelled` releases it, each once and in
 * the order's sequence; orders for different SKUs apply at once. INVENTORY_TABLE, plus `addConsumer`'s.
 */
export const handler = createConsumerHandler({
  serviceName: 'inventory-consumer',
  plan: (env) => planInventory(requireEnv(env, 'INVENTORY_TABLE'), () => new Date()),
  conflictKeys: stockConflictKeys,
});
