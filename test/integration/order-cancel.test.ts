import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import {
  cancelOrder,
  deliveryOf,
  outboxItemOf,
  reservationOf,
  type ShownMessage,
  waitForConfirmed,
} from './support/order-cancel.ts';
import { placeOrder, request, scanAll, startRuntime, stockOf, waitForMessageStatus } from './support.ts';

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime();
});

afterAll(async () => {
  await runtime?.stop();
});

/** Topic and outcome of each message GET /orders/{orderId} shows. */
function outcomesOf(order: { messages: ShownMessage[] }) {
  return order.messages.map(({ topic, status, outcome }) => ({ topic, status, outcome }));
}

describe('cancelling an order through the whole pipeline (moto)', () => {
  it('gives the stock back and removes the reservation; both messages are CONFIRMED, APPLIED then RELEASED', async () => {
    const before = await stockOf(runtime, 'SKU-APPLE');
    const { orderId } = await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 3 }]);
    await waitForMessageStatus(runtime, orderId, 'CONFIRMED');
    const reserved = await stockOf(runtime, 'SKU-APPLE');
    const reservation = await reservationOf(runtime, orderId);

    const cancelled = await cancelOrder(runtime, orderId);
    const order = await waitForConfirmed(runtime, orderId, 2);

    expect(reserved).toBe(before - 3);
    expect(reservation).toMatchObject({ orderId, lines: [{ sku: 'SKU-APPLE', quantity: 3 }] });
    expect(cancelled).toEqual({ status: 202, body: { orderId, messageId: expect.any(String) } });
    expect(order.status).toBe('CANCELLED');
    expect(outcomesOf(order)).toEqual([
      { topic: 'order.created', status: 'CONFIRMED', outcome: 'APPLIED' },
      { topic: 'order.cancelled', status: 'CONFIRMED', outcome: 'RELEASED' },
    ]);
    expect(order.messages[1].messageId).toBe(cancelled.body.messageId);
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(before);
    expect(await reservationOf(runtime, orderId)).toBeUndefined();
  });

  it('records NOTHING_TO_RELEASE for an order rejected for stock, and leaves the stock as it was', async () => {
    const cherries = await stockOf(runtime, 'SKU-CHERRY');
    const { orderId } = await placeOrder(runtime, [
      { sku: 'SKU-CHERRY', quantity: 1 },
      { sku: 'SKU-EMPTY', quantity: 1 },
    ]);
    await waitForMessageStatus(runtime, orderId, 'CONFIRMED');

    expect((await cancelOrder(runtime, orderId)).status).toBe(202);
    const order = await waitForConfirmed(runtime, orderId, 2);

    expect(outcomesOf(order)).toEqual([
      { topic: 'order.created', status: 'CONFIRMED', outcome: 'REJECTED_OUT_OF_STOCK' },
      { topic: 'order.cancelled', status: 'CONFIRMED', outcome: 'NOTHING_TO_RELEASE' },
    ]);
    expect(await stockOf(runtime, 'SKU-CHERRY')).toBe(cherries);
    expect(await stockOf(runtime, 'SKU-EMPTY')).toBe(0);
    expect(await reservationOf(runtime, orderId)).toBeUndefined();
  });

  it('releases nothing for an order that named a SKU nobody ever stocked, and creates no stock row for it', async () => {
    const { orderId } = await placeOrder(runtime, [{ sku: 'SKU-NEVER-STOCKED', quantity: 2 }]);
    await waitForMessageStatus(runtime, orderId, 'CONFIRMED');

    expect((await cancelOrder(runtime, orderId)).status).toBe(202);
    const order = await waitForConfirmed(runtime, orderId, 2);

    expect(outcomesOf(order)).toEqual([
      { topic: 'order.created', status: 'CONFIRMED', outcome: 'REJECTED_OUT_OF_STOCK' },
      { topic: 'order.cancelled', status: 'CONFIRMED', outcome: 'NOTHING_TO_RELEASE' },
    ]);
    const stockRows = await scanAll(runtime, 'inventory');
    expect(stockRows.filter((row) => row.sku === 'SKU-NEVER-STOCKED')).toEqual([]);
  });

  it('applies a cancellation that reaches the consumer before its order only after the order: parked, then both in turn', async () => {
    const before = await stockOf(runtime, 'SKU-BANANA');
    await runtime.pausePollers();
    try {
      const placed = await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 4 }]);
      const cancelled = await cancelOrder(runtime, placed.orderId);
      expect(cancelled.status).toBe(202);
      const cancellation = await outboxItemOf(runtime, cancelled.body.messageId);

      // The cancellation overtakes its order on the way: the consumer receives it first.
      const early = await runtime.invoke('Outbox/InventoryConsumer', deliveryOf(cancellation));

      expect(early).toMatchObject({ ok: true, result: { batchItemFailures: [] } });
      // Held, not applied: no stock moved, nothing recorded in the inbox, the producer not told.
      expect(await stockOf(runtime, 'SKU-BANANA')).toBe(before);
      const inbox = await scanAll(runtime, 'inbox');
      expect(inbox.filter((row) => row.messageId === cancellation.messageId)).toEqual([]);
      expect(inbox.map((row) => row.messageId)).toContain(`parked#order#${placed.orderId}#2`);
      expect((await outboxItemOf(runtime, cancellation.messageId)).status).toBe('PENDING');

      // Then the pipeline runs: the order arrives, is applied, and the parked cancellation right after it.
      runtime.resumePollers();
      const order = await waitForConfirmed(runtime, placed.orderId, 2);
      await runtime.drain();

      expect(outcomesOf(order)).toEqual([
        { topic: 'order.created', status: 'CONFIRMED', outcome: 'APPLIED' },
        { topic: 'order.cancelled', status: 'CONFIRMED', outcome: 'RELEASED' },
      ]);
      expect(await stockOf(runtime, 'SKU-BANANA')).toBe(before);
      expect(await reservationOf(runtime, placed.orderId)).toBeUndefined();
      const rows = (await scanAll(runtime, 'inbox')).map((row) => String(row.messageId));
      expect(rows.filter((id) => id.includes(placed.orderId))).toEqual([`cursor#order#${placed.orderId}`]);
      expect(rows).toEqual(expect.arrayContaining([placed.messageId, cancellation.messageId]));
    } finally {
      runtime.resumePollers();
    }
  });
});

describe('POST /orders/{orderId}/cancel refusals', () => {
  it('answers a repeated cancel 409 and writes no second message; a cancel right after its order still applies after it', async () => {
    const before = await stockOf(runtime, 'SKU-DATE');
    const { orderId } = await placeOrder(runtime, [{ sku: 'SKU-DATE', quantity: 1 }]);
    expect((await cancelOrder(runtime, orderId)).status).toBe(202);

    const again = await cancelOrder(runtime, orderId);

    expect(again.status).toBe(409);
    expect(again.body.error).toBe('order already cancelled');
    const messages = (await scanAll(runtime, 'outbox')).filter((m) => m.aggregateId === orderId);
    expect(messages.map((m) => m.topic).sort()).toEqual(['order.cancelled', 'order.created']);
    await waitForConfirmed(runtime, orderId, 2);
    expect(await stockOf(runtime, 'SKU-DATE')).toBe(before);
  });

  it('answers 404 for an unknown order and 400 for a body other than {}, writing nothing; {} itself is accepted', async () => {
    const { orderId } = await placeOrder(runtime, [{ sku: 'SKU-DATE', quantity: 1 }]);
    const outboxBefore = (await scanAll(runtime, 'outbox')).length;

    const unknown = await cancelOrder(runtime, 'no-such-order');
    const withReason = await request(runtime, `POST /orders/${orderId}/cancel`, {
      reason: 'changed my mind',
    });
    const outboxAfter = (await scanAll(runtime, 'outbox')).length;
    const emptyObject = await request(runtime, `POST /orders/${orderId}/cancel`, {});

    expect(unknown.status).toBe(404);
    expect(withReason.status).toBe(400);
    expect(withReason.body.details).toEqual([expect.objectContaining({ field: '(body)' })]);
    expect(outboxAfter).toBe(outboxBefore);
    expect(emptyObject.status).toBe(202);
    await waitForConfirmed(runtime, orderId, 2);
  });

  it('never serves a reservation row as stock', async () => {
    const response = await request(runtime, `GET /inventory/${encodeURIComponent('reservation#order-1')}`);

    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ field: 'sku' })]);
  });
});
