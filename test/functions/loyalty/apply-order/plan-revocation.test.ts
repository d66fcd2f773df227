import { describe, expect, it } from 'vitest';
import {
  NOTHING_TO_REVOKE,
  planRevocation,
  REVOKED,
} from '../../../../functions/loyalty/apply-order/plan-revocation.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
import { envelope, FIXED_NOW } from '../../../support/factories.ts';

const plan = planRevocation('loyalty', () => FIXED_NOW);

function cancellation(payload: unknown) {
  return envelope({ topic: 'order.cancelled', payload });
}

describe('planRevocation', () => {
  it("marks the order's award revoked, if it awarded exactly this to this customer, and takes the points back", () => {
    const message = cancellation({
      orderId: 'order-1',
      customerId: 'c-1',
      items: [
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-1', quantity: 1 },
      ],
    });

    expect(plan(message)).toEqual({
      apply: [
        {
          Update: {
            TableName: 'loyalty',
            Key: { pk: 'award#order-1' },
            UpdateExpression: 'SET #revokedAt = :now',
            ConditionExpression:
              '#customerId = :customerId AND #points = :points AND attribute_not_exists(#revokedAt)',
            ExpressionAttributeNames: {
              '#customerId': 'customerId',
              '#points': 'points',
              '#revokedAt': 'revokedAt',
            },
            ExpressionAttributeValues: {
              ':customerId': 'c-1',
              ':points': 30,
              ':now': FIXED_NOW.toISOString(),
            },
          },
        },
        {
          Update: {
            TableName: 'loyalty',
            Key: { pk: 'customer#c-1' },
            UpdateExpression: 'SET #points = #points - :points, #updatedAt = :now',
            ConditionExpression: '#points >= :points',
            ExpressionAttributeNames: { '#points': 'points', '#updatedAt': 'updatedAt' },
            ExpressionAttributeValues: { ':points': 30, ':now': FIXED_NOW.toISOString() },
          },
        },
      ],
      outcome: REVOKED,
      // Never awarded, or revoked already: the award row's condition fails and nothing moves.
      onConditionFailure: NOTHING_TO_REVOKE,
    });
  });

  it('treats a message of another topic as poison', () => {
    expect(() => plan(envelope())).toThrow(
      new PoisonMessageError('the points revocation reads order.cancelled, not order.created'),
    );
  });

  it('treats a cancellation without a customer (an order service older than loyalty points) as poison', () => {
    const message = cancellation({ orderId: 'order-1', items: [{ sku: 'SKU-1', quantity: 1 }] });

    expect(() => plan(message)).toThrow(PoisonMessageError);
    expect(() => plan(message)).toThrow('customerId');
  });

  it('treats a cancellation without readable lines as poison', () => {
    expect(() => plan(cancellation({ orderId: 'order-1', customerId: 'c-1', items: [] }))).toThrow(
      PoisonMessageError,
    );
  });
});
