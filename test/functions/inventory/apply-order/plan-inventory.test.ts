import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { planInventory } from '../../../../functions/inventory/apply-order/plan-inventory.ts';
import {
  NOTHING_TO_RELEASE,
  RELEASED,
} from '../../../../functions/inventory/apply-order/plan-stock-release.ts';
import { REJECTED_OUT_OF_STOCK } from '../../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
import { consumeMessage } from '../../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../../shared/memory/memory-document-client.ts';
import { envelope, FIXED_NOW, MEMORY_TABLE_SCHEMAS, testMessageId } from '../../../support/factories.ts';

const plan = planInventory('inventory', () => FIXED_NOW);
let db: MemoryDocumentClient;

function created(orderId: string, items: { sku: string; quantity: number }[]) {
  return envelope({ messageId: testMessageId(1), aggregateId: orderId, payload: { orderId, items } });
}

function cancelled(orderId: string, items: { sku: string; quantity: number }[]) {
  return envelope({
    messageId: testMessageId(2),
    topic: 'order.cancelled',
    aggregateId: orderId,
    payload: { orderId, items },
  });
}

/** Applies a message as the consumer does: its plan's actions with the inbox row, in one transaction. */
function consume(message: ReturnType<typeof envelope>) {
  return consumeMessage(message, plan, {
    client: db.asDocumentClient(),
    inboxTable: 'inbox',
    clock: () => FIXED_NOW,
  });
}

function stockOf(sku: string): unknown {
  return db.items('inventory').find((row) => row.sku === sku)?.available;
}

beforeEach(async () => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  for (const [sku, available] of [
    ['SKU-1', 10],
    ['SKU-2', 5],
    ['SKU-EMPTY', 0],
  ] as const) {
    await db.send(new PutCommand({ TableName: 'inventory', Item: { sku, available } }));
  }
});

describe('planInventory', () => {
  it('reserves on order.created and releases on order.cancelled: stock is back and the reservation gone', async () => {
    const lines = [
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 2 },
    ];

    const reserved = await consume(created('order-1', lines));
    const afterReservation = [stockOf('SKU-1'), stockOf('SKU-2')];
    const reservation = db.items('inventory').find((row) => row.sku === 'reservation#order-1');
    const released = await consume(cancelled('order-1', lines));

    expect(reserved.outcome).toBe('APPLIED');
    expect(afterReservation).toEqual([7, 3]);
    expect(reservation).toMatchObject({ orderId: 'order-1', lines });
    expect(released).toMatchObject({ kind: 'APPLIED', outcome: RELEASED });
    expect([stockOf('SKU-1'), stockOf('SKU-2')]).toEqual([10, 5]);
    expect(db.items('inventory').map((row) => row.sku)).not.toContain('reservation#order-1');
  });

  it('records NOTHING_TO_RELEASE for the cancellation of an order rejected for stock, and changes no stock', async () => {
    const lines = [
      { sku: 'SKU-1', quantity: 1 },
      { sku: 'SKU-EMPTY', quantity: 1 },
    ];

    const rejected = await consume(created('order-2', lines));
    const released = await consume(cancelled('order-2', lines));

    expect(rejected.outcome).toBe(REJECTED_OUT_OF_STOCK);
    expect(released).toMatchObject({ kind: 'REJECTED', outcome: NOTHING_TO_RELEASE });
    expect([stockOf('SKU-1'), stockOf('SKU-EMPTY')]).toEqual([10, 0]);
    expect(db.items('inventory').filter((row) => String(row.sku).startsWith('reservation#'))).toEqual([]);
  });

  it('releases nothing twice: a second cancellation of one order finds no reservation', async () => {
    const lines = [{ sku: 'SKU-1', quantity: 4 }];
    await consume(created('order-3', lines));
    await consume(cancelled('order-3', lines));

    const again = await consume({ ...cancelled('order-3', lines), messageId: testMessageId(3) });

    expect(again.outcome).toBe(NOTHING_TO_RELEASE);
    expect(stockOf('SKU-1')).toBe(10);
  });

  it('reserves an order once: another order.created message for the same order moves no stock', async () => {
    const lines = [{ sku: 'SKU-1', quantity: 4 }];
    await consume(created('order-4', lines));

    const again = await consume({ ...created('order-4', lines), messageId: testMessageId(5) });

    expect(again.outcome).toBe(REJECTED_OUT_OF_STOCK);
    expect(stockOf('SKU-1')).toBe(6);
  });

  it('treats any other topic as poison, naming the two it reads', () => {
    expect(() => plan(envelope({ topic: 'order.paid' }))).toThrow(
      new PoisonMessageError(
        'the inventory consumer reads order.created and order.cancelled, not order.paid',
      ),
    );
    expect(() => plan(envelope({ topic: 'toString' }))).toThrow(PoisonMessageError);
  });
});
