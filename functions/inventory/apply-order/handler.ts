import { requireEnv } from 'serverless-outbox';
import { createConsumerHandler } from 'serverless-outbox/lambda';
import { planStockReservation } from './plan-stock-reservation.ts';
import { stockConflictKeys } from './stock-conflict-keys.ts';

/**
 * The inventory consumer: `order.created` → stock, once per order; orders for different SKUs apply at once.
 * INVENTORY_TABLE, plus what `addConsumer` sets.
 */
export const handler = createConsumerHandler({
  serviceName: 'inventory-consumer',
  plan: (env) => planStockReservation(requireEnv(env, 'INVENTORY_TABLE'), () => new Date()),
  conflictKeys: stockConflictKeys,
});
