import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { ALREADY_AWARDED, AWARDED } from '../../../../functions/loyalty/apply-order/plan-award.ts';
import { planLoyalty } from '../../../../functions/loyalty/apply-order/plan-loyalty.ts';
import { NOTHING_TO_REVOKE, REVOKED } from '../../../../functions/loyalty/apply-order/plan-revocation.ts';
import { PoisonMessageError } from '../../../../shared/errors.ts';
import { consumeMessage } from '../../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../../shared/memory/memory-document-client.ts';
import { envelope, FIXED_NOW, testMessageId } from '../../../support/factories.ts';
import { cancelled, created } from '../loyalty-tables.ts';

const plan = planLoyalty('loyalty', () => FIXED_NOW);
let db: MemoryDocumentClient;

/** Applies a message as the loyalty consumer does: its plan's actions with its inbox row, in one transaction. */
function consume(message: ReturnType<typeof envelope>) {
  return consumeMessage(message, plan, {
    client: db.asDocumentClient(),
    inboxTable: 'inbox',
    subscriber: 'loyalty',
    clock: () => FIXED_NOW,
  });
}

function pointsOf(customerId: string): unknown {
  return db.items('loyalty').find((row) => row.pk === `customer#${customerId}`)?.points;
}

function awardOf(orderId: string) {
  return db.items('loyalty').find((row) => row.pk === `award#${orderId}`);
}

beforeEach(() => {
  db = new MemoryDocumentClient({ loyalty: { partitionKey: 'pk' }, inbox: { partitionKey: 'messageId' } });
});

const TWO_AND_THREE = [
  { sku: 'SKU-1', quantity: 2 },
  { sku: 'SKU-2', quantity: 3 },
];

describe('planLoyalty', () => {
  it('awards 10 points per unit on order.created, and records what the order awarded to whom', async () => {
    const result = await consume(created(1, 'c-1', TWO_AND_THREE));

    expect(result).toMatchObject({ kind: 'APPLIED', outcome: AWARDED });
    expect(pointsOf('c-1')).toBe(50);
    expect(awardOf('order-1')).toMatchObject({ orderId: 'order-1', customerId: 'c-1', points: 50 });
  });

  it("adds a customer's orders up", async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));
    await consume(created(2, 'c-1', [{ sku: 'SKU-3', quantity: 1 }]));
    await consume(created(3, 'c-2', [{ sku: 'SKU-3', quantity: 4 }]));

    expect([pointsOf('c-1'), pointsOf('c-2')]).toEqual([60, 40]);
  });

  it('awards once on a duplicate delivery: the inbox answers the copy and the balance does not move', async () => {
    const message = created(1, 'c-1', TWO_AND_THREE);
    await consume(message);

    const again = await consume(message);

    expect(again).toMatchObject({ kind: 'DUPLICATE', outcome: AWARDED });
    expect(pointsOf('c-1')).toBe(50);
  });

  it('awards an order once: another order.created message for it (a new message id) moves nothing', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));

    const again = await consume({ ...created(1, 'c-1', TWO_AND_THREE), messageId: testMessageId(99) });

    expect(again).toMatchObject({ kind: 'REJECTED', outcome: ALREADY_AWARDED });
    expect(pointsOf('c-1')).toBe(50);
  });

  it('revokes exactly what the order awarded on order.cancelled, leaving what other orders earned', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));
    await consume(created(2, 'c-1', [{ sku: 'SKU-3', quantity: 1 }]));

    const revoked = await consume(cancelled(1, 'c-1', TWO_AND_THREE));

    expect(revoked).toMatchObject({ kind: 'APPLIED', outcome: REVOKED });
    expect(pointsOf('c-1')).toBe(10);
    expect(awardOf('order-1')).toMatchObject({ points: 50, revokedAt: FIXED_NOW.toISOString() });
  });

  it('records NOTHING_TO_REVOKE for the cancellation of an order never seen, and creates no balance', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));

    const unknown = await consume(cancelled(7, 'c-1', TWO_AND_THREE));
    const unknownCustomer = await consume(cancelled(8, 'c-9', TWO_AND_THREE));

    expect(unknown).toMatchObject({ kind: 'REJECTED', outcome: NOTHING_TO_REVOKE });
    expect(unknownCustomer).toMatchObject({ kind: 'REJECTED', outcome: NOTHING_TO_REVOKE });
    expect(pointsOf('c-1')).toBe(50);
    expect(db.items('loyalty').map((row) => row.pk)).toEqual(['award#order-1', 'customer#c-1']);
  });

  it('revokes nothing twice: a second cancellation of one order (a new message id) finds it revoked', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));
    await consume(created(2, 'c-1', TWO_AND_THREE));
    await consume(cancelled(1, 'c-1', TWO_AND_THREE));

    const again = await consume({ ...cancelled(1, 'c-1', TWO_AND_THREE), messageId: testMessageId(98) });

    expect(again).toMatchObject({ kind: 'REJECTED', outcome: NOTHING_TO_REVOKE });
    expect(pointsOf('c-1')).toBe(50);
  });

  it('revokes nothing from anyone else: a cancellation naming another customer than the award moves nothing', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));
    await consume(created(2, 'c-2', TWO_AND_THREE));

    const wrong = await consume(cancelled(1, 'c-2', TWO_AND_THREE));

    expect(wrong.outcome).toBe(NOTHING_TO_REVOKE);
    expect([pointsOf('c-1'), pointsOf('c-2')]).toEqual([50, 50]);
  });

  it('revokes no more than the order awarded: a cancellation worth other points than the award moves nothing', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));
    await consume(created(2, 'c-1', TWO_AND_THREE));

    const more = await consume(cancelled(1, 'c-1', [{ sku: 'SKU-1', quantity: 9 }]));

    expect(more.outcome).toBe(NOTHING_TO_REVOKE);
    expect(pointsOf('c-1')).toBe(100);
    expect(awardOf('order-1')).not.toHaveProperty('revokedAt');
  });

  it('never takes a balance below zero: a revocation larger than the balance moves nothing', async () => {
    await consume(created(1, 'c-1', TWO_AND_THREE));
    // The balance went down by other means since the award (no such route exists today).
    await db.send(
      new UpdateCommand({
        TableName: 'loyalty',
        Key: { pk: 'customer#c-1' },
        UpdateExpression: 'SET points = :some',
        ExpressionAttributeValues: { ':some': 20 },
      }),
    );

    const revoked = await consume(cancelled(1, 'c-1', TWO_AND_THREE));

    expect(revoked.outcome).toBe(NOTHING_TO_REVOKE);
    expect(pointsOf('c-1')).toBe(20);
    expect(awardOf('order-1')).not.toHaveProperty('revokedAt');
  });

  it('treats any other topic as poison, naming the two it reads', () => {
    expect(() => plan(envelope({ topic: 'order.paid' }))).toThrow(
      new PoisonMessageError('the loyalty consumer reads order.created and order.cancelled, not order.paid'),
    );
    expect(() => plan(envelope({ topic: 'toString' }))).toThrow(PoisonMessageError);
  });
});
