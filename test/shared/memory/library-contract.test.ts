import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type ConsumeDeps,
  consumeMessage,
  type PlanEffect,
} from '../../../shared/consumer/consume-message.ts';
import { TransactionConditionError, TransactionConflictError } from '../../../shared/errors.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { DEFAULT_STREAM_GRACE_MS } from '../../../shared/outbox/outbox-item.ts';
import { DynamoOutboxStore } from '../../../shared/outbox/outbox-store.ts';
import { writeWithOutbox } from '../../../shared/outbox/write-with-outbox.ts';
import {
  envelope,
  FIXED_NOW,
  MEMORY_TABLE_SCHEMAS,
  manualClock,
  outboxItem,
  testMessageId,
} from '../../support/factories.ts';

/**
 * The library's real calls, run end to end on the in-memory DynamoDB: if these pass, the scale drill
 * exercises the same expressions and outcomes as production.
 */

const CONFIRM_DEADLINE_MS = 300_000;
const LATER = new Date(FIXED_NOW.getTime() + 1_000);

let db: MemoryDocumentClient;
let store: DynamoOutboxStore;

beforeEach(() => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  store = new DynamoOutboxStore({
    client: db.asDocumentClient(),
    tableName: 'outbox',
    confirmDeadlineMs: CONFIRM_DEADLINE_MS,
  });
});

async function stored(
  table: string,
  key: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  return (await db.send(new GetCommand({ TableName: table, Key: key }))).Item as
    | Record<string, unknown>
    | undefined;
}

const message = (id: number) => stored('outbox', { messageId: testMessageId(id) });

async function putMessage(overrides: Parameters<typeof outboxItem>[0]): Promise<void> {
  await db.send(new PutCommand({ TableName: 'outbox', Item: { ...outboxItem(overrides) } }));
}

/** Every due message of every shard at `now`. */
async function dueAt(now: Date): Promise<string[]> {
  const pages = await Promise.all(
    Array.from({ length: 8 }, (_, shard) => store.findDue(String(shard), now, 100)),
  );
  return pages.flat().map((item) => item.messageId);
}

describe('writeWithOutbox on the in-memory table', () => {
  const order = { orderId: 'order-1', total: 10 };
  const putOrder = {
    Put: {
      TableName: 'orders',
      Item: order,
      ConditionExpression: 'attribute_not_exists(#orderId)',
      ExpressionAttributeNames: { '#orderId': 'orderId' },
    },
  };

  it('commits the business item and a PENDING message, due for the sweeper after the stream grace', async () => {
    const clock = manualClock();
    await writeWithOutbox(
      { client: db.asDocumentClient(), outboxTable: 'outbox', clock: clock.now },
      { actions: [putOrder], messages: [envelope({ messageId: testMessageId(1) })] },
    );

    expect(await stored('orders', { orderId: 'order-1' })).toEqual(order);
    expect(await message(1)).toMatchObject({ status: MessageStatus.PENDING, attempts: 0 });
    expect(await dueAt(FIXED_NOW)).toEqual([]);
    expect(await dueAt(new Date(FIXED_NOW.getTime() + DEFAULT_STREAM_GRACE_MS))).toEqual([testMessageId(1)]);
  });

  it('writes neither the order nor the message when the business condition fails', async () => {
    await db.send(new PutCommand({ TableName: 'orders', Item: { orderId: 'order-1', total: 1 } }));

    const error = await writeWithOutbox(
      { client: db.asDocumentClient(), outboxTable: 'outbox', clock: () => FIXED_NOW },
      { actions: [putOrder], messages: [envelope({ messageId: testMessageId(1) })] },
    ).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([0]);
    expect(await message(1)).toBeUndefined();
    expect(await stored('orders', { orderId: 'order-1' })).toEqual({ orderId: 'order-1', total: 1 });
  });

  it('never overwrites a message whose id is reused (an idempotency key sent twice)', async () => {
    // The first message id is the transaction's ClientRequestToken, which DynamoDB remembers for 10 minutes.
    const clock = manualClock();
    db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: clock.now });
    store = new DynamoOutboxStore({ client: db.asDocumentClient(), tableName: 'outbox' });
    const options = { client: db.asDocumentClient(), outboxTable: 'outbox', clock: () => FIXED_NOW };
    await writeWithOutbox(options, { actions: [], messages: [envelope({ messageId: testMessageId(1) })] });
    await store.markSent(testMessageId(1), FIXED_NOW);
    const reuse = () =>
      writeWithOutbox(options, {
        actions: [putOrder],
        messages: [envelope({ messageId: testMessageId(1) })],
      }).catch((e: unknown) => e);

    // Within the window, DynamoDB refuses a different transaction with the same token before any condition
    // (IdempotentParameterMismatchException), which the library reports as a conflict.
    expect(await reuse()).toBeInstanceOf(TransactionConflictError);
    clock.advance(10 * 60_000);
    const error = await reuse();

    expect((error as TransactionConditionError).failedActions).toEqual([1]);
    expect(await message(1)).toMatchObject({ status: MessageStatus.SENT });
    expect(await stored('orders', { orderId: 'order-1' })).toBeUndefined();
  });

  it('answers a retry of the same write within 10 minutes with success, without writing it again', async () => {
    const options = { client: db.asDocumentClient(), outboxTable: 'outbox', clock: () => FIXED_NOW };
    const write = { actions: [putOrder], messages: [envelope({ messageId: testMessageId(1) })] };
    await writeWithOutbox(options, write);
    await store.markSent(testMessageId(1), FIXED_NOW);

    await writeWithOutbox(options, write);

    expect(await message(1)).toMatchObject({ status: MessageStatus.SENT });
  });
});

describe('DynamoOutboxStore on the in-memory table', () => {
  it('walks PENDING → SENT → CONFIRMED, then reports the repeats as already done', async () => {
    await putMessage({ messageId: testMessageId(1) });

    expect(await store.markSent(testMessageId(1), FIXED_NOW)).toBe('SENT');
    expect(await message(1)).toMatchObject({
      status: MessageStatus.SENT,
      attempts: 1,
      sentAt: FIXED_NOW.toISOString(),
      nextAttemptAt: new Date(FIXED_NOW.getTime() + CONFIRM_DEADLINE_MS).toISOString(),
    });
    // Still in the due index, so the sweeper reconciles it if no confirmation comes.
    expect(await dueAt(new Date(FIXED_NOW.getTime() + CONFIRM_DEADLINE_MS))).toEqual([testMessageId(1)]);

    expect(await store.confirm(testMessageId(1), LATER)).toBe('CONFIRMED');
    const confirmed = await message(1);
    expect(confirmed).toMatchObject({ status: MessageStatus.CONFIRMED, confirmedAt: LATER.toISOString() });
    expect(confirmed?.expiresAt).toBe(Math.floor(LATER.getTime() / 1000) + 30 * 86_400);
    expect(confirmed).not.toHaveProperty('nextAttemptAt');
    expect(confirmed).not.toHaveProperty('dueShard');
    expect(await dueAt(new Date(FIXED_NOW.getTime() + 86_400_000))).toEqual([]);

    expect(await store.confirm(testMessageId(1), LATER)).toBe('ALREADY_CONFIRMED');
    expect(await store.markSent(testMessageId(1), LATER)).toBe('ALREADY_ADVANCED');
  });

  it('answers NOT_FOUND for an unknown message and NOT_CONFIRMABLE for a cancelled one', async () => {
    await putMessage({ messageId: testMessageId(2), status: MessageStatus.CANCELLED });

    expect(await store.confirm(testMessageId(1), FIXED_NOW)).toBe('NOT_FOUND');
    expect(await store.confirm(testMessageId(2), FIXED_NOW)).toBe('NOT_CONFIRMABLE');
    expect(await message(1)).toBeUndefined();
  });

  it('never marks an unknown message SENT (no item is created by the update)', async () => {
    expect(await store.markSent(testMessageId(9), FIXED_NOW)).toBe('ALREADY_ADVANCED');
    expect(await message(9)).toBeUndefined();
  });

  it('schedules a retry, refuses a stale attempt count, and fails the message at the end', async () => {
    await putMessage({ messageId: testMessageId(1), attempts: 1, leaseOwner: 'me', leaseUntil: 'x' });
    const next = new Date(FIXED_NOW.getTime() + 4_000);

    expect(
      await store.recordSendFailure({
        messageId: testMessageId(1),
        seenAttempts: 1,
        decision: { kind: 'retry', attempts: 2, nextAttemptAt: next },
        error: 'Throttled',
        now: FIXED_NOW,
      }),
    ).toBe('RETRY_SCHEDULED');
    const retried = await message(1);
    expect(retried).toMatchObject({ attempts: 2, lastError: 'Throttled', nextAttemptAt: next.toISOString() });
    expect(retried).not.toHaveProperty('leaseOwner');

    // A second writer that saw attempts = 1 lost the race: no double count.
    expect(
      await store.recordSendFailure({
        messageId: testMessageId(1),
        seenAttempts: 1,
        decision: { kind: 'retry', attempts: 2, nextAttemptAt: next },
        error: 'other',
        now: FIXED_NOW,
      }),
    ).toBe('ALREADY_ADVANCED');

    expect(
      await store.recordSendFailure({
        messageId: testMessageId(1),
        seenAttempts: 2,
        decision: { kind: 'fail', attempts: 3 },
        error: 'Gone',
        now: FIXED_NOW,
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
    expect(await store.claim(claim('a'))).toBe('CLAIMED');
    expect(await store.claim(claim('b'))).toBe('LOST');
    expect(await store.requeue(testMessageId(1), 'b', FIXED_NOW)).toBe(false);
    expect(await store.release(release('b', FIXED_NOW))).toBe(false);

    expect(await store.requeue(testMessageId(1), 'a', FIXED_NOW)).toBe(true);
    expect(await message(1)).toMatchObject({ status: MessageStatus.PENDING, leaseOwner: 'a' });
    expect(await store.release(release('a', LATER))).toBe(true);
    const released = await message(1);
    expect(released).toMatchObject({ status: MessageStatus.PENDING, nextAttemptAt: LATER.toISOString() });
    expect(released).not.toHaveProperty('leaseOwner');
  });
});

describe('consumeMessage on the in-memory tables', () => {
  const stockUpdate = (sku: string, quantity: number) => ({
    Update: {
      TableName: 'inventory',
      Key: { sku },
      UpdateExpression: 'SET #available = #available - :quantity',
      ConditionExpression: '#available >= :quantity',
      ExpressionAttributeNames: { '#available': 'available' },
      ExpressionAttributeValues: { ':quantity': quantity },
    },
  });
  const reserve: PlanEffect = () => ({
    apply: [stockUpdate('SKU-1', 2)],
    onConditionFailure: 'REJECTED_OUT_OF_STOCK',
  });

  function deps(): ConsumeDeps {
    return { client: db.asDocumentClient(), inboxTable: 'inbox', confirmer: store, clock: () => FIXED_NOW };
  }

  async function stock(): Promise<unknown> {
    return (await stored('inventory', { sku: 'SKU-1' }))?.available;
  }

  beforeEach(async () => {
    await db.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
  });

  it('applies a message once: the second delivery is a DUPLICATE and the stock moves only once', async () => {
    await writeWithOutbox(
      { client: db.asDocumentClient(), outboxTable: 'outbox', clock: () => FIXED_NOW },
      { actions: [], messages: [envelope({ messageId: testMessageId(1) })] },
    );
    await store.markSent(testMessageId(1), FIXED_NOW);
    const delivered = envelope({ messageId: testMessageId(1) });

    const first = await consumeMessage(delivered, reserve, deps());
    const second = await consumeMessage(delivered, reserve, deps());

    expect(first).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(second).toEqual({ kind: 'DUPLICATE', outcome: 'APPLIED', confirmation: 'ALREADY_CONFIRMED' });
    expect(await stock()).toBe(3);
    expect(await stored('inbox', { messageId: testMessageId(1) })).toMatchObject({ outcome: 'APPLIED' });
    expect(await message(1)).toMatchObject({ status: MessageStatus.CONFIRMED });
  });

  it('records the business rejection instead of the effect when stock is short, and dedupes it too', async () => {
    const big: PlanEffect = () => ({
      apply: [stockUpdate('SKU-1', 6)],
      onConditionFailure: 'REJECTED_OUT_OF_STOCK',
    });
    const delivered = envelope({ messageId: testMessageId(2) });

    const first = await consumeMessage(delivered, big, deps());
    const second = await consumeMessage(delivered, big, deps());

    expect(first).toMatchObject({
      kind: 'REJECTED',
      outcome: 'REJECTED_OUT_OF_STOCK',
      confirmation: 'NOT_FOUND',
    });
    expect(second).toMatchObject({ kind: 'DUPLICATE', outcome: 'REJECTED_OUT_OF_STOCK' });
    expect(await stock()).toBe(5);
    expect(await stored('inbox', { messageId: testMessageId(2) })).toMatchObject({
      outcome: 'REJECTED_OUT_OF_STOCK',
    });
  });
});
