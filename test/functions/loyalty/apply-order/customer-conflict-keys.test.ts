import { describe, expect, it } from 'vitest';
import { customerConflictKeys } from '../../../../functions/loyalty/apply-order/customer-conflict-keys.ts';
import { envelope, testMessageId } from '../../../support/factories.ts';

const lines = [{ sku: 'SKU-1', quantity: 1 }];

describe('customerConflictKeys', () => {
  it("keys an order's award and its revocation by its customer, so one customer's orders apply one at a time", () => {
    const award = envelope({ payload: { orderId: 'o-1', customerId: 'c-1', items: lines } });
    const revocation = envelope({
      topic: 'order.cancelled',
      payload: { orderId: 'o-1', customerId: 'c-1', items: lines },
    });

    expect(customerConflictKeys(award)).toEqual(['customer:c-1']);
    expect(customerConflictKeys(revocation)).toEqual(['customer:c-1']);
  });

  it.each([
    ['another topic', envelope({ messageId: testMessageId(7), topic: 'order.paid' })],
    [
      'a cancellation without a customer',
      envelope({
        messageId: testMessageId(7),
        topic: 'order.cancelled',
        payload: { orderId: 'o-1', items: lines },
      }),
    ],
    [
      'a claim-checked payload',
      envelope({ messageId: testMessageId(7), payload: { claimCheck: { bucket: 'b', key: 'k' } } }),
    ],
  ])('gives %s a key of its own, since it touches no points', (_, message) => {
    expect(customerConflictKeys(message)).toEqual([`message:${testMessageId(7)}`]);
  });
});
