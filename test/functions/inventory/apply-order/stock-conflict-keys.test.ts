import { describe, expect, it } from 'vitest';
import { stockConflictKeys } from '../../../../functions/inventory/apply-order/stock-conflict-keys.ts';
import { envelope, testMessageId } from '../../../support/factories.ts';

describe('stockConflictKeys', () => {
  it('gives one key per SKU of the order, a SKU on several lines once', () => {
    const message = envelope({
      payload: {
        orderId: 'order-1',
        items: [
          { sku: 'SKU-1', quantity: 1 },
          { sku: 'SKU-2', quantity: 2 },
          { sku: 'SKU-1', quantity: 3 },
        ],
      },
    });

    expect(stockConflictKeys(message)).toEqual(['sku:SKU-1', 'sku:SKU-2']);
  });

  it('gives two orders for one SKU the same key and orders for other SKUs different ones', () => {
    const order = (n: number, sku: string) =>
      envelope({
        messageId: testMessageId(n),
        payload: { orderId: `o-${n}`, items: [{ sku, quantity: 1 }] },
      });

    expect(stockConflictKeys(order(1, 'SKU-1'))).toEqual(stockConflictKeys(order(2, 'SKU-1')));
    expect(stockConflictKeys(order(1, 'SKU-1'))).not.toEqual(stockConflictKeys(order(3, 'SKU-2')));
  });

  it("gives an order's cancellation the keys of its creation: both move the same SKUs", () => {
    const created = envelope({ messageId: testMessageId(1) });
    const cancelled = envelope({
      messageId: testMessageId(2),
      topic: 'order.cancelled',
      payload: { orderId: 'order-1', items: [{ sku: 'SKU-1', quantity: 2 }] },
    });

    expect(stockConflictKeys(cancelled)).toEqual(['sku:SKU-1']);
    expect(stockConflictKeys(cancelled)).toEqual(stockConflictKeys(created));
  });

  it.each([
    ['an unreadable payload', { payload: { orderId: 'order-1', items: [] } }],
    ['another topic', { topic: 'order.paid' }],
  ])('gives %s a key of its own', (_, overrides) => {
    const first = envelope({ ...overrides, messageId: testMessageId(1) });
    const second = envelope({ ...overrides, messageId: testMessageId(2) });

    expect(stockConflictKeys(first)).toEqual([`message:${testMessageId(1)}`]);
    expect(stockConflictKeys(first)).not.toEqual(stockConflictKeys(second));
  });
});
