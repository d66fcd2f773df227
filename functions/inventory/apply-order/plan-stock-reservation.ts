import { type PlanEffect, PoisonMessageError } from 'serverless-outbox';
import { ORDER_CREATED } from '../../orders/order.ts';
import { reservationKeyOf } from '../reservation.ts';
import { orderLinesOf } from './order-lines.ts';

/** Outcome recorded when an order asks for more than is available: nothing is decremented. */
export const REJECTED_OUT_OF_STOCK = 'REJECTED_OUT_OF_STOCK';

/**
 * Plans the stock effect of an `order.created` message: one conditional decrement per SKU (lines of the same
 * SKU summed, since a transaction may touch each item once), and the order's reservation row (its lines,
 * which a cancellation releases), all or nothing. A SKU without enough stock, or unknown, fails its condition
 * and the order is recorded as out of stock, with no reservation. A message this service cannot read (another
 * topic, no order lines) is poison: dead-lettered with the reason, never recorded.
 */
export function planStockReservation(inventoryTable: string, clock: () => Date): PlanEffect {
  return (message) => {
    if (message.topic !== ORDER_CREATED) {
      throw new PoisonMessageError(`the inventory consumer reads ${ORDER_CREATED}, not ${message.topic}`);
    }
    const { orderId, quantities } = orderLinesOf(message);
    const now = clock().toISOString();
    return {
      apply: [
        ...[...quantities].map(([sku, quantity]) => ({
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
        {
          Put: {
            TableName: inventoryTable,
            Item: {
              sku: reservationKeyOf(orderId),
              orderId,
              lines: [...quantities].map(([sku, quantity]) => ({ sku, quantity })),
              reservedAt: now,
            },
            // An order reserves once: another message for an order already reserved (a different message id)
            // fails here, moves no stock, and is recorded with the out-of-stock outcome.
            ConditionExpression: 'attribute_not_exists(#sku)',
            ExpressionAttributeNames: { '#sku': 'sku' },
          },
        },
      ],
      onConditionFailure: REJECTED_OUT_OF_STOCK,
    };
  };
}
