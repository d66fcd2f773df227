import { describe, expect, it } from 'vitest';
import {
  planStockReservation,
  REJECTED_INVALID_ORDER,
  REJECTED_OUT_OF_STOCK,
} from '../../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import type { EffectPlan } from '../../../../shared/consumer/consume-message.ts';
import type { TransactWriteAction } from '../../../../shared/transaction/transaction-limits.ts';
import { envelope, FIXED_NOW } from '../../../support/factories.ts';

const plan = planStockReservation('inventory', () => FIXED_NOW);

function order(items: { sku: string; quantity: number }[]) {
  return envelope({
    payload: { orderId: 'order-1', customerId: 'customer-1', items, createdAt: FIXED_NOW.toISOString() },
  });
}

function appliedActions(result: EffectPlan): readonly TransactWriteAction[] {
  if (!('apply' in result)) throw new Error(`expected an effect, got ${JSON.stringify(result)}`);
  return result.apply;
}

describe('planStockReservation', () => {
  it('decrements each SKU with a condition that never lets stock go below zero', () => {
    const result = plan(order([{ sku: 'SKU-1', quantity: 3 }]));

    expect(result).toEqual({
      apply: [
        {
          Update: {
            TableName: 'inventory',
            Key: { sku: 'SKU-1' },
            UpdateExpression: 'SET #available = #available - :quantity, #updatedAt = :now',
            ConditionExpression: '#available >= :quantity',
            ExpressionAttributeNames: { '#available': 'available', '#updatedAt': 'updatedAt' },
            ExpressionAttributeValues: { ':quantity': 3, ':now': FIXED_NOW.toISOString() },
          },
        },
      ],
      onConditionFailure: REJECTED_OUT_OF_STOCK,
    });
  });

  it('sums the lines of the same SKU into one update (a transaction touches an item once)', () => {
    const actions = appliedActions(
      plan(
        order([
          { sku: 'SKU-1', quantity: 2 },
          { sku: 'SKU-2', quantity: 1 },
          { sku: 'SKU-1', quantity: 5 },
        ]),
      ),
    );

    expect(
      actions.map((a) => [a.Update?.Key?.sku, a.Update?.ExpressionAttributeValues?.[':quantity']]),
    ).toEqual([
      ['SKU-1', 7],
      ['SKU-2', 1],
    ]);
  });

  it('rejects a message of another topic as an invalid order', () => {
    expect(plan({ ...order([{ sku: 'SKU-1', quantity: 1 }]), topic: 'order.cancelled' })).toEqual({
      reject: REJECTED_INVALID_ORDER,
    });
  });

  it.each([
    ['no items', { orderId: 'o', customerId: 'c', items: [], createdAt: FIXED_NOW.toISOString() }],
    [
      'a zero quantity',
      {
        orderId: 'o',
        customerId: 'c',
        items: [{ sku: 'A', quantity: 0 }],
        createdAt: FIXED_NOW.toISOString(),
      },
    ],
    [
      'a bad creation time',
      { orderId: 'o', customerId: 'c', items: [{ sku: 'A', quantity: 1 }], createdAt: 'x' },
    ],
    [
      'a negative quantity',
      {
        orderId: 'o',
        customerId: 'c',
        items: [{ sku: 'A', quantity: -1 }],
        createdAt: FIXED_NOW.toISOString(),
      },
    ],
    ['no customer', { orderId: 'o', items: [{ sku: 'A', quantity: 1 }], createdAt: FIXED_NOW.toISOString() }],
    ['a string', 'order'],
    ['null', null],
  ])('rejects a payload with %s as an invalid order', (_, payload) => {
    expect(plan(envelope({ payload }))).toEqual({ reject: REJECTED_INVALID_ORDER });
  });
});
