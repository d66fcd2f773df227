import { type PlanEffect, PoisonMessageError } from 'serverless-outbox';
import { ORDER_CREATED } from '../../orders/order.ts';
import { awardKeyOf, LOYALTY_TABLE_KEY, pointsKeyOf } from '../loyalty-table.ts';
import { orderPointsOf } from './order-points.ts';

/** Outcome recorded when an order's points went to its customer. */
export const AWARDED = 'AWARDED';

/** Outcome recorded when the order had already awarded its points (another message for it): nothing moves. */
export const ALREADY_AWARDED = 'ALREADY_AWARDED';

/**
 * Plans the loyalty effect of an `order.created` message: the order's award row (what it awards, to whom) and the
 * points added to its customer's balance (the row created at 0 for a customer seen for the first time), all or
 * nothing. Whatever the inventory decides for the order: the services are independent. An order awards once: a
 * second `order.created` of one order (another message id) finds its award row, moves nothing and is recorded
 * as {@link ALREADY_AWARDED}. A message this service cannot read is poison: dead-lettered with the reason.
 */
export function planAward(loyaltyTable: string, clock: () => Date): PlanEffect {
  return (message) => {
    if (message.topic !== ORDER_CREATED) {
      throw new PoisonMessageError(`the points award reads ${ORDER_CREATED}, not ${message.topic}`);
    }
    const { orderId, customerId, points } = orderPointsOf(message);
    const now = clock().toISOString();
    return {
      apply: [
        {
          Put: {
            TableName: loyaltyTable,
            Item: { ...awardKeyOf(orderId), orderId, customerId, points, awardedAt: now },
            // An order awards once, and its row stays after a revocation: no second award, ever.
            ConditionExpression: 'attribute_not_exists(#key)',
            ExpressionAttributeNames: { '#key': LOYALTY_TABLE_KEY },
          },
        },
        {
          Update: {
            TableName: loyaltyTable,
            Key: pointsKeyOf(customerId),
            // An addition, not a value read earlier and written back: concurrent awards to one customer add up.
            UpdateExpression:
              'SET #points = if_not_exists(#points, :zero) + :points, #customerId = :customerId, #updatedAt = :now',
            ExpressionAttributeNames: {
              '#points': 'points',
              '#customerId': 'customerId',
              '#updatedAt': 'updatedAt',
            },
            ExpressionAttributeValues: {
              ':points': points,
              ':zero': 0,
              ':customerId': customerId,
              ':now': now,
            },
          },
        },
      ],
      outcome: AWARDED,
      onConditionFailure: ALREADY_AWARDED,
    };
  };
}
