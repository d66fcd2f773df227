import { type PlanEffect, PoisonMessageError } from 'serverless-outbox';
import { prettifyError, safeParse } from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { ORDER_CREATED } from '../../orders/order.ts';
import { orderCreatedSchema } from './order-created.ts';

/** English messages for issues whose schema gives none: `zod/mini` loads no locale of its own. */
const ENGLISH = { error: en().localeError } as const;

/** Outcome recorded when an order asks for more than is available: nothing is decremented. */
export const REJECTED_OUT_OF_STOCK = 'REJECTED_OUT_OF_STOCK';

/**
 * Plans the stock effect of an `order.created` message: one conditional decrement per SKU (lines of the
 * same SKU summed, since a transaction may touch each item once), all or nothing. A SKU without enough
 * stock, or unknown, fails its condition and the order is recorded as out of stock. A message this service
 * cannot read (another topic, no order lines) is poison: dead-lettered with the reason, never recorded.
 */
export function planStockReservation(inventoryTable: string, clock: () => Date): PlanEffect {
  return (message) => {
    if (message.topic !== ORDER_CREATED) {
      throw new PoisonMessageError(`the inventory consumer reads ${ORDER_CREATED}, not ${message.topic}`);
    }
    const order = safeParse(orderCreatedSchema, message.payload, ENGLISH);
    if (!order.success) {
      throw new PoisonMessageError(`unreadable ${ORDER_CREATED} payload: ${prettifyError(order.error)}`);
    }

    const quantities = new Map<string, number>();
    for (const { sku, quantity } of order.data.items)
      quantities.set(sku, (quantities.get(sku) ?? 0) + quantity);
    for (const [sku, quantity] of quantities) {
      // Lines of one SKU may add up past what a number holds exactly; the stock would be decremented wrongly.
      if (!Number.isSafeInteger(quantity)) {
        throw new PoisonMessageError(
          `the quantities of ${sku} add up to ${quantity}, past the safe integer range`,
        );
      }
    }
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
