import { type PlanEffect, PoisonMessageError } from 'serverless-outbox';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../orders/order.ts';
import { planStockRelease } from './plan-stock-release.ts';
import { planStockReservation } from './plan-stock-reservation.ts';

/**
 * The inventory consumer's plan, by topic: `order.created` reserves stock (see `planStockReservation`),
 * `order.cancelled` releases it (see `planStockRelease`). Any other topic is poison.
 * @example
 * createConsumerHandler({ plan: (env) => planInventory(requireEnv(env, 'INVENTORY_TABLE'), () => new Date())
 * });
 */
export function planInventory(inventoryTable: string, clock: () => Date): PlanEffect {
  const byTopic: Readonly<Record<string, PlanEffect>> = {
    [ORDER_CREATED]: planStockReservation(inventoryTable, clock),
    [ORDER_CANCELLED]: planStockRelease(inventoryTable, clock),
  };
  return (message) => {
    const plan = Object.hasOwn(byTopic, message.topic) ? byTopic[message.topic] : undefined;
    if (plan === undefined) {
      throw new PoisonMessageError(
        `the inventory consumer reads ${ORDER_CREATED} and ${ORDER_CANCELLED}, not ${message.topic}`,
      );
    }
    return plan(message);
  };
}
