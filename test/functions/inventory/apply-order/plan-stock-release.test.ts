import { describe, expect, it } from 'vitest';
import {
  NOTHING_TO_RELEASE,
  planStockRelease,
  RELEASED,
} from '../../../../functions/inventory/apply-order/plan-stock-release.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
import { envelope, FIXED_NOW } from '../../../support/factories.ts';

const plan = planStockRelease('inventory', () => FIXED_NOW);

function cancellation(items: { sku: string; quantity: number }[]) {
  return envelope({ topic: 'order.cancelled', payload: { orderId: 'order-1', items } });
}

describe('planStockRelease', () => {
  it("adds each SKU's quantity back and deletes the order's reservation, which must be there", () => {
    expect(plan(cancellation([{ sku: 'SKU-1', quantity: 3 }]))).toEqual({
      apply: [
        {
          Update: {
            TableName: 'inventory',
            Key: { sku: 'SKU-1' },
            UpdateExpression:
              'SET #available = if_not_exists(#available, :zero) + :quantity, #updatedAt = :now',
            ExpressionAttributeNames: { '#available': 'available', '#updatedAt': 'updatedAt' },
            ExpressionAttributeValues: { ':quantity': 3, ':zero': 0, ':now': FIXED_NOW.toISOString() },
          },
        },
        {
          Delete: {
            TableName: 'inventory',
            Key: { sku: 'reservation#order-1' },
            ConditionExpression: 'attribute_exists(#sku)',
            ExpressionAttributeNames: { '#sku': 'sku' },
          },
        },
      ],
      outcome: RELEASED,
      // An order rejected for stock reserved nothing: its reservation is absent and nothing is released.
      onConditionFailure: NOTHING_TO_RELEASE,
    });
  });

  it('sums the lines of one SKU into one update, as the reservation did', () => {
    const result = plan(
      cancellation([
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-2', quantity: 1 },
        { sku: 'SKU-1', quantity: 5 },
      ]),
    );

    if (!('apply' in result)) throw new Error('expected an effect');
    expect(
      result.apply
        .filter((action) => action.Update !== undefined)
        .map((action) => [action.Update?.Key?.sku, action.Update?.ExpressionAttributeValues?.[':quantity']]),
    ).toEqual([
      ['SKU-1', 7],
      ['SKU-2', 1],
    ]);
  });

  it('treats a message of another topic as poison', () => {
    expect(() => plan(envelope())).toThrow(
      new PoisonMessageError('the stock release reads order.cancelled, not order.created'),
    );
  });

  it.each([
    ['no items', { orderId: 'o', items: [] }, 'items'],
    ['no order id', { items: [{ sku: 'A', quantity: 1 }] }, 'orderId'],
    [
      'a SKU that is a reservation key',
      { orderId: 'o', items: [{ sku: 'reservation#o', quantity: 1 }] },
      'reservation#',
    ],
  ])('treats a payload with %s as poison, naming what is wrong', (_, payload, problem) => {
    expect(() => plan(envelope({ topic: 'order.cancelled', payload }))).toThrow(PoisonMessageError);
    expect(() => plan(envelope({ topic: 'order.cancelled', payload }))).toThrow(problem);
  });
});
