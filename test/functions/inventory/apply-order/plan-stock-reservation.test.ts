import { describe, expect, it } from 'vitest';
import {
  planStockReservation,
  REJECTED_OUT_OF_STOCK,
} from '../../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import type { EffectPlan } from '../../../../shared/consumer/consume-message.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
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
  it("decrements each SKU with a condition that never lets stock go below zero, and puts the order's reservation", () => {
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
        {
          Put: {
            TableName: 'inventory',
            Item: {
              sku: 'reservation#order-1',
              orderId: 'order-1',
              lines: [{ sku: 'SKU-1', quantity: 3 }],
              reservedAt: FIXED_NOW.toISOString(),
            },
            ConditionExpression: 'attribute_not_exists(#sku)',
            ExpressionAttributeNames: { '#sku': 'sku' },
          },
        },
      ],
      onConditionFailure: REJECTED_OUT_OF_STOCK,
    });
  });

  it('keeps the summed lines on the reservation, so that they can be released as reserved', () => {
    const actions = appliedActions(
      plan(
        order([
          { sku: 'SKU-1', quantity: 2 },
          { sku: 'SKU-2', quantity: 1 },
          { sku: 'SKU-1', quantity: 5 },
        ]),
      ),
    );

    expect(actions.at(-1)?.Put?.Item?.lines).toEqual([
      { sku: 'SKU-1', quantity: 7 },
      { sku: 'SKU-2', quantity: 1 },
    ]);
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
      actions
        .filter((a) => a.Update !== undefined)
        .map((a) => [a.Update?.Key?.sku, a.Update?.ExpressionAttributeValues?.[':quantity']]),
    ).toEqual([
      ['SKU-1', 7],
      ['SKU-2', 1],
    ]);
  });

  it('reads a payload from a newer order service, ignoring fields it does not know (item 5)', () => {
    const newer = envelope({
      schemaVersion: 2,
      payload: {
        orderId: 'order-1',
        customerId: 'customer-1',
        giftWrap: true,
        items: [{ sku: 'SKU-1', quantity: 2, note: 'fragile' }],
        createdAt: FIXED_NOW.toISOString(),
      },
    });

    expect(appliedActions(plan(newer)).map((a) => a.Update?.Key?.sku ?? a.Put?.Item?.sku)).toEqual([
      'SKU-1',
      'reservation#order-1',
    ]);
  });

  it('needs only the order id and lines: customer and creation time may change shape', () => {
    const payload = { orderId: 'o', items: [{ sku: 'A', quantity: 1 }], createdAt: 'x' };

    expect(appliedActions(plan(envelope({ payload })))).toHaveLength(2);
  });

  it('treats a message of another topic as poison (dead-lettered with the reason, never recorded)', () => {
    expect(() => plan({ ...order([{ sku: 'SKU-1', quantity: 1 }]), topic: 'order.cancelled' })).toThrow(
      new PoisonMessageError('the inventory consumer reads order.created, not order.cancelled'),
    );
  });

  it.each([
    ['no items', { orderId: 'o', items: [] }, 'items'],
    ['a zero quantity', { orderId: 'o', items: [{ sku: 'A', quantity: 0 }] }, 'quantity'],
    ['a negative quantity', { orderId: 'o', items: [{ sku: 'A', quantity: -1 }] }, 'quantity'],
    ['a line without a SKU', { orderId: 'o', items: [{ quantity: 1 }] }, 'sku'],
    ['no order id', { items: [{ sku: 'A', quantity: 1 }] }, 'orderId'],
    [
      'a SKU that is a reservation key',
      { orderId: 'o', items: [{ sku: 'reservation#o2', quantity: 1 }] },
      'reservation#',
    ],
    [
      'an order id too long to key its reservation',
      { orderId: 'o'.repeat(2037), items: [{ sku: 'A', quantity: 1 }] },
      'orderId',
    ],
    ['a string', 'order', 'object'],
    ['null', null, 'object'],
  ])('treats a payload with %s as poison, naming what is wrong', (_, payload, problem) => {
    let error: unknown;
    try {
      plan(envelope({ payload }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PoisonMessageError);
    expect(String(error)).toContain(problem);
  });
});
