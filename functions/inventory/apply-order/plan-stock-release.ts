import { type PlanEffect, PoisonMessageError } from 'serverless-outbox';
import { ORDER_CANCELLED } from '../../orders/order.ts';
import { reservationKeyOf } from '../reservation.ts';
import { orderLinesOf } from './order-lines.ts';

/** Outcome recorded when a cancelled order's stock went back: its reservation is gone. */
export const RELEASED = 'RELEASED';

/** Outcome recorded when a cancelled order had reserved nothing (rejected for stock): nothing changes. */
export const NOTHING_TO_RELEASE = 'NOTHING_TO_RELEASE';

/**
 * Plans the stock effect of an `order.cancelled` message: delete the order's reservation row (it must be
 * there) and add each line's quantity back to its SKU, all or nothing. An order that reserved nothing,
 * because it was rejected for stock, has no reservation row: nothing is released and that is recorded. A
 * message this service cannot read is poison, as for `order.created`.
 */
export function planStockRelease(inventoryTable: string, clock: () => Date): PlanEffect {
  return (message) => {
    if (message.topic !== ORDER_CANCELLED) {
      throw new PoisonMessageError(`the stock release reads ${ORDER_CANCELLED}, not ${message.topic}`);
    }
    const { orderId, quantities } = orderLinesOf(message);
    const now = clock().toISOString();
    return {
      apply: [
        ...[...quantities].map(([sku, quantity]) => ({
          Update: {
            TableName: inventoryTable,
            Key: { sku },
            UpdateExpression:
              'SET #available = if_not_exists(#available, :zero) + :quantity, #updatedAt = :now',
            ExpressionAttributeNames: { '#available': 'available', '#updatedAt': 'updatedAt' },
            // A SKU the order named but nobody ever stocked has no row: the release must still be readable, and
            // when the reservation is absent the whole transaction is cancelled, so no such row is created.
            ExpressionAttributeValues: { ':quantity': quantity, ':zero': 0, ':now': now },
          },
        })),
        {
          Delete: {
            TableName: inventoryTable,
            Key: { sku: reservationKeyOf(orderId) },
            // The order's reservation: without it, the order reserved nothing and nothing goes back.
            ConditionExpression: 'attribute_exists(#sku)',
            ExpressionAttributeNames: { '#sku': 'sku' },
          },
        },
      ],
      outcome: RELEASED,
      onConditionFailure: NOTHING_TO_RELEASE,
    };
  };
}
