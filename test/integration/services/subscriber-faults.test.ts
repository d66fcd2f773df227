/**
 * One subscriber's trouble is that subscriber's alone, on the three services deployed to one backend (moto,
 * else embedded): its receipts lost, or its consumer down. The other subscriber's deliveries confirm
 * meanwhile; the sweeper, run past the confirmation deadline with a clock of the test's (no waiting), resends
 * only to the subscriber that did not confirm; its inbox applies each message once, whatever it is sent; and
 * once the trouble ends every delivery is CONFIRMED.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import { waitFor } from '../support.ts';
import {
  cancelOrder,
  clearFaults,
  deliveryStates,
  messagesOf,
  outboxRowsOf,
  placeOrder,
  pointsOf,
  putStock,
  receivedOf,
  type Services,
  SUBSCRIBER_OUTPUTS,
  type Subscriber,
  scanTable,
  startServices,
  stockOf,
  sweepSendsOf,
  waitForConfirmed,
  waitForDelivery,
} from './support.ts';

let services: Services;
let runtime: LocalRuntime;

beforeAll(async () => {
  services = await startServices();
  runtime = services.runtime;
  await putStock(runtime, 'SKU-FAULT-RECEIPT', 10);
  await putStock(runtime, 'SKU-FAULT-OUTAGE', 30);
});

afterEach(() => {
  clearFaults(services.faults);
});

afterAll(async () => {
  await services?.stop();
});

/** A moment past the confirmation deadline of a delivery sent now. */
const pastDeadline = (from = Date.now()) => new Date(from + DEFAULT_CONFIRM_DEADLINE_MS + 1_000);

/** The outbox row of one subscriber's delivery of a message. */
async function deliveryRow(orderId: string, messageId: string, subscriber: Subscriber) {
  const row = (await outboxRowsOf(runtime, orderId)).find(
    (r) => r.messageId === `${messageId}#${subscriber}`,
  );
  if (row === undefined) throw new Error(`no delivery ${messageId}#${subscriber}`);
  return row;
}

describe('receipts of one subscriber lost on the way', () => {
  it('leaves that delivery SENT while the other confirms, resends past the deadline to that subscriber only, and confirms it once receipts flow again', async () => {
    services.faults.dropReceipts.add('inventory');
    const { orderId, messageId } = await placeOrder(runtime, {
      orderId: 'fault-lost-receipt',
      customerId: 'fault-customer-receipt',
      items: [{ sku: 'SKU-FAULT-RECEIPT', quantity: 2 }],
    });
    await waitFor(async () => {
      const lost = services.seen.lostReceipts.some(
        (r) => r.messageId === messageId && r.subscriber === 'inventory',
      );
      const [message] = await messagesOf(runtime, orderId);
      return lost && message?.deliveries.find((d) => d.subscriber === 'loyalty')?.status === 'CONFIRMED'
        ? true
        : undefined;
    });
    await services.settle();

    // Applied by inventory, but the order service never heard of it: the message is not CONFIRMED.
    const [held] = await messagesOf(runtime, orderId);
    expect(held?.status).toBe('SENT');
    expect(deliveryStates(held)).toEqual(['inventory SENT', 'loyalty CONFIRMED AWARDED']);
    expect(await stockOf(runtime, 'SKU-FAULT-RECEIPT')).toBe(8);

    // Within the confirmation deadline the sweeper leaves it alone.
    await services.sweepAt(new Date());
    expect(sweepSendsOf(services, messageId)).toEqual([]);

    // Past it: one copy, to inventory's queue only; inventory's inbox knows it and sends the receipt again
    // (lost too).
    const resend = await services.sweepAt(pastDeadline());
    await waitFor(async () => (receivedOf(services, 'inventory', messageId).length === 2 ? true : undefined));
    await services.settle();

    expect(resend.requeued).toBe(1);
    expect(sweepSendsOf(services, messageId)).toEqual(['inventory']);
    expect(receivedOf(services, 'loyalty', messageId)).toHaveLength(1);
    expect(
      services.seen.lostReceipts
        .filter((r) => r.messageId === messageId)
        .map((r) => [r.subscriber, r.outcome]),
    ).toEqual([
      ['inventory', 'APPLIED'],
      ['inventory', 'APPLIED'],
    ]);
    expect(await stockOf(runtime, 'SKU-FAULT-RECEIPT')).toBe(8);
    expect((await deliveryRow(orderId, messageId, 'inventory')).status).toBe('SENT');

    // Receipts flow again: the next resend, past the resend's own (longer) deadline, confirms the delivery
    // and with it the message.
    services.faults.dropReceipts.delete('inventory');
    const due = Date.parse(String((await deliveryRow(orderId, messageId, 'inventory')).confirmBy));
    await services.sweepAt(new Date(due + 1_000));
    const [confirmed] = await waitForConfirmed(runtime, orderId);
    await services.settle();

    expect(deliveryStates(confirmed)).toEqual(['inventory CONFIRMED APPLIED', 'loyalty CONFIRMED AWARDED']);
    expect(sweepSendsOf(services, messageId)).toEqual(['inventory', 'inventory']);
    expect(receivedOf(services, 'inventory', messageId)).toHaveLength(3);
    expect(receivedOf(services, 'loyalty', messageId)).toHaveLength(1);
    expect(await stockOf(runtime, 'SKU-FAULT-RECEIPT')).toBe(8);
    expect(await pointsOf(runtime, 'fault-customer-receipt')).toBe(20);
    const inbox = await scanTable(runtime, SUBSCRIBER_OUTPUTS.inventory.inbox);
    expect(inbox.filter((row) => String(row.messageId).startsWith(messageId))).toEqual([
      expect.objectContaining({ messageId: `${messageId}#inventory`, outcome: 'APPLIED' }),
    ]);
  });
});

describe('one subscriber down while orders flow', () => {
  it('confirms the other subscriber’s deliveries meanwhile; the one that was down catches up, in each order’s sequence, each effect once', async () => {
    const customerId = 'fault-customer-outage';
    const orders = [
      { orderId: 'fault-outage-1', quantity: 1 },
      { orderId: 'fault-outage-2', quantity: 2 },
      { orderId: 'fault-outage-3', quantity: 3 },
    ];
    await services.pause('loyalty');
    let resumedAt = 0;
    const messageIds: string[] = [];
    try {
      for (const { orderId, quantity } of orders) {
        const placed = await placeOrder(runtime, {
          orderId,
          customerId,
          items: [{ sku: 'SKU-FAULT-OUTAGE', quantity }],
        });
        messageIds.push(placed.messageId);
      }
      // The third is cancelled during the outage: loyalty must award it before it revokes it.
      await waitForDelivery(runtime, {
        orderId: 'fault-outage-3',
        subscriber: 'inventory',
        status: 'CONFIRMED',
      });
      messageIds.push(await cancelOrder(runtime, 'fault-outage-3'));
      for (const { orderId } of orders) {
        const message = orderId === 'fault-outage-3' ? 1 : 0;
        await waitForDelivery(runtime, { orderId, message, subscriber: 'inventory', status: 'CONFIRMED' });
      }
      await services.settle();

      for (const { orderId } of orders) {
        for (const message of await messagesOf(runtime, orderId)) {
          expect(message.status, orderId).toBe('SENT');
          expect(deliveryStates(message), orderId).toEqual([
            `inventory CONFIRMED ${message.topic === 'order.created' ? 'APPLIED' : 'RELEASED'}`,
            'loyalty SENT',
          ]);
        }
      }
      expect(await stockOf(runtime, 'SKU-FAULT-OUTAGE')).toBe(27);
      expect(await pointsOf(runtime, customerId)).toBeUndefined();

      // Past the deadline the sweeper resends to loyalty, never to inventory, which confirmed.
      await services.sweepAt(pastDeadline());
      for (const messageId of messageIds) {
        expect(sweepSendsOf(services, messageId), messageId).toEqual(['loyalty']);
      }
    } finally {
      resumedAt = Date.now();
      services.resume('loyalty');
    }

    for (const { orderId } of orders) {
      await waitForConfirmed(runtime, orderId, orderId === 'fault-outage-3' ? 2 : 1);
    }
    await services.settle();

    // Inventory's confirmations did not wait for loyalty.
    for (const { orderId } of orders) {
      for (const row of (await outboxRowsOf(runtime, orderId)).filter((r) => r.subscriber === 'inventory')) {
        expect(Date.parse(String(row.confirmedAt)), orderId).toBeLessThan(resumedAt);
      }
    }
    // Loyalty got each message twice (the relay's send and the sweeper's) and applied each once.
    for (const messageId of messageIds) {
      expect(receivedOf(services, 'loyalty', messageId), messageId).toHaveLength(2);
      expect(receivedOf(services, 'inventory', messageId), messageId).toHaveLength(1);
    }
    expect(await pointsOf(runtime, customerId)).toBe(30);
    expect(await stockOf(runtime, 'SKU-FAULT-OUTAGE')).toBe(27);
    const [, cancelled] = await messagesOf(runtime, 'fault-outage-3');
    expect(deliveryStates(cancelled)).toEqual(['inventory CONFIRMED RELEASED', 'loyalty CONFIRMED REVOKED']);
    const inbox = (await scanTable(runtime, SUBSCRIBER_OUTPUTS.loyalty.inbox)).map((row) =>
      String(row.messageId),
    );
    for (const messageId of messageIds) {
      expect(
        inbox.filter((key) => key.startsWith(messageId)),
        messageId,
      ).toEqual([`${messageId}#loyalty`]);
    }
  });
});
