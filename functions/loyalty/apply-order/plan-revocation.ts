import { type PlanEffect, PoisonMessageError, type TransactWriteAction } from 'serverless-outbox';
import { ORDER_CANCELLED } from '../../orders/order.ts';
import { awardKeyOf, pointsKeyOf } from '../loyalty-table.ts';
import { orderPointsOf } from './order-points.ts';

/** Outcome recorded when a cancelled order's points were taken back from its customer. */
export const REVOKED = 'REVOKED';

/**
 * Outcome recorded when a cancelled order has nothing to take back: it awarded nothing (never seen here), or its
 * points were revoked already. No balance changes.
 */
export const NOTHING_TO_REVOKE = 'NOTHING_TO_REVOKE';

/**
 * Plans the loyalty effect of an `order.cancelled` message: mark the order's award row revoked and take exactly
 * what it awarded from its customer's balance, all or nothing. The cancellation names the customer and carries the
 * order's lines, so the plan knows what the order earned without a read; the award row must say the order awarded
 * exactly that to that customer, and not be revoked yet. An order never seen here, or revoked already, fails that
 * condition: nothing moves and {@link NOTHING_TO_REVOKE} is recorded. A message this service cannot read (no
 * customer, which an order service older than loyalty points leaves out) is poison.
 */
export function planRevocation(loyaltyTable: string, clock: () => Date): PlanEffect {
  return (message) => {
    if (message.topic !== ORDER_CANCELLED) {
      throw new PoisonMessageError(`the points revocation reads ${ORDER_CANCELLED}, not ${message.topic}`);
    }
    const { orderId, customerId, points } = orderPointsOf(message);
    const now = clock().toISOString();
    const apply: TransactWriteAction[] = [
      {
        Update: {
          TableName: loyaltyTable,
          Key: awardKeyOf(orderId),
          UpdateExpression: 'SET #revokedAt = :now',
          // What this order awarded, to this customer, not taken back yet; false for an order never awarded
          // (no row, so no customer), so a revocation never takes more, or from anyone else, or twice.
          ConditionExpression:
            '#customerId = :customerId AND #points = :points AND attribute_not_exists(#revokedAt)',
          ExpressionAttributeNames: {
            '#customerId': 'customerId',
            '#points': 'points',
            '#revokedAt': 'revokedAt',
          },
          ExpressionAttributeValues: { ':customerId': customerId, ':points': points, ':now': now },
        },
      },
      {
        Update: {
          TableName: loyaltyTable,
          Key: pointsKeyOf(customerId),
          UpdateExpression: 'SET #points = #points - :points, #updatedAt = :now',
          // Never below zero, whatever else has moved the balance since the award.
          ConditionExpression: '#points >= :points',
          ExpressionAttributeNames: { '#points': 'points', '#updatedAt': 'updatedAt' },
          ExpressionAttributeValues: { ':points': points, ':now': now },
        },
      },
    ];
    return { apply, outcome: REVOKED, onConditionFailure: NOTHING_TO_REVOKE };
  };
}
