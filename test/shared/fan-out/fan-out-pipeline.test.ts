import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { MessageNotFoundError } from '../../../shared/admin/admin-errors.ts';
import { showMessage } from '../../../shared/admin/show-message.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { TransactionConditionError } from '../../../shared/errors.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { messageStatusOf } from '../../../shared/outbox/delivery-status.ts';
import { testMessageId } from '../../support/factories.ts';
import { queueOf, SUBSCRIBERS, world } from '../../support/fan-out-world.ts';

describe('fan-out: one message, a delivery per subscriber', () => {
  it('writes one delivery row per subscriber in the business transaction; the wire carries the message id', async () => {
    const w = world();
    const message = await w.write(1);

    const rows = await w.rows();
    expect(rows.map((row) => [row.messageId, row.subscriber, row.status]).sort()).toEqual([
      [`${message.messageId}#inventory`, 'inventory', MessageStatus.PENDING],
      [`${message.messageId}#loyalty`, 'loyalty', MessageStatus.PENDING],
    ]);
    // Each delivery has its own place in the due index.
    expect(rows.every((row) => row.dueShard !== undefined && row.nextAttemptAt !== undefined)).toBe(true);

    const relayed = await w.relay();
    expect(relayed).toMatchObject({ sent: 2, failed: 0 });
    for (const subscriber of SUBSCRIBERS) {
      const [copy, ...more] = w.queues.receive(queueOf(subscriber), 10);
      expect(more).toHaveLength(0);
      const body = JSON.parse(copy?.body ?? '{}');
      expect(body).toMatchObject({
        messageId: message.messageId,
        topic: 'order.created',
        payload: { orderId: 'o-1' },
      });
      expect(body).not.toHaveProperty('subscriber');
      expect(copy?.messageAttributes?.message_id?.stringValue).toBe(message.messageId);
    }
  });

  it('a refused write leaves no delivery of any subscriber behind', async () => {
    const w = world();
    const first = await w.write(1);
    // The same order again, under a new message: its condition fails, and neither delivery is written.
    await expect(w.write(2, 'o-1')).rejects.toThrow(TransactionConditionError);
    expect((await w.rows()).map((row) => row.messageId).sort()).toEqual([
      `${first.messageId}#inventory`,
      `${first.messageId}#loyalty`,
    ]);
  });

  it('two subscribers sharing one inbox table each apply the message once; each receipt confirms its own delivery', async () => {
    const w = world();
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    await w.write(1);
    await w.relay();

    expect(await w.consume('inventory')).toMatchObject([{ kind: 'APPLIED', confirmation: 'RECEIPT_SENT' }]);
    await w.applyReceipts();
    const afterInventory = await w.rows();
    expect(Object.fromEntries(afterInventory.map((row) => [row.subscriber, row.status]))).toEqual({
      inventory: MessageStatus.CONFIRMED,
      loyalty: MessageStatus.SENT,
    });
    // The message is not confirmed while one subscriber has not confirmed it.
    expect(messageStatusOf(afterInventory.map((row) => row.status))).toBe(MessageStatus.SENT);

    // Loyalty's consumer shares the inbox table: the inventory row is not taken for its own.
    expect(await w.consume('loyalty')).toMatchObject([{ kind: 'APPLIED', outcome: 'AWARDED' }]);
    await w.applyReceipts();
    const rows = await w.rows();
    expect(rows.map((row) => [row.subscriber, row.status, row.outcome]).sort()).toEqual([
      ['inventory', MessageStatus.CONFIRMED, 'APPLIED'],
      ['loyalty', MessageStatus.CONFIRMED, 'AWARDED'],
    ]);
    expect(messageStatusOf(rows.map((row) => row.status))).toBe(MessageStatus.CONFIRMED);
    const stock = await w.client.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
    const points = await w.client.send(new GetCommand({ TableName: 'points', Key: { customerId: 'c-1' } }));
    expect([stock.Item?.available, points.Item?.points]).toEqual([4, 10]);
  });

  it("a subscriber whose receipts are lost gets a resend of its own delivery only; the other's is never resent", async () => {
    const w = world();
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    await w.write(1);
    await w.relay();
    w.channel.losing.add('loyalty');
    await w.consume('inventory');
    await w.consume('loyalty');
    await w.applyReceipts();

    // Past loyalty's confirmation deadline (5 minutes by default).
    w.clock.advance(6 * 60_000);
    w.channel.losing.clear();
    expect(await w.sweep()).toMatchObject({ requeued: 1, sent: 1 });
    expect(w.queues.receive(queueOf('inventory'), 10)).toHaveLength(0);
    expect(await w.consume('loyalty')).toMatchObject([{ kind: 'DUPLICATE', outcome: 'AWARDED' }]);
    await w.applyReceipts();

    const rows = await w.rows();
    expect(rows.map((row) => [row.subscriber, row.status, row.resends ?? 0]).sort()).toEqual([
      ['inventory', MessageStatus.CONFIRMED, 0],
      ['loyalty', MessageStatus.CONFIRMED, 1],
    ]);
    const points = await w.client.send(new GetCommand({ TableName: 'points', Key: { customerId: 'c-1' } }));
    expect(points.Item?.points).toBe(10);
  });

  it("one subscriber's outage never holds the other's delivery, and the stopped one catches up", async () => {
    const w = world({ maxAttempts: 10 });
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    w.down.add('loyalty');
    await w.write(1);

    expect(await w.relay()).toMatchObject({ sent: 1, retryScheduled: 1 });
    expect(await w.consume('inventory')).toMatchObject([{ kind: 'APPLIED' }]);
    await w.applyReceipts();
    const during = Object.fromEntries((await w.rows()).map((row) => [row.subscriber, row.status]));
    expect(during).toEqual({ inventory: MessageStatus.CONFIRMED, loyalty: MessageStatus.PENDING });

    // Still down at the first retry, back for the second: the sweeper sends loyalty's delivery only.
    w.clock.advance(2_000);
    expect(await w.sweep()).toMatchObject({ retryScheduled: 1, sent: 0 });
    w.down.clear();
    w.clock.advance(60_000);
    expect(await w.sweep()).toMatchObject({ sent: 1 });
    expect(await w.consume('loyalty')).toMatchObject([{ kind: 'APPLIED', outcome: 'AWARDED' }]);
    expect(await w.consume('inventory')).toEqual([]);
    await w.applyReceipts();

    const rows = await w.rows();
    expect(rows.map((row) => [row.subscriber, row.status, row.attempts]).sort()).toEqual([
      ['inventory', MessageStatus.CONFIRMED, 1],
      ['loyalty', MessageStatus.CONFIRMED, 3],
    ]);
  });

  it('one subscriber’s backlog never hides another’s due delivery from the sweeper: each has due partitions of its own', async () => {
    // One entry per due partition and round: a backlog of loyalty's retries, due before inventory's delivery, would
    // fill every page inventory's delivery shares with them.
    const w = world({ maxAttempts: 100, sweeperPageSize: 1 });
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 100 } }));
    w.down.add('loyalty');
    for (let n = 1; n <= 40; n += 1) await w.write(n);
    await w.relay();
    let applied = 0;
    for (let batch = await w.consume('inventory'); batch.length > 0; batch = await w.consume('inventory'))
      applied += batch.length;
    expect(applied).toBe(40);
    await w.applyReceipts();
    // Message 41's stream record never reaches the relay: both its deliveries are the sweeper's, due after the grace.
    const late = await w.write(41);
    w.clock.advance(120_000);

    await w.sweep();
    expect(await w.consume('inventory')).toMatchObject([{ kind: 'APPLIED' }]);
    await w.applyReceipts();
    const rows = await w.rows();
    expect(rows.find((row) => row.messageId === `${late.messageId}#inventory`)?.status).toBe(
      MessageStatus.CONFIRMED,
    );
    // Loyalty's backlog takes its own pages: one entry of each of its partitions per round.
    expect(
      rows.filter((row) => row.subscriber === 'loyalty' && row.status === MessageStatus.PENDING).length,
    ).toBeGreaterThan(30);
  });

  it('retries each delivery by its subscriber’s own policy: loyalty’s fails after its 2 attempts, inventory’s goes on', async () => {
    const w = world({ maxAttempts: 10, subscriberMaxAttempts: { loyalty: 2 } });
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    w.down.add('inventory');
    w.down.add('loyalty');
    await w.write(1);
    await w.relay();
    for (let round = 0; round < 3; round += 1) {
      w.clock.advance(600_000);
      await w.sweep();
    }
    const statuses = async () =>
      Object.fromEntries((await w.rows()).map((row) => [row.subscriber, [row.status, row.attempts]]));
    expect(await statuses()).toEqual({
      inventory: [MessageStatus.PENDING, 4],
      loyalty: [MessageStatus.FAILED, 2],
    });

    w.down.clear();
    w.clock.advance(600_000);
    await w.sweep();
    expect(await w.consume('inventory')).toMatchObject([{ kind: 'APPLIED' }]);
    expect(await w.consume('loyalty')).toEqual([]);
    await w.applyReceipts();
    expect(await statuses()).toEqual({
      inventory: [MessageStatus.CONFIRMED, 5],
      loyalty: [MessageStatus.FAILED, 2],
    });
  });

  it('a subscriber that never comes back leaves its own delivery FAILED; the message is FAILED, the other confirmed', async () => {
    const w = world({ maxAttempts: 2 });
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    w.down.add('loyalty');
    await w.write(1);
    await w.relay();
    await w.consume('inventory');
    await w.applyReceipts();
    w.clock.advance(60_000);
    await w.sweep();

    const rows = await w.rows();
    expect(Object.fromEntries(rows.map((row) => [row.subscriber, row.status]))).toEqual({
      inventory: MessageStatus.CONFIRMED,
      loyalty: MessageStatus.FAILED,
    });
    expect(messageStatusOf(rows.map((row) => row.status))).toBe(MessageStatus.FAILED);

    // The operator replays loyalty's delivery only, once loyalty is back: inventory's is never sent again.
    const failed = rows.find((row) => row.subscriber === 'loyalty');
    const admin = w.admin();
    await expect(
      admin.replay({ messageId: failed?.messageId ?? '', reason: 'loyalty is back', actor: 'local:ops' }),
    ).resolves.toMatchObject({ from: MessageStatus.FAILED });
    w.down.clear();
    w.clock.advance(60_000);
    expect(await w.sweep()).toMatchObject({ sent: 1 });
    expect(await w.consume('inventory')).toEqual([]);
    expect(await w.consume('loyalty')).toMatchObject([{ kind: 'APPLIED', outcome: 'AWARDED' }]);
    await w.applyReceipts();
    expect(messageStatusOf((await w.rows()).map((row) => row.status))).toBe(MessageStatus.CONFIRMED);
    expect((await admin.showMessage(failed?.messageId ?? '')).message).toMatchObject({
      subscriber: 'loyalty',
      status: MessageStatus.CONFIRMED,
      outcome: 'AWARDED',
    });
  });

  it("show <messageId> gathers each subscriber's delivery; the message is CONFIRMED only once both are", async () => {
    const w = world();
    await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    const message = await w.write(1);
    await w.relay();
    await w.consume('inventory');
    await w.applyReceipts();
    const deps = dynamoAdminDeps({
      client: w.client,
      outboxTable: 'outbox',
      auditTable: 'audit',
      subscriptions: { 'order.created': { inventory: queueOf('inventory'), loyalty: queueOf('loyalty') } },
    });
    const admin = { showMessage: (id: string) => showMessage(deps, id) };

    const during = await admin.showMessage(message.messageId);
    expect(during.message).toMatchObject({ messageId: message.messageId, status: MessageStatus.SENT });
    expect(during.deliveries?.map((d) => [d.subscriber, d.delivery.status, d.delivery.outcome])).toEqual([
      ['inventory', MessageStatus.CONFIRMED, 'APPLIED'],
      ['loyalty', MessageStatus.SENT, undefined],
    ]);

    await w.consume('loyalty');
    await w.applyReceipts();
    expect((await admin.showMessage(message.messageId)).message.status).toBe(MessageStatus.CONFIRMED);
    await expect(admin.showMessage(testMessageId(9))).rejects.toThrow(MessageNotFoundError);
  });
});
