import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { inboxDeliveryCheck } from '../../../../shared/aws/inbox-table.ts';
import { DynamoOutboxStore } from '../../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { writeWithOutbox } from '../../../../shared/aws/outbox-writer.ts';
import type { PlanEffect } from '../../../../shared/consumer/consume-message.ts';
import { TransactionConditionError, TransactionConflictError } from '../../../../shared/errors.ts';
import { type ConsumeDeps, consumeMessage } from '../../../../shared/lambda/inbox-consumer.ts';
import { MessageStatus } from '../../../../shared/message/message-status.ts';
import { DEFAULT_STREAM_GRACE_MS, type OutboxItem } from '../../../../shared/outbox/outbox-item.ts';
import type { OutboxWrite } from '../../../../shared/outbox/outbox-write.ts';
import { envelope, FIXED_NOW, outboxItem, testMessageId } from '../../../support/factories.ts';
import { type ContractBackend, type ContractSession, itUnlessMoto, storedItem } from './contract-backend.ts';

const CONFIRM_DEADLINE_MS = 300_000;
const LATER = new Date(FIXED_NOW.getTime() + 1_000);
/** Every test message goes to this due-index shard, so one query sees them all. */
const SHARD = '3';
const TOKEN_WINDOW_MS = 10 * 60_000;

/**
 * The library's real calls — writeWithOutbox, every DynamoOutboxStore transition, findDue, consumeMessage —
 * on the backend: the expressions, conditions and outcomes production relies on.
 */
export function describeLibraryCalls(backend: ContractBackend): void {
  let session: ContractSession;
  let store: DynamoOutboxStore;

  beforeEach(async () => {
    session = await backend.open();
    store = new DynamoOutboxStore({
      client: session.client,
      tableName: session.tables.outbox,
      confirmDeadlineMs: CONFIRM_DEADLINE_MS,
    });
  });

  const message = (id: number) =>
    storedItem(session, { TableName: session.tables.outbox, Key: { messageId: testMessageId(id) } });
  const order = (orderId: string) =>
    storedItem(session, { TableName: session.tables.orders, Key: { orderId } });

  async function putMessage(overrides: Partial<OutboxItem>): Promise<void> {
    await session.client.send(
      new PutCommand({
        TableName: session.tables.outbox,
        Item: { ...outboxItem({ dueShard: SHARD, ...overrides }) },
      }),
    );
  }

  async function dueAt(now: Date, limit = 100): Promise<string[]> {
    return (await store.findDue(SHARD, now, limit)).map((due) => due.messageId);
  }

  const write = (outboxWrite: OutboxWrite) =>
    writeWithOutbox(
      { client: session.client, outboxTable: session.tables.outbox, clock: () => FIXED_NOW },
      outboxWrite,
    );

  const putOrder = (orderId: string) => ({
    Put: {
      TableName: session.tables.orders,
      Item: { orderId, total: 10 },
      ConditionExpression: 'attribute_not_exists(#orderId)',
      ExpressionAttributeNames: { '#orderId': 'orderId' },
    },
  });

  describe('writeWithOutbox', () => {
    it('commits the business item and a PENDING message, due for the sweeper after the stream grace', async () => {
      const id = testMessageId(1);
      await write({ actions: [putOrder('order-1')], messages: [envelope({ messageId: id })] });

      expect(await order('order-1')).toEqual({ orderId: 'order-1', total: 10 });
      const written = await message(1);
      expect(written).toMatchObject({ status: MessageStatus.PENDING, attempts: 0 });
      const due = new Date(FIXED_NOW.getTime() + DEFAULT_STREAM_GRACE_MS);
      const shard = String(written?.dueShard);
      expect((await store.findDue(shard, FIXED_NOW, 10)).map((entry) => entry.messageId)).toEqual([]);
      expect((await store.findDue(shard, due, 10)).map((entry) => entry.messageId)).toEqual([id]);
    });

    it('writes neither the order nor the message when the business condition fails', async () => {
      await session.client.send(
        new PutCommand({ TableName: session.tables.orders, Item: { orderId: 'order-1', total: 1 } }),
      );

      const error = await write({
        actions: [putOrder('order-1')],
        messages: [envelope({ messageId: testMessageId(1) })],
      }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(TransactionConditionError);
      expect((error as TransactionConditionError).failedActions).toEqual([0]);
      expect(await message(1)).toBeUndefined();
      expect(await order('order-1')).toEqual({ orderId: 'order-1', total: 1 });
    });

    it('never overwrites a stored message whose id is written again', async () => {
      await write({ actions: [], messages: [envelope({ messageId: testMessageId(1) })] });
      await store.markSent({ messageId: testMessageId(1), now: FIXED_NOW });

      // The first message is new, so the transaction's token (its id) is new too: only the condition protects
      // the stored message.
      const error = await write({
        actions: [putOrder('order-1')],
        messages: [envelope({ messageId: testMessageId(2) }), envelope({ messageId: testMessageId(1) })],
      }).catch((e: unknown) => e);

      expect((error as TransactionConditionError).failedActions).toEqual([2]);
      expect(await message(1)).toMatchObject({ status: MessageStatus.SENT });
      expect(await message(2)).toBeUndefined();
      expect(await order('order-1')).toBeUndefined();
    });

    itUnlessMoto(backend, 'moto ignores ClientRequestToken and runs the transaction again')(
      'refuses another write with the same token for 10 minutes (a conflict), then only the condition holds',
      async () => {
        await write({ actions: [], messages: [envelope({ messageId: testMessageId(1) })] });
        await store.markSent({ messageId: testMessageId(1), now: FIXED_NOW });
        const reuse = () =>
          write({
            actions: [putOrder('order-1')],
            messages: [envelope({ messageId: testMessageId(1) })],
          }).catch((e: unknown) => e);

        // DynamoDB answers a different transaction with a token it remembers with
        // IdempotentParameterMismatchException before any condition, which the library reports as a conflict.
        expect(await reuse()).toBeInstanceOf(TransactionConflictError);
        session.elapse?.(TOKEN_WINDOW_MS);
        expect(((await reuse()) as TransactionConditionError).failedActions).toEqual([1]);
        expect(await message(1)).toMatchObject({ status: MessageStatus.SENT });
        expect(await order('order-1')).toBeUndefined();
      },
    );

    itUnlessMoto(backend, 'moto ignores ClientRequestToken and runs the transaction again')(
      'answers a retry of the same write within 10 minutes with success, without writing it again',
      async () => {
        const same = {
          actions: [putOrder('order-1')],
          messages: [envelope({ messageId: testMessageId(1) })],
        };
        await write(same);
        await store.markSent({ messageId: testMessageId(1), now: FIXED_NOW });

        await write(same);

        expect(await message(1)).toMatchObject({ status: MessageStatus.SENT, attempts: 1 });
      },
    );
  });

  describe('DynamoOutboxStore', () => {
    it('walks PENDING → SENT → CONFIRMED with the outcome, then reports the repeats as already done', async () => {
      await putMessage({ messageId: testMessageId(1) });

      expect(await store.markSent({ messageId: testMessageId(1), now: FIXED_NOW })).toBe('SENT');
      const deadline = new Date(FIXED_NOW.getTime() + CONFIRM_DEADLINE_MS);
      expect(await message(1)).toMatchObject({
        status: MessageStatus.SENT,
        attempts: 1,
        sentAt: FIXED_NOW.toISOString(),
        confirmBy: deadline.toISOString(),
      });
      // Still in the due index, so the sweeper reconciles it if no confirmation comes.
      expect(await dueAt(deadline)).toEqual([testMessageId(1)]);

      expect(await store.confirm(testMessageId(1), LATER, 'APPLIED')).toBe('CONFIRMED');
      const confirmed = await message(1);
      expect(confirmed).toMatchObject({
        status: MessageStatus.CONFIRMED,
        confirmedAt: LATER.toISOString(),
        outcome: 'APPLIED',
        expiresAt: Math.floor(LATER.getTime() / 1000) + 30 * 86_400,
      });
      expect(confirmed).not.toHaveProperty('nextAttemptAt');
      expect(confirmed).not.toHaveProperty('dueShard');
      expect(await dueAt(new Date(FIXED_NOW.getTime() + 86_400_000))).toEqual([]);

      // The repeat learns the stored status from the ALL_OLD item of the failed condition.
      expect(await store.confirm(testMessageId(1), LATER)).toBe('ALREADY_CONFIRMED');
      expect(await store.markSent({ messageId: testMessageId(1), now: LATER })).toBe('ALREADY_ADVANCED');
    });

    it('counts the first attempt of a message stored without `attempts` (an older writer)', async () => {
      const { attempts: _omitted, ...withoutAttempts } = outboxItem({
        messageId: testMessageId(1),
        dueShard: SHARD,
      });
      await session.client.send(new PutCommand({ TableName: session.tables.outbox, Item: withoutAttempts }));

      expect(await store.markSent({ messageId: testMessageId(1), now: FIXED_NOW })).toBe('SENT');
      expect(await message(1)).toMatchObject({ status: MessageStatus.SENT, attempts: 1 });
    });

    it('answers NOT_FOUND for an unknown message, and records a delivery that lands on a cancelled one without leaving CANCELLED', async () => {
      await putMessage({ messageId: testMessageId(2), status: MessageStatus.CANCELLED });

      expect(await store.confirm(testMessageId(1), FIXED_NOW)).toBe('NOT_FOUND');
      expect(await store.confirm(testMessageId(2), FIXED_NOW, 'APPLIED')).toBe('APPLIED_AFTER_CANCEL');
      expect(await store.confirm(testMessageId(2), LATER, 'APPLIED')).toBe('APPLIED_AFTER_CANCEL');
      expect(await message(1)).toBeUndefined();
      const cancelled = await message(2);
      expect(cancelled).toMatchObject({ status: MessageStatus.CANCELLED, outcome: 'APPLIED' });
      expect(cancelled?.history).toEqual([
        expect.objectContaining({
          event: 'APPLIED_AFTER_CANCEL',
          outcome: 'APPLIED',
          at: FIXED_NOW.toISOString(),
        }),
      ]);
    });

    it('never creates a message by marking an unknown one SENT', async () => {
      expect(await store.markSent({ messageId: testMessageId(9), now: FIXED_NOW })).toBe('ALREADY_ADVANCED');
      expect(await message(9)).toBeUndefined();
    });

    it('schedules a retry, refuses a stale attempt count, and fails the message at the end', async () => {
      await putMessage({ messageId: testMessageId(1), attempts: 1, leaseOwner: 'me', leaseUntil: 'x' });
      const next = new Date(FIXED_NOW.getTime() + 4_000);
      const failure = (seenAttempts: number, error: string) => ({
        messageId: testMessageId(1),
        seenAttempts,
        decision: { kind: 'retry' as const, attempts: seenAttempts + 1, nextAttemptAt: next },
        error,
        now: FIXED_NOW,
      });

      expect(await store.recordSendFailure(failure(1, 'Throttled'))).toBe('RETRY_SCHEDULED');
      const retried = await message(1);
      expect(retried).toMatchObject({
        attempts: 2,
        lastError: 'Throttled',
        nextAttemptAt: next.toISOString(),
      });
      expect(retried).not.toHaveProperty('leaseOwner');
      // A second writer that saw attempts = 1 lost the race: no double count.
      expect(await store.recordSendFailure(failure(1, 'other'))).toBe('ALREADY_ADVANCED');

      expect(
        await store.recordSendFailure({
          ...failure(2, 'Gone'),
          decision: { kind: 'fail', attempts: 3 },
        }),
      ).toBe('FAILED');
      const failed = await message(1);
      expect(failed).toMatchObject({ status: MessageStatus.FAILED, attempts: 3, lastError: 'Gone' });
      expect(failed?.payload).toEqual(outboxItem().payload);
      expect(failed).not.toHaveProperty('dueShard');
      expect(await dueAt(new Date(FIXED_NOW.getTime() + 86_400_000))).toEqual([]);
    });

    it('lets only the first of two claims win, and requeues or releases only for the lease owner', async () => {
      await putMessage({
        messageId: testMessageId(1),
        status: MessageStatus.SENT,
        nextAttemptAt: FIXED_NOW.toISOString(),
      });
      const claim = (owner: string) => ({
        messageId: testMessageId(1),
        status: MessageStatus.SENT,
        owner,
        now: FIXED_NOW,
        leaseMs: 60_000,
      });
      const release = (owner: string, nextAttemptAt: Date) => ({
        messageId: testMessageId(1),
        owner,
        now: FIXED_NOW,
        nextAttemptAt,
      });

      expect(await store.claim(claim('a'))).toMatchObject({
        outcome: 'CLAIMED',
        message: { messageId: testMessageId(1), item: { leaseOwner: 'a', status: MessageStatus.SENT } },
      });
      expect(await store.claim(claim('b'))).toEqual({ outcome: 'LOST' });
      expect(await store.requeue(testMessageId(1), 'b', FIXED_NOW)).toBe(false);
      expect(await store.release(release('b', FIXED_NOW))).toBe(false);

      expect(await store.requeue(testMessageId(1), 'a', FIXED_NOW)).toBe(true);
      expect(await message(1)).toMatchObject({
        status: MessageStatus.PENDING,
        leaseOwner: 'a',
        attempts: 0,
        resends: 1,
      });
      expect(await store.release(release('a', LATER))).toBe(true);
      const released = await message(1);
      expect(released).toMatchObject({ status: MessageStatus.PENDING, nextAttemptAt: LATER.toISOString() });
      expect(released).not.toHaveProperty('leaseOwner');
    });

    it('finds due messages oldest first, a page at a time, and a claim returns each as stored or why it cannot be read', async () => {
      const at = (seconds: number) => new Date(FIXED_NOW.getTime() + seconds * 1_000).toISOString();
      await putMessage({ messageId: testMessageId(1), nextAttemptAt: at(2) });
      await putMessage({ messageId: testMessageId(2), nextAttemptAt: at(1) });
      await putMessage({ messageId: testMessageId(3), nextAttemptAt: at(9) });
      await putMessage({ messageId: testMessageId(4), nextAttemptAt: at(3), status: MessageStatus.SENT });
      // Written behind the library's back: no topic, so it can never be sent.
      const { topic: _omitted, ...withoutTopic } = outboxItem({
        messageId: testMessageId(5),
        dueShard: SHARD,
        nextAttemptAt: at(0),
      });
      await session.client.send(new PutCommand({ TableName: session.tables.outbox, Item: withoutTopic }));

      const due = await store.findDue(SHARD, new Date(at(3)), 10);

      expect(due.map((entry) => entry.messageId)).toEqual([5, 2, 1, 4].map(testMessageId));
      expect(due.map((entry) => entry.status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'SENT']);
      const claimed = (n: number, status: MessageStatus) =>
        store.claim({
          messageId: testMessageId(n),
          status,
          owner: 'a',
          now: new Date(at(3)),
          leaseMs: 60_000,
        });
      expect(await claimed(5, MessageStatus.PENDING)).toEqual({
        outcome: 'CLAIMED',
        message: { messageId: testMessageId(5), unreadable: expect.stringContaining('topic') },
      });
      expect(await claimed(2, MessageStatus.PENDING)).toMatchObject({
        outcome: 'CLAIMED',
        message: { item: { messageId: testMessageId(2), attempts: 0, payload: expect.anything() } },
      });
      expect(await dueAt(new Date(at(3)), 2)).toEqual([testMessageId(1), testMessageId(4)]);
      expect(await store.findDue('7', new Date(at(9)), 10)).toEqual([]);
    });

    it('files a SENT message due before its deadline under it, once, and never a confirmed one', async () => {
      const confirmBy = new Date(FIXED_NOW.getTime() + 300_000).toISOString();
      await putMessage({
        messageId: testMessageId(1),
        status: MessageStatus.SENT,
        nextAttemptAt: FIXED_NOW.toISOString(),
        confirmBy,
      });
      await putMessage({
        messageId: testMessageId(2),
        status: MessageStatus.CONFIRMED,
        nextAttemptAt: FIXED_NOW.toISOString(),
        confirmBy,
      });

      expect(await store.findDue(SHARD, FIXED_NOW, 10)).toContainEqual({
        messageId: testMessageId(1),
        status: MessageStatus.SENT,
        confirmBy,
      });
      expect(await store.postpone({ messageId: testMessageId(1), confirmBy, now: FIXED_NOW })).toBe(true);
      expect(await store.postpone({ messageId: testMessageId(1), confirmBy, now: FIXED_NOW })).toBe(false);
      expect(await store.postpone({ messageId: testMessageId(2), confirmBy, now: FIXED_NOW })).toBe(false);
      expect(await message(1)).toMatchObject({ status: MessageStatus.SENT, nextAttemptAt: confirmBy });
      expect(await dueAt(FIXED_NOW)).not.toContain(testMessageId(1));
    });

    it('fails a claimed unreadable message with its reason, only for the lease owner', async () => {
      await putMessage({ messageId: testMessageId(1), nextAttemptAt: FIXED_NOW.toISOString() });
      await store.claim({ messageId: testMessageId(1), owner: 'a', now: FIXED_NOW, leaseMs: 60_000 });
      const unreadable = (owner: string) => ({
        messageId: testMessageId(1),
        owner,
        now: LATER,
        reason: 'topic: Required',
      });

      expect(await store.failUnreadable(unreadable('b'))).toBe(false);
      expect(await store.failUnreadable(unreadable('a'))).toBe(true);

      const failed = await message(1);
      expect(failed).toMatchObject({ status: MessageStatus.FAILED, lastError: 'topic: Required' });
      expect(failed).not.toHaveProperty('dueShard');
      expect(failed).not.toHaveProperty('leaseOwner');
    });
  });

  describe('consumeMessage', () => {
    const stockUpdate = (inventory: string, quantity: number) => ({
      Update: {
        TableName: inventory,
        Key: { sku: 'SKU-1' },
        UpdateExpression: 'SET #available = #available - :quantity',
        ConditionExpression: '#available >= :quantity',
        ExpressionAttributeNames: { '#available': 'available' },
        ExpressionAttributeValues: { ':quantity': quantity },
      },
    });
    const reserve =
      (quantity: number): PlanEffect =>
      () => ({
        apply: [stockUpdate(session.tables.inventory, quantity)],
        onConditionFailure: 'REJECTED_OUT_OF_STOCK',
      });

    function deps(): ConsumeDeps {
      return {
        client: session.client,
        inboxTable: session.tables.inbox,
        confirmer: store,
        clock: () => FIXED_NOW,
      };
    }

    async function stock(): Promise<unknown> {
      return (await storedItem(session, { TableName: session.tables.inventory, Key: { sku: 'SKU-1' } }))
        ?.available;
    }

    const inboxRow = (id: number) =>
      storedItem(session, { TableName: session.tables.inbox, Key: { messageId: testMessageId(id) } });

    beforeEach(async () => {
      await session.client.send(
        new PutCommand({ TableName: session.tables.inventory, Item: { sku: 'SKU-1', available: 5 } }),
      );
    });

    it('applies a message once: the second delivery is a DUPLICATE and the stock moves only once', async () => {
      await write({ actions: [], messages: [envelope({ messageId: testMessageId(1) })] });
      await store.markSent({ messageId: testMessageId(1), now: FIXED_NOW });
      const delivered = envelope({ messageId: testMessageId(1) });

      const first = await consumeMessage(delivered, reserve(2), deps());
      const second = await consumeMessage(delivered, reserve(2), deps());

      expect(first).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED' });
      expect(second).toEqual({ kind: 'DUPLICATE', outcome: 'APPLIED', confirmation: 'ALREADY_CONFIRMED' });
      expect(await stock()).toBe(3);
      expect(await inboxRow(1)).toMatchObject({ outcome: 'APPLIED', topic: 'order.created' });
      expect(await message(1)).toMatchObject({ status: MessageStatus.CONFIRMED, outcome: 'APPLIED' });
    });

    it("lets the sweeper's delivery check read the inbox: DELIVERED with the outcome, or MISSING", async () => {
      const check = inboxDeliveryCheck(session.client, session.tables.inbox);
      await consumeMessage(envelope({ messageId: testMessageId(1) }), reserve(2), deps());

      expect(await check(outboxItem({ messageId: testMessageId(1) }))).toEqual({
        verdict: 'DELIVERED',
        outcome: 'APPLIED',
      });
      expect(await check(outboxItem({ messageId: testMessageId(2) }))).toEqual({ verdict: 'MISSING' });
    });

    it('records the business rejection instead of the effect when stock is short, and dedupes it too', async () => {
      const delivered = envelope({ messageId: testMessageId(2) });

      const first = await consumeMessage(delivered, reserve(6), deps());
      const second = await consumeMessage(delivered, reserve(6), deps());

      expect(first).toEqual({
        kind: 'REJECTED',
        outcome: 'REJECTED_OUT_OF_STOCK',
        confirmation: 'NOT_FOUND',
      });
      expect(second).toMatchObject({ kind: 'DUPLICATE', outcome: 'REJECTED_OUT_OF_STOCK' });
      expect(await stock()).toBe(5);
      expect(await inboxRow(2)).toMatchObject({ outcome: 'REJECTED_OUT_OF_STOCK' });
    });
  });
}
