/**
 * The operator's actions on a message delivered to two subscribers (inventory, loyalty), over the fan-out world:
 * each delivery is listed, counted, shown, replayed and cancelled on its own, and a CONFIRMED delivery is never
 * sent again.
 */
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DeliveryNotFoundError, WrongStatusError } from '../../../shared/admin/admin-errors.ts';
import { auditSubject } from '../../../shared/admin/audit-trail.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { world } from '../../support/fan-out-world.ts';
import { adminOf, failedForLoyalty, queued, receivers } from './fan-out-admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const actor = 'local:ops';

describe('list per subscriber', () => {
  it("lists loyalty's FAILED delivery by the message's own id and its subscriber; inventory has none", async () => {
    const { admin, first } = await failedForLoyalty();

    const loyalty = await admin.listMessages({ status: FAILED, subscriber: 'loyalty' });
    expect(loyalty.items).toEqual([
      expect.objectContaining({ messageId: first.messageId, subscriber: 'loyalty', status: FAILED }),
    ]);
    expect((await admin.listMessages({ status: FAILED, subscriber: 'inventory' })).items).toEqual([]);
  });

  it('names the subscriber of PENDING deliveries too, which the due index holds without it', async () => {
    const { admin, first, second } = await failedForLoyalty();

    const all = await admin.listMessages({ subscriber: 'loyalty' });
    expect(all.items.map((item) => [item.messageId, item.subscriber, item.status]).sort()).toEqual(
      [
        [first.messageId, 'loyalty', FAILED],
        [second.messageId, 'loyalty', PENDING],
      ].sort(),
    );
    const pending = await admin.listMessages({ status: PENDING, topic: 'order.created' });
    expect(pending.items.map((item) => item.subscriber).sort()).toEqual(['inventory', 'loyalty']);
    expect(pending.items.every((item) => item.messageId === second.messageId)).toBe(true);
  });

  it("lists an aggregate's deliveries with their subscribers, filtered by one", async () => {
    const { admin, first, second } = await failedForLoyalty();
    const page = await admin.listMessages({ aggregateId: 'SKU-1', subscriber: 'inventory' });
    expect(page.items.map((item) => [item.messageId, item.status])).toEqual([
      [first.messageId, CONFIRMED],
      [second.messageId, PENDING],
    ]);
  });
});

describe('replay per subscriber', () => {
  it("replays loyalty's delivery only: the next sweep sends it to loyalty, and never to inventory", async () => {
    const { w, admin, first, statusOf } = await failedForLoyalty();
    w.take('inventory');
    w.down.clear();

    const result = await admin.replay({
      messageId: first.messageId,
      subscriber: 'loyalty',
      reason: 'loyalty is back',
      actor,
    });

    expect(result).toMatchObject({
      messageId: first.messageId,
      subscriber: 'loyalty',
      from: FAILED,
      to: PENDING,
    });
    expect(await statusOf(first.messageId)).toEqual({ inventory: CONFIRMED, loyalty: PENDING });
    w.clock.advance(60_000);
    await w.sweep();
    expect(receivers(w, first.messageId)).toEqual(['loyalty']);
  });

  it('without a subscriber replays every FAILED delivery in one audited action, and says the CONFIRMED one is never resent', async () => {
    const { w, deps, admin, first, statusOf } = await failedForLoyalty();
    w.take('inventory');
    w.down.clear();

    const result = await admin.replay({ messageId: first.messageId, reason: 'loyalty is back', actor });

    expect(result).toMatchObject({ messageId: first.messageId, from: FAILED, to: PENDING });
    expect(result.subscriber).toBeUndefined();
    expect(result.deliveries).toEqual([
      {
        subscriber: 'inventory',
        from: CONFIRMED,
        unchanged: expect.stringMatching(/^CONFIRMED: .*never sent again/),
      },
      { subscriber: 'loyalty', from: FAILED, to: PENDING },
    ]);
    expect(await statusOf(first.messageId)).toEqual({ inventory: CONFIRMED, loyalty: PENDING });

    w.clock.advance(60_000);
    await w.sweep();
    expect(receivers(w, first.messageId)).toEqual(['loyalty']);

    const audit = await deps.audit.trail(auditSubject.message(first.messageId));
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'REPLAY',
        actor,
        reason: 'loyalty is back',
        details: expect.objectContaining({
          deliveries: [{ subscriber: 'loyalty', from: FAILED, to: PENDING }],
        }),
      }),
    ]);
  });

  it('refuses a message none of whose deliveries can be replayed, naming each status, and changes nothing', async () => {
    const { admin, second, statusOf } = await failedForLoyalty();
    const error = await admin
      .replay({ messageId: second.messageId, reason: 'again', actor })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WrongStatusError);
    expect((error as WrongStatusError).deliveries).toEqual([
      { subscriber: 'inventory', status: PENDING },
      { subscriber: 'loyalty', status: PENDING },
    ]);
    expect((error as Error).message).toContain('(inventory PENDING, loyalty PENDING)');
    expect(await statusOf(second.messageId)).toEqual({ inventory: PENDING, loyalty: PENDING });
  });

  it("refuses a CONFIRMED subscriber's delivery named alone, with 409, and sends nothing", async () => {
    const { w, admin, first } = await failedForLoyalty();
    w.take('inventory');
    await expect(
      admin.replay({ messageId: first.messageId, subscriber: 'inventory', reason: 'again', actor }),
    ).rejects.toThrow(`the delivery of message ${first.messageId} to inventory is CONFIRMED`);
    w.clock.advance(60_000);
    await w.sweep();
    expect(receivers(w, first.messageId)).toEqual([]);
  });

  it('answers 404 naming the subscribers for a subscriber the message is not delivered to', async () => {
    const { admin, first } = await failedForLoyalty();
    const error = await admin
      .replay({ messageId: first.messageId, subscriber: 'billing', reason: 'x', actor })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DeliveryNotFoundError);
    expect((error as DeliveryNotFoundError).httpStatus).toBe(404);
    expect((error as Error).message).toBe(
      `no delivery of message ${first.messageId} to subscriber billing: it is delivered to inventory, loyalty`,
    );
  });

  it("bulk-replays a topic's FAILED deliveries to one subscriber, each audited with its subscriber", async () => {
    const { w, deps, admin, first } = await failedForLoyalty();
    w.down.clear();
    const dry = await admin.bulkReplay({
      topic: 'order.created',
      subscriber: 'inventory',
      reason: 'x',
      actor,
      ratePerSecond: 100,
      dryRun: true,
    });
    expect(dry.total).toBe(0);

    const report = await admin.bulkReplay({
      topic: 'order.created',
      subscriber: 'loyalty',
      reason: 'loyalty is back',
      actor,
      ratePerSecond: 100,
      dryRun: false,
    });
    expect(report).toMatchObject({ total: 1, replayed: 1, failed: 0, skipped: 0 });
    const [row] = await deps.audit.trail(auditSubject.message(first.messageId));
    expect(row).toMatchObject({ action: 'BULK_REPLAY', details: { subscriber: 'loyalty', from: FAILED } });
  });
});

describe('replay of a message whose deliveries both failed', () => {
  /** message 1 refused by both subscribers' queues: FAILED to each. */
  async function failedForBoth(client?: (w: ReturnType<typeof world>) => DynamoDBDocumentClient) {
    const w = world({ maxAttempts: 1 });
    w.down.add('inventory');
    w.down.add('loyalty');
    const message = await w.write(1);
    await w.relay();
    w.down.clear();
    return { w, message, admin: adminOf(w, client?.(w)).admin };
  }

  it('replays both in ONE transaction with one audit row naming both subscribers', async () => {
    const sent: unknown[] = [];
    const { w, message, admin } = await failedForBoth(
      (w) =>
        ({
          send: (command: unknown) => {
            sent.push(command);
            return w.client.send(command as never);
          },
        }) as unknown as DynamoDBDocumentClient,
    );

    const result = await admin.replay({ messageId: message.messageId, reason: 'both back', actor });

    expect(result.deliveries).toEqual([
      { subscriber: 'inventory', from: FAILED, to: PENDING },
      { subscriber: 'loyalty', from: FAILED, to: PENDING },
    ]);
    const transactions = sent.filter((command) => command instanceof TransactWriteCommand);
    expect(transactions).toHaveLength(1);
    expect((transactions[0] as TransactWriteCommand).input.TransactItems).toHaveLength(3);
    w.clock.advance(60_000);
    await w.sweep();
    expect(receivers(w, message.messageId).sort()).toEqual(['inventory', 'loyalty']);
  });

  it('reads again when a delivery changed before its write, and replays only what is still FAILED', async () => {
    let raced = false;
    const { w, message, admin } = await failedForBoth(
      (w) =>
        ({
          send: async (command: unknown) => {
            if (command instanceof TransactWriteCommand && !raced) {
              raced = true;
              // Another operator replays inventory's delivery just before this replay's transaction lands.
              const { admin: other } = adminOf(w);
              await other.replay({
                messageId: message.messageId,
                subscriber: 'inventory',
                reason: 'first',
                actor: 'local:bo',
              });
            }
            return w.client.send(command as never);
          },
        }) as unknown as DynamoDBDocumentClient,
    );

    const result = await admin.replay({ messageId: message.messageId, reason: 'both back', actor });

    expect(raced).toBe(true);
    expect(result.deliveries).toEqual([
      { subscriber: 'inventory', from: PENDING, unchanged: expect.stringContaining('PENDING') },
      { subscriber: 'loyalty', from: FAILED, to: PENDING },
    ]);
    const rows = (await w.rows()).sort((a, b) => a.messageId.localeCompare(b.messageId));
    // One replay each: the lost transaction left nothing behind.
    expect(rows.map((row) => [row.subscriber, row.replays])).toEqual([
      ['inventory', 1],
      ['loyalty', 1],
    ]);
  });
});

describe('cancel per subscriber', () => {
  it("cancels loyalty's PENDING delivery only: the sweeper sends the message to inventory alone", async () => {
    const { w, admin, second, statusOf } = await failedForLoyalty();
    w.take('inventory');
    w.down.clear();

    const result = await admin.cancel({
      messageId: second.messageId,
      subscriber: 'loyalty',
      reason: 'no points for this order',
      actor,
    });

    expect(result).toMatchObject({ subscriber: 'loyalty', from: PENDING, to: CANCELLED });
    expect(await statusOf(second.messageId)).toEqual({ inventory: PENDING, loyalty: CANCELLED });
    w.clock.advance(120_000);
    await w.sweep();
    const sent = queued(w);
    expect(sent.inventory).toEqual([second.messageId]);
    expect(sent.loyalty).toEqual([]);
  });
});

describe('stats per subscriber', () => {
  it('counts each delivery per topic and subscriber, and only one subscriber when asked', async () => {
    const { w, admin } = await failedForLoyalty();
    w.clock.advance(90_000);

    const stats = await admin.stats();
    expect(stats.topics['order.created']).toMatchObject({ PENDING: 2, FAILED: 1, SENT: 0 });
    expect(stats.bySubscriber).toEqual([
      expect.objectContaining({
        topic: 'order.created',
        subscriber: 'inventory',
        PENDING: 1,
        FAILED: 0,
      }),
      expect.objectContaining({ topic: 'order.created', subscriber: 'loyalty', PENDING: 1, FAILED: 1 }),
    ]);

    const loyalty = await admin.stats({ subscriber: 'loyalty' });
    expect(loyalty.subscriber).toBe('loyalty');
    expect(loyalty.totals).toEqual({ PENDING: 1, SENT: 0, FAILED: 1, CANCELLED: 0 });
    expect(loyalty.bySubscriber.map((row) => row.subscriber)).toEqual(['loyalty']);
  });

  it('counts a SENT delivery awaiting its receipt with its age, per subscriber', async () => {
    const { w, admin } = await failedForLoyalty();
    w.down.clear();
    await w.relay();
    w.clock.advance(30_000);
    const stats = await admin.stats({ subscriber: 'inventory' });
    expect(stats.bySubscriber).toEqual([
      expect.objectContaining({
        subscriber: 'inventory',
        SENT: 1,
        PENDING: 0,
        oldestSentUnconfirmedAgeSeconds: 30,
      }),
    ]);
  });
});

describe('show per subscriber', () => {
  it("shows each delivery's status, attempts, error and history, the derived status, and the audit naming the subscriber", async () => {
    const { admin, first } = await failedForLoyalty();
    await admin.replay({
      messageId: first.messageId,
      subscriber: 'loyalty',
      reason: 'loyalty is back',
      actor,
    });

    const details = await admin.showMessage(first.messageId);

    expect(details.message).toMatchObject({
      messageId: first.messageId,
      status: PENDING,
      topic: 'order.created',
    });
    expect(details.message).not.toHaveProperty('subscriber');
    expect(details.message).not.toHaveProperty('history');
    expect(
      details.deliveries?.map((d) => [
        d.subscriber,
        d.delivery.status,
        d.delivery.attempts,
        d.delivery.outcome,
      ]),
    ).toEqual([
      ['inventory', CONFIRMED, 1, 'APPLIED'],
      ['loyalty', PENDING, 0, undefined],
    ]);
    const loyalty = details.deliveries?.find((d) => d.subscriber === 'loyalty');
    expect(loyalty?.history.map((entry) => entry.event)).toEqual(['SENT', 'FAILED', 'REPLAYED']);
    expect(details.audit).toEqual([
      expect.objectContaining({
        action: 'REPLAY',
        details: expect.objectContaining({ subscriber: 'loyalty' }),
      }),
    ]);
  });

  it('shows one delivery by its key, with only the audit rows about it', async () => {
    const { admin, first } = await failedForLoyalty();
    await admin.replay({
      messageId: first.messageId,
      subscriber: 'loyalty',
      reason: 'loyalty is back',
      actor,
    });
    await admin.cancel({
      messageId: first.messageId,
      subscriber: 'loyalty',
      reason: 'no points after all',
      actor,
    });

    const inventory = await admin.showMessage(deliveryIdOf(first.messageId, 'inventory'));
    expect(inventory.message).toMatchObject({ subscriber: 'inventory', status: CONFIRMED });
    expect(inventory.audit).toEqual([]);
    const loyalty = await admin.showMessage(deliveryIdOf(first.messageId, 'loyalty'));
    expect(loyalty.audit.map((row) => row.action)).toEqual(['REPLAY', 'CANCEL']);
  });

  it('shows a message while it is SENT to one subscriber and CONFIRMED by the other as SENT', async () => {
    const { w, admin, second } = await failedForLoyalty();
    w.down.clear();
    await w.relay();
    await w.consume('inventory');
    await w.applyReceipts();
    const details = await admin.showMessage(second.messageId);
    expect(details.message.status).toBe(SENT);
    expect(details.deliveries?.map((d) => d.delivery.status)).toEqual([CONFIRMED, SENT]);
  });
});
