import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  EarlierGapError,
  GapNotSettledError,
  MessageNotFoundError,
  MessageSkippedError,
  ReasonRequiredError,
  WrongStatusError,
} from '../../../shared/admin/admin-errors.ts';
import { replayMessage } from '../../../shared/admin/message-actions.ts';
import { GONE_SKIP_MIN_AGE_MS, skipOrderGap } from '../../../shared/admin/skip-order-gap.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { claimUpdate } from '../../../shared/aws/outbox-table/claim-updates.ts';
import { TransactionConditionError } from '../../../shared/errors.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { dueShardOf, type OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  interceptedClient,
  ORDER_QUEUE,
  pipeline,
  SHARDS,
  storedMessage,
  storeMessage,
} from './admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const actor = 'arn:aws:iam::123456789012:user/ana';
const reason = 'payload cannot be fixed (INC-7)';
const orderKey = 'order#order-1';
const ORDERED = {
  'order.created': { scope: 'order', gapTimeoutMs: 300_000 },
  'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000 },
};

let fixture: AdminFixture;

beforeEach(() => {
  fixture = adminFixture({ orderedTopics: ORDERED });
});

/** Message `seq` of the order key, stored in `status`; its id is `testMessageId(seq)`. */
async function storeSeq(seq: number, status: MessageStatus, topic = 'order.created'): Promise<string> {
  const messageId = testMessageId(seq);
  await storeMessage(fixture, { messageId, status, topic, aggregateId: 'order-1', orderKey, seq });
  return messageId;
}

/** The consumer's cursor of the order key in `inboxTable`, as the consumer writes it. */
async function putCursor(lastSeq: number, inboxTable = 'inbox'): Promise<void> {
  await fixture.db.send(
    new PutCommand({
      TableName: inboxTable,
      Item: { messageId: `cursor#${orderKey}`, lastSeq, updatedAt: fixture.clock.now().toISOString() },
    }),
  );
}

async function cursor(inboxTable = 'inbox'): Promise<number | undefined> {
  const { Item } = await fixture.db.send(
    new GetCommand({ TableName: inboxTable, Key: { messageId: `cursor#${orderKey}` } }),
  );
  return (Item as { lastSeq?: number } | undefined)?.lastSeq;
}

/**
 * Seq 2 FAILED with the cursor at 1, and seq 3 PENDING behind it, held back by the sweeper for five minutes (with
 * `extra` set on it too). Returns seq 3's id and when it is due.
 */
async function storeHeldBackSuccessor(
  extra: Partial<OutboxItem> = {},
): Promise<{ readonly next: string; readonly later: string }> {
  await storeSeq(2, FAILED);
  const next = testMessageId(3);
  const later = new Date(fixture.clock.now().getTime() + 300_000).toISOString();
  await storeMessage(fixture, {
    messageId: next,
    status: PENDING,
    orderKey,
    seq: 3,
    nextAttemptAt: later,
    ...extra,
  });
  await putCursor(1);
  return { next, later };
}

/**
 * The fixture's client with `race` run once, just before the first transaction reaches the tables: another actor
 * acts between the reads of the call under test and its write.
 */
function clientRacedBy(race: () => Promise<void>): DynamoDBDocumentClient {
  let raced = false;
  return interceptedClient(fixture, async (command) => {
    if (command instanceof TransactWriteCommand && !raced) {
      raced = true;
      await race();
    }
  });
}

const transactions = () =>
  fixture.commands.filter(
    (command): command is TransactWriteCommand => command instanceof TransactWriteCommand,
  );

describe('skipOrderGap', () => {
  it('cancels a FAILED message, moves the cursor past it and resends the parked successor in ONE audited transaction', async () => {
    await storeSeq(1, CONFIRMED);
    const skipped = await storeSeq(2, FAILED);
    const parked = await storeSeq(3, SENT);
    await putCursor(1);
    fixture.clock.advance(60_000);

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    const at = fixture.clock.now().toISOString();
    expect(result).toEqual({
      action: 'SKIP',
      orderKey,
      seq: 2,
      messageId: skipped,
      topic: 'order.created',
      aggregateId: 'order-1',
      from: FAILED,
      to: CANCELLED,
      cancelled: true,
      gone: false,
      cursors: [{ inboxTable: 'inbox', lastSeq: 1, outcome: 'MOVED' }],
      successor: { messageId: parked, seq: 3, status: SENT, action: 'RESENT' },
      changed: true,
      at,
      actionId: expect.any(String),
    });
    expect(transactions()).toHaveLength(1);
    const items = transactions()[0]?.input.TransactItems ?? [];
    expect(items.map((item) => (item.Update ?? item.Put)?.TableName)).toEqual([
      'outbox',
      'inbox',
      'outbox',
      'audit',
    ]);

    expect(await cursor()).toBe(2);
    const cancelled = await storedMessage(fixture, skipped);
    // Marked skipped: a replay of it is refused from now on.
    expect(cancelled).toMatchObject({ status: CANCELLED, cancelledAt: at, skippedAt: at });
    expect(cancelled).not.toHaveProperty('dueShard');
    expect((cancelled?.history as unknown[] | undefined)?.at(-1)).toEqual({
      at,
      event: 'CANCELLED',
      from: FAILED,
      to: CANCELLED,
      by: actor,
      reason: `skipped ${orderKey} seq 2: ${reason}`,
    });
    // Due now, in a new delivery round: the sweeper sends it again (the relay forwards inserts only).
    const resent = await storedMessage(fixture, parked);
    expect(resent).toMatchObject({
      status: PENDING,
      attempts: 0,
      resends: 1,
      nextAttemptAt: at,
      dueShard: dueShardOf(parked, SHARDS),
    });
    expect((resent?.history as unknown[] | undefined)?.at(-1)).toMatchObject({
      event: 'REQUEUED',
      from: SENT,
      to: PENDING,
      by: actor,
    });
    expect(await auditRows(fixture, `message:${skipped}`)).toEqual([
      {
        subject: `message:${skipped}`,
        actionId: result.actionId,
        at,
        action: 'SKIP',
        actor,
        reason,
        details: {
          orderKey,
          seq: 2,
          from: FAILED,
          to: CANCELLED,
          topic: 'order.created',
          aggregateId: 'order-1',
          cursorsMoved: ['inbox'],
          successor: parked,
          successorAction: 'RESENT',
        },
      },
    ]);
  });

  it('skips seq 1 for a consumer that has no cursor yet, and a PENDING message without a successor', async () => {
    const skipped = await storeSeq(1, PENDING);

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 1, reason, actor });

    expect(result.cursors).toEqual([{ inboxTable: 'inbox', lastSeq: null, outcome: 'MOVED' }]);
    expect(result).not.toHaveProperty('successor');
    expect(await cursor()).toBe(1);
    expect(await storedMessage(fixture, skipped)).toMatchObject({ status: CANCELLED });
  });

  it.each([PENDING, FAILED, CANCELLED])(
    'leaves a %s successor as it is: only a SENT one is parked',
    async (status) => {
      await storeSeq(2, FAILED);
      const next = await storeSeq(3, status);
      await putCursor(1);
      const before = await storedMessage(fixture, next);

      const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

      expect(result.successor).toEqual({ messageId: next, seq: 3, status, action: 'LEFT' });
      expect(await storedMessage(fixture, next)).toEqual(before);
      expect(await cursor()).toBe(2);
    },
  );

  it('makes a PENDING successor the sweeper held back due now, and leaves one a sweeper is sending', async () => {
    const { next, later } = await storeHeldBackSuccessor();

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    expect(result.successor).toEqual({ messageId: next, seq: 3, status: PENDING, action: 'DUE_NOW' });
    expect(await storedMessage(fixture, next)).toMatchObject({
      status: PENDING,
      nextAttemptAt: fixture.clock.now().toISOString(),
    });

    // A fresh fixture on the same start time, so `later` is seq 3's due time again.
    fixture = adminFixture({ orderedTopics: ORDERED });
    await storeHeldBackSuccessor({ leaseOwner: 'sweeper-run-9' });

    const claimed = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    expect(claimed.successor?.action).toBe('LEFT');
    expect(await storedMessage(fixture, next)).toMatchObject({
      nextAttemptAt: later,
      leaseOwner: 'sweeper-run-9',
    });
  });

  it('moves the cursor of a message an operator already cancelled, without cancelling it again', async () => {
    const skipped = await storeSeq(2, CANCELLED);
    await putCursor(1);

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    expect(result).toMatchObject({ from: CANCELLED, cancelled: false, changed: true });
    expect(await cursor()).toBe(2);
    expect(await storedMessage(fixture, skipped)).not.toHaveProperty('history');
    expect(await auditRows(fixture, `message:${skipped}`)).toHaveLength(1);
  });

  it('moves the cursors of every consumer inbox of the scope, each from where it is', async () => {
    fixture = adminFixture({
      orderedTopics: ORDERED,
      deliveryInboxes: { 'order.created': 'inbox', 'order.cancelled': 'paymentsInbox' },
    });
    await storeSeq(2, FAILED, 'order.cancelled');
    await putCursor(1, 'inbox');
    await putCursor(4, 'paymentsInbox');

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    expect(result.cursors).toEqual([
      { inboxTable: 'paymentsInbox', lastSeq: 4, outcome: 'ALREADY_PAST' },
      { inboxTable: 'inbox', lastSeq: 1, outcome: 'MOVED' },
    ]);
    expect(await cursor('inbox')).toBe(2);
    expect(await cursor('paymentsInbox')).toBe(4);
  });

  it('refuses when a cursor is behind the message before: the earlier gap must be closed first', async () => {
    const skipped = await storeSeq(3, FAILED);
    await storeSeq(4, SENT);
    await putCursor(1);

    const refusal = skipOrderGap(fixture.deps, { orderKey, seq: 3, reason, actor });

    await expect(refusal).rejects.toBeInstanceOf(EarlierGapError);
    await expect(refusal).rejects.toMatchObject({
      httpStatus: 409,
      orderKey,
      seq: 3,
      inboxTable: 'inbox',
      lastSeq: 1,
      message: `${orderKey}: the consumer with inbox inbox is at seq 1, so seq 2 is missing before seq 3; skip or replay seq 2 first`,
    });
    expect(transactions()).toEqual([]);
    expect(await cursor()).toBe(1);
    expect(await storedMessage(fixture, skipped)).toMatchObject({ status: FAILED });
  });

  it('changes nothing when the consumers are already past a cancelled message, and says so', async () => {
    const skipped = await storeSeq(2, CANCELLED);
    await storeSeq(3, CONFIRMED);
    await putCursor(3);

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    expect(result).toMatchObject({
      changed: false,
      cancelled: false,
      cursors: [{ inboxTable: 'inbox', lastSeq: 3, outcome: 'ALREADY_PAST' }],
      successor: { seq: 3, status: CONFIRMED, action: 'LEFT' },
    });
    expect(result).not.toHaveProperty('actionId');
    expect(transactions()).toEqual([]);
    expect(await auditRows(fixture, `message:${skipped}`)).toEqual([]);
  });

  it.each([SENT, CONFIRMED])('refuses a %s message: it was sent, so it is no gap to skip', async (status) => {
    const messageId = await storeSeq(2, status);
    await putCursor(1);

    const refusal = skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    await expect(refusal).rejects.toBeInstanceOf(WrongStatusError);
    await expect(refusal).rejects.toMatchObject({
      httpStatus: 409,
      messageId,
      status,
      message: `message ${messageId} is ${status}; skip needs PENDING or FAILED or CANCELLED`,
    });
    expect(transactions()).toEqual([]);
    expect(await cursor()).toBe(1);
  });

  it('refuses without a reason, before reading anything', async () => {
    await storeSeq(2, FAILED);

    await expect(
      skipOrderGap(fixture.deps, { orderKey, seq: 2, reason: '  ', actor }),
    ).rejects.toBeInstanceOf(ReasonRequiredError);
    expect(fixture.commands).toEqual([]);
  });

  it('answers 404 for a seq the order key does not have, with nothing after it', async () => {
    await storeSeq(1, CONFIRMED);

    await expect(skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor })).rejects.toMatchObject({
      constructor: MessageNotFoundError,
      httpStatus: 404,
      message: `no message ${orderKey} seq 2 (nor any later message of it) in the outbox`,
    });
  });

  it('refuses a seq that is not a whole number from 1', async () => {
    for (const seq of [0, -1, 1.5]) {
      await expect(skipOrderGap(fixture.deps, { orderKey, seq, reason, actor })).rejects.toMatchObject({
        field: 'seq',
        httpStatus: 400,
      });
    }
  });

  it('reads again when the consumer applied the message between the read and the write, and leaves its cursor', async () => {
    const skipped = await storeSeq(2, PENDING);
    await putCursor(1);
    // The message arrived after all (a copy in flight): the consumer applied it and moved its cursor.
    const client = clientRacedBy(() => putCursor(2));

    const result = await skipOrderGap(dynamoAdminDeps({ ...fixture.options, client }), {
      orderKey,
      seq: 2,
      reason,
      actor,
    });

    expect(transactions()).toHaveLength(2);
    expect(result.cursors).toEqual([{ inboxTable: 'inbox', lastSeq: 2, outcome: 'ALREADY_PAST' }]);
    expect(await cursor()).toBe(2);
    expect(await storedMessage(fixture, skipped)).toMatchObject({ status: CANCELLED });
  });
});

describe('skipOrderGap racing other actors', () => {
  it('reads again when an operator replays the CANCELLED message during the skip, and skips it as PENDING', async () => {
    const skipped = await storeSeq(2, CANCELLED);
    await putCursor(1);
    const client = clientRacedBy(async () => {
      await replayMessage(fixture.deps, { messageId: skipped, reason: 'fixed after all', actor: 'local:bo' });
    });

    const result = await skipOrderGap(dynamoAdminDeps({ ...fixture.options, client }), {
      orderKey,
      seq: 2,
      reason,
      actor,
    });

    // The skip's first write failed on "still CANCELLED": the message it planned to skip was back in the sequence.
    expect(transactions().filter((t) => t.input.TransactItems?.length !== 2)).toHaveLength(2);
    expect(result).toMatchObject({ from: PENDING, cancelled: true });
    const stored = await storedMessage(fixture, skipped);
    expect(stored).toMatchObject({ status: CANCELLED, skippedAt: expect.any(String) });
    expect(stored).not.toHaveProperty('dueShard');
    expect(await cursor()).toBe(2);
  });

  it('leaves a successor a sweeper claimed during the skip to that sweeper: its lease is not undone', async () => {
    const { next } = await storeHeldBackSuccessor();
    const leaseUntil = new Date(fixture.clock.now().getTime() + 60_000).toISOString();
    // A sweeper claims the successor between the skip's reads and its write.
    const client = clientRacedBy(async () => {
      await fixture.db.send(
        new UpdateCommand({
          TableName: 'outbox',
          ...claimUpdate({
            messageId: next,
            status: PENDING,
            owner: 'sweeper-run-7',
            now: fixture.clock.now(),
            leaseMs: 60_000,
            early: true,
          }),
        }),
      );
    });

    const result = await skipOrderGap(dynamoAdminDeps({ ...fixture.options, client }), {
      orderKey,
      seq: 2,
      reason,
      actor,
    });

    expect(result.successor).toMatchObject({ messageId: next, action: 'LEFT' });
    // Still the sweeper's: due at its lease's end, so no other sweeper takes it meanwhile.
    expect(await storedMessage(fixture, next)).toMatchObject({
      leaseOwner: 'sweeper-run-7',
      nextAttemptAt: leaseUntil,
    });
    expect(await cursor()).toBe(2);
  });
});

describe('skipOrderGap of a message the outbox no longer holds', () => {
  it('closes the gap by order key and seq when the message expired after its cancel', async () => {
    await storeSeq(1, CONFIRMED);
    // Seq 2 was cancelled and its TTL removed it; seq 3 arrived at the consumer first and waits, parked.
    const parked = await storeSeq(3, SENT);
    await putCursor(1);
    fixture.clock.advance(GONE_SKIP_MIN_AGE_MS);

    const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });

    expect(result).toMatchObject({
      orderKey,
      seq: 2,
      gone: true,
      from: 'GONE',
      to: 'GONE',
      cancelled: false,
      topic: 'order.created',
      cursors: [{ inboxTable: 'inbox', lastSeq: 1, outcome: 'MOVED' }],
      successor: { messageId: parked, seq: 3, action: 'RESENT' },
      changed: true,
    });
    expect(result).not.toHaveProperty('messageId');
    expect(await cursor()).toBe(2);
    expect(await storedMessage(fixture, parked)).toMatchObject({ status: PENDING, resends: 1 });
    expect(await auditRows(fixture, `sequence:${orderKey}`)).toEqual([
      expect.objectContaining({ action: 'SKIP', details: expect.objectContaining({ seq: 2, from: 'GONE' }) }),
    ]);
  });

  it('refuses while the message after the gone seq is too recent for the index to be trusted, and writes nothing', async () => {
    await storeSeq(3, SENT);
    await putCursor(1);
    fixture.clock.advance(GONE_SKIP_MIN_AGE_MS - 1_000);

    await expect(skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor })).rejects.toMatchObject({
      constructor: GapNotSettledError,
      httpStatus: 409,
    });
    expect(transactions()).toEqual([]);
    expect(await cursor()).toBe(1);
  });
});

describe('replay of a skipped message', () => {
  it('is refused with a 409 naming the skip, and changes nothing', async () => {
    const skipped = await storeSeq(2, FAILED);
    await putCursor(1);
    await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });
    const before = await storedMessage(fixture, skipped);

    const error = await replayMessage(fixture.deps, {
      messageId: skipped,
      reason: 'fixed',
      actor: 'local:bo',
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MessageSkippedError);
    expect(error).toMatchObject({ httpStatus: 409, code: 'MESSAGE_SKIPPED', messageId: skipped });
    expect(await storedMessage(fixture, skipped)).toEqual(before);
    expect((await auditRows(fixture, `message:${skipped}`)).map((row) => row.action)).toEqual(['SKIP']);
  });

  it('is refused when the skip lands between the replay’s read and its write', async () => {
    const skipped = await storeSeq(2, CANCELLED);
    await putCursor(1);
    const client = clientRacedBy(async () => {
      await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });
    });

    await expect(
      replayMessage(dynamoAdminDeps({ ...fixture.options, client }), {
        messageId: skipped,
        reason: 'fixed',
        actor: 'local:bo',
      }),
    ).rejects.toBeInstanceOf(MessageSkippedError);
    expect(await storedMessage(fixture, skipped)).toMatchObject({ status: CANCELLED });
    expect(await cursor()).toBe(2);
  });
});

describe('skipOrderGap with the sweeper and the consumer', () => {
  it.each([
    ['parked at the consumer, SENT until its confirmation deadline', 'RESENT', false],
    ['held back by the sweeper behind the FAILED message', 'DUE_NOW', true],
  ] as const)(
    'lets the consumer go on when the successor is %s: it applies it and drains the rest',
    async (_case, action, swept) => {
      await fixture.db.send(
        new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 10 } }),
      );
      const flow = pipeline(fixture);
      await storeSeq(1, CONFIRMED);
      await putCursor(1);
      await storeSeq(2, FAILED);
      const later = new Date(fixture.clock.now().getTime() + 3_600_000).toISOString();
      const [third, fourth] = [testMessageId(3), testMessageId(4)];
      for (const [seq, messageId] of [
        [3, third],
        [4, fourth],
      ] as const) {
        await storeMessage(fixture, {
          messageId,
          status: SENT,
          aggregateId: 'order-1',
          orderKey,
          seq,
          nextAttemptAt: later,
        });
      }
      // Both arrived before seq 2, which never will: the consumer holds them parked.
      for (const messageId of [third, fourth]) {
        const item = (await storedMessage(fixture, messageId)) as unknown as Envelope;
        expect((await flow.consume(item)).kind).toBe('PARKED');
      }
      if (swept) {
        // Past their deadline unconfirmed, the sweeper requeues them and holds them back behind seq 2.
        fixture.clock.advance(3_600_000);
        expect(await flow.sweepOnce()).toMatchObject({ requeued: 2, held: 2, sent: 0 });
      }

      const result = await skipOrderGap(fixture.deps, { orderKey, seq: 2, reason, actor });
      const report = await flow.sweepOnce();
      const [applied, ...rest] = await flow.deliverAll();

      expect(result.successor).toMatchObject({ messageId: third, action });
      expect(report.sent).toBe(1);
      expect(rest).toEqual([]);
      expect(applied).toMatchObject({ kind: 'APPLIED', drained: [{ kind: 'APPLIED' }] });
      expect(await cursor()).toBe(4);
      expect(await storedMessage(fixture, third)).toMatchObject({ status: CONFIRMED });
      expect(await storedMessage(fixture, fourth)).toMatchObject({ status: CONFIRMED });
      const { Item } = await fixture.db.send(
        new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }),
      );
      expect((Item as { available?: number } | undefined)?.available).toBe(6);
    },
  );
});

describe("skipOrderGap of a subscriber's sequence", () => {
  const SUBSCRIPTIONS = {
    'order.created': { inventory: `${ORDER_QUEUE}/inventory`, loyalty: `${ORDER_QUEUE}/loyalty` },
  };
  const inventoryKey = `${orderKey}#inventory`;

  /** Message `seq` of order-1 as the writer stores it for a topic with subscribers: a delivery per subscriber. */
  async function storeDelivery(
    { seq, subscriber }: { readonly seq: number; readonly subscriber: string },
    status: MessageStatus,
    extra: Partial<OutboxItem> = {},
  ): Promise<string> {
    const messageId = `${testMessageId(seq)}#${subscriber}`;
    await storeMessage(fixture, {
      messageId,
      subscriber,
      status,
      aggregateId: 'order-1',
      orderKey: `${orderKey}#${subscriber}`,
      seq,
      ...extra,
    });
    return messageId;
  }

  /** The control rows the skip wrote (the outbox's own messages, `outbox.*`). */
  async function controlRows(): Promise<Record<string, unknown>[]> {
    const { Items = [] } = await fixture.db.asDocumentClient().send(new ScanCommand({ TableName: 'outbox' }));
    return Items.filter((item) => String(item.topic).startsWith('outbox.'));
  }

  beforeEach(() => {
    fixture = adminFixture({ orderedTopics: ORDERED, subscriptions: SUBSCRIPTIONS, deliveryInboxes: {} });
  });

  it("cancels that subscriber's delivery, hurries its held-back successor and sends it an outbox.skip, in ONE audited transaction; the other subscriber is untouched", async () => {
    const skipped = await storeDelivery({ seq: 1, subscriber: 'inventory' }, FAILED);
    const later = new Date(fixture.clock.now().getTime() + 300_000).toISOString();
    const next = await storeDelivery({ seq: 2, subscriber: 'inventory' }, PENDING, { nextAttemptAt: later });
    const loyalty = await storeDelivery({ seq: 1, subscriber: 'loyalty' }, CONFIRMED);
    const before = await storedMessage(fixture, loyalty);

    const result = await skipOrderGap(fixture.deps, {
      orderKey,
      seq: 1,
      subscriber: 'inventory',
      reason,
      actor,
    });

    expect(result).toMatchObject({
      orderKey: inventoryKey,
      seq: 1,
      messageId: skipped,
      subscriber: 'inventory',
      from: FAILED,
      to: CANCELLED,
      cancelled: true,
      cursors: [],
      skipSent: { subscriber: 'inventory', topic: 'outbox.skip' },
      successor: { messageId: next, seq: 2, status: PENDING, action: 'DUE_NOW' },
      changed: true,
    });
    expect(await storedMessage(fixture, skipped)).toMatchObject({
      status: CANCELLED,
      skippedAt: expect.any(String),
    });
    expect(await storedMessage(fixture, next)).toMatchObject({
      status: PENDING,
      nextAttemptAt: fixture.clock.now().toISOString(),
    });
    const [control, ...more] = await controlRows();
    expect(more).toEqual([]);
    expect(control).toMatchObject({
      messageId: `${result.skipSent?.messageId}#inventory`,
      topic: 'outbox.skip',
      subscriber: 'inventory',
      aggregateId: 'order-1',
      status: PENDING,
      // The order key as the subscriber's messages carry it: its consumer files it under its own name.
      payload: { orderKey, seq: 1 },
      dueShard: expect.any(String),
    });
    expect(control).not.toHaveProperty('orderKey');
    expect(control).not.toHaveProperty('seq');
    expect(await storedMessage(fixture, loyalty)).toEqual(before);
    // The producer reads no subscriber's inbox, and writes it all at once.
    expect(fixture.commands.filter((c) => c instanceof GetCommand && c.input.TableName !== 'outbox')).toEqual(
      [],
    );
    expect(transactions()).toHaveLength(1);
    expect(await auditRows(fixture, `message:${skipped}`)).toMatchObject([
      {
        action: 'SKIP',
        actor,
        reason,
        details: {
          orderKey: inventoryKey,
          seq: 1,
          subscriber: 'inventory',
          skipSent: result.skipSent?.messageId,
        },
      },
    ]);
  });

  it('takes the sequence as stored, <orderKey>#<subscriber>, without --subscriber; run again, it sends another skip', async () => {
    await storeDelivery({ seq: 1, subscriber: 'inventory' }, FAILED);

    const first = await skipOrderGap(fixture.deps, { orderKey: inventoryKey, seq: 1, reason, actor });
    const again = await skipOrderGap(fixture.deps, { orderKey: inventoryKey, seq: 1, reason, actor });

    expect(first).toMatchObject({ subscriber: 'inventory', from: FAILED, cancelled: true });
    expect(again).toMatchObject({
      subscriber: 'inventory',
      from: CANCELLED,
      cancelled: false,
      changed: true,
    });
    expect((await controlRows()).map((row) => row.payload)).toEqual([
      { orderKey, seq: 1 },
      { orderKey, seq: 1 },
    ]);
  });

  it('closes a gap whose delivery is gone from the outbox, by the subscriber’s own sequence', async () => {
    await storeDelivery({ seq: 2, subscriber: 'inventory' }, SENT);
    fixture.clock.advance(GONE_SKIP_MIN_AGE_MS);

    const result = await skipOrderGap(fixture.deps, {
      orderKey,
      seq: 1,
      subscriber: 'inventory',
      reason,
      actor,
    });

    expect(result).toMatchObject({
      gone: true,
      from: 'GONE',
      subscriber: 'inventory',
      successor: { action: 'LEFT' },
    });
    expect(await controlRows()).toMatchObject([{ payload: { orderKey, seq: 1 }, subscriber: 'inventory' }]);
  });

  it('refuses a subscriber name the producer could never have declared, before reading anything', async () => {
    await expect(
      skipOrderGap(fixture.deps, { orderKey, seq: 1, subscriber: 'Inventory!', reason, actor }),
    ).rejects.toMatchObject({ httpStatus: 400, field: 'subscriber' });
    expect(fixture.commands).toEqual([]);
  });

  it('never writes over a row: a control message whose key is taken fails the whole skip', async () => {
    const skipped = await storeDelivery({ seq: 1, subscriber: 'inventory' }, FAILED);
    const taken = testMessageId(77);
    await fixture.db.send(
      new PutCommand({
        TableName: 'outbox',
        Item: { messageId: `${taken}#inventory`, topic: 'order.created' },
      }),
    );
    const deps = dynamoAdminDeps({ ...fixture.options, newId: () => taken });

    await expect(
      skipOrderGap(deps, { orderKey, seq: 1, subscriber: 'inventory', reason, actor }),
    ).rejects.toThrow(TransactionConditionError);
    expect(await storedMessage(fixture, `${taken}#inventory`)).toEqual({
      messageId: `${taken}#inventory`,
      topic: 'order.created',
    });
    expect(await storedMessage(fixture, skipped)).toMatchObject({ status: FAILED });
  });
});
