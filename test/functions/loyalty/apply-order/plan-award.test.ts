import { describe, expect, it } from 'vitest';
import { ALREADY_AWARDED, AWARDED, planAward } from '../../../../functions/loyalty/apply-order/plan-award.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
import { envelope, FIXED_NOW } from '../../../support/factories.ts';

const plan = planAward('loyalty', () => FIXED_NOW);

function order(payload: unknown) {
  return envelope({ payload });
}

describe('planAward', () => {
  it("puts the order's award row, once, and adds 10 points per unit to its customer's balance", () => {
    const message = order({
      orderId: 'order-1',
      customerId: 'c-1',
      items: [
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-2', quantity: 3 },
      ],
    });

    expect(plan(message)).toEqual({
      apply: [
        {
          Put: {
            TableName: 'loyalty',
            Item: {
              pk: 'award#order-1',
              orderId: 'order-1',
              customerId: 'c-1',
              points: 50,
              awardedAt: FIXED_NOW.toISOString(),
            },
            ConditionExpression: 'attribute_not_exists(#key)',
            ExpressionAttributeNames: { '#key': 'pk' },
          },
        },
        {
          Update: {
            TableName: 'loyalty',
            Key: { pk: 'customer#c-1' },
            UpdateExpression:
              'SET #points = if_not_exists(#points, :zero) + :points, #customerId = :customerId, #updatedAt = :now',
            ExpressionAttributeNames: {
              '#points': 'points',
              '#customerId': 'customerId',
              '#updatedAt': 'updatedAt',
            },
            ExpressionAttributeValues: {
              ':points': 50,
              ':zero': 0,
              ':customerId': 'c-1',
              ':now': FIXED_NOW.toISOString(),
            },
          },
        },
      ],
      outcome: AWARDED,
      // The order has its award row already (another message for it): nothing moves.
      onConditionFailure: ALREADY_AWARDED,
    });
  });

  it('reads the payload tolerantly: fields it does not know, and the SKUs, are ignored', () => {
    const result = plan(
      order({ orderId: 'o', customerId: 'c', items: [{ quantity: 1, gift: true }], channel: 'web' }),
    );

    expect(result).toMatchObject({ apply: [{ Put: { Item: { points: 10 } } }, {}] });
  });

  it('treats a message of another topic as poison', () => {
    expect(() => plan(envelope({ topic: 'order.cancelled' }))).toThrow(
      new PoisonMessageError('the points award reads order.created, not order.cancelled'),
    );
  });

  it.each([
    ['no customer', { orderId: 'o', items: [{ quantity: 1 }] }, 'customerId'],
    ['an empty customer id', { orderId: 'o', customerId: '', items: [{ quantity: 1 }] }, 'customerId'],
    ['no order id', { customerId: 'c', items: [{ quantity: 1 }] }, 'orderId'],
    ['no items', { orderId: 'o', customerId: 'c', items: [] }, 'items'],
    ['a fractional quantity', { orderId: 'o', customerId: 'c', items: [{ quantity: 1.5 }] }, 'quantity'],
    ['a quantity of zero', { orderId: 'o', customerId: 'c', items: [{ quantity: 0 }] }, 'quantity'],
    ['a quantity given as text', { orderId: 'o', customerId: 'c', items: [{ quantity: '2' }] }, 'quantity'],
    [
      'a customer id too long to key a row (2048 bytes with its prefix)',
      { orderId: 'o', customerId: 'é'.repeat(1_020), items: [{ quantity: 1 }] },
      '2039 bytes',
    ],
    [
      'an order id too long to key a row',
      { orderId: 'o'.repeat(2_043), customerId: 'c', items: [{ quantity: 1 }] },
      '2042 bytes',
    ],
  ])('treats a payload with %s as poison, naming what is wrong', (_, payload, problem) => {
    expect(() => plan(order(payload))).toThrow(PoisonMessageError);
    expect(() => plan(order(payload))).toThrow(problem);
  });

  it('still reads ids of exactly the longest length a row key allows', () => {
    const payload = { orderId: 'o'.repeat(2_042), customerId: 'c'.repeat(2_039), items: [{ quantity: 1 }] };

    expect(plan(order(payload))).toHaveProperty('apply');
  });

  it('refuses points past the safe integer range as poison, rather than moving the balance wrongly', () => {
    const most = Math.floor(Number.MAX_SAFE_INTEGER / 10);

    expect(plan(order({ orderId: 'o', customerId: 'c', items: [{ quantity: most }] }))).toHaveProperty(
      'apply',
    );
    expect(() => plan(order({ orderId: 'o', customerId: 'c', items: [{ quantity: most + 1 }] }))).toThrow(
      /safe integer range/,
    );
  });
});
