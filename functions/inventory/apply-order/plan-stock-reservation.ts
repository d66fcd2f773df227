import type { PlanEffect } from 'serverless-outbox';
import { ORDER_CREATED, orderSchema } from '../../orders/order.ts';

/** Outcome recorded when an order asks for more than is available: nothing is decremented. */
export const REJECTED_OUT_OF_STOCK = 'REJECTED_OUT_OF_STOCK';

/** Outcome recorded for a message this consumer cannot apply (wrong topic or unreadable order). */
export const REJECTED_INVALID_ORDER = 'REJECTED_INVALID_ORDER';

/**
 * Plans the stock effect of an `order.created` message: one conditional decrement per SKU (lines of the
 * same SKU summed, since a transaction may touch each item once), all or nothing. A SKU without enough
 * stock, or unknown, fails its condition and the order is rejected as out of stock.
 */
export function planStockReservation(inventoryTable: string, clock: () => Date): PlanEffect {
  return (message) => {
    if (message.topic !== ORDER_CREATED) return { reject: REJECTED_INVALID_ORDER };
    const order = orderSchema.safeParse(message.payload);
    if (!order.success) return { reject: REJECTED_INVALID_ORDER };

    const quantities = new Map<string, number>();
    for (const { sku, quantity } of order.data.items)
      quantities.set(sku, (quantities.get(sku) ?? 0) + quantity);
    const now = clock().toISOString();
    return {
      apply: [...quantities].map(([sku, quantity]) => ({
        Update: {
          TableName: inventoryTable,
          Key: { sku },
          UpdateExpression: 'SET #available = #available - :quantity, #updatedAt = :now',
          // Never below zero; also false for an unknown SKU, whose item has no `available`.
          ConditionExpression: '#available >= :quantity',
          ExpressionAttributeNames: { '#available': 'available', '#updatedAt': 'updatedAt' },
          ExpressionAttributeValues: { ':quantity': quantity, ':now': now },
        },
      })),
      onConditionFailure: REJECTED_OUT_OF_STOCK,
    };
  };
}
