import { describe, expect, it } from 'vitest';
import { planStockReservation } from '../../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
import { envelope, FIXED_NOW } from '../../../support/factories.ts';

/**
 * Orders the fuzz suite (test/fuzz) found applied although DynamoDB could never store them: they must be
 * poison (dead-lettered at once with the reason), not retried until their receives run out.
 */

const plan = planStockReservation('inventory', () => FIXED_NOW);

function order(items: readonly { sku: string; quantity: number }[]) {
  return envelope({ payload: { orderId: 'order-0', customerId: 'c-1', items } });
}

describe('planStockReservation, orders that cannot be stored', () => {
  it('refuses a SKU longer than a DynamoDB partition key (2048 bytes) as poison', () => {
    expect(() => plan(order([{ sku: 'S'.repeat(3_000), quantity: 1 }]))).toThrow(PoisonMessageError);
    expect(() => plan(order([{ sku: 'é'.repeat(1_025), quantity: 1 }]))).toThrow(/2048 bytes/);
  });

  it('still reads a SKU of exactly 2048 bytes', () => {
    expect(plan(order([{ sku: 'S'.repeat(2_048), quantity: 1 }]))).toHaveProperty('apply');
  });

  it('refuses a quantity past the safe integer range as poison', () => {
    expect(() => plan(order([{ sku: 'SKU-1', quantity: 1e308 }]))).toThrow(PoisonMessageError);
  });

  it('refuses lines of one SKU that add up past the safe integer range as poison', () => {
    const half = Math.ceil(Number.MAX_SAFE_INTEGER / 2) + 1;

    expect(() =>
      plan(
        order([
          { sku: 'SKU-1', quantity: half },
          { sku: 'SKU-1', quantity: half },
        ]),
      ),
    ).toThrow(/SKU-1.*safe integer/);
  });
});
