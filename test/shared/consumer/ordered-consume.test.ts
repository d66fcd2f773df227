import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { cursorKeyOf, parkedKeyOf } from '../../../shared/aws/inbox-table.ts';
import { ClaimCheckObjectMissingError } from '../../../shared/claim-check/claim-check-errors.ts';
import { CLAIM_CHECK_PREFIX, checkIn } from '../../../shared/claim-check/claim-check-reference.ts';
import type { ConsumeResult, PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { type ConsumeDeps, consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryObjectStore } from '../../../shared/memory/memory-object-store.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import type { ConfirmOutcome } from '../../../shared/outbox/outbox-store.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import { envelope, FIXED_NOW, MEMORY_TABLE_SCHEMAS, testMessageId } from '../../support/factories.ts';

const ORDER_KEY = 'order#order-1';
const BUCKET = 'shop-claims';

/** Message `seq` of order-1: its payload names the step it records, and the stock it takes, if any. */
function ordered(
  seq: number,
  payload: { step: string; quantity?: number } = { step: `step-${seq}` },
): Envelope {
  return envelope({
    messageId: testMessageId(100 + seq),
    aggregateId: 'order-1',
    orderKey: ORDER_KEY,
    seq,
    payload,
  });
}

/**
 * Appends the message's step to the order's history (so the order of the applies shows) and takes the stock it
 * names: a business condition that fails when too little is left.
 */
const plan: PlanEffect = (message) => {
  const { step, quantity } = message.payload as { step: string; quantity?: number };
  const apply: TransactWriteAction[] = [
    {
      Update: {
        TableName: 'orders',
        Key: { orderId: message.aggregateId },
        UpdateExpression: 'SET #history = list_append(if_not_exists(#history, :none), :step)',
        ExpressionAttributeNames: { '#history': 'history' },
        ExpressionAttributeValues: { ':none': [], ':step': [step] },
      },
    },
    ...(quantity === undefined
      ? []
      : [
          {
            Update: {
              TableName: 'inventory',
              Key: { sku: 'SKU-1' },
              UpdateExpression: 'SET #available = #available - :quantity',
              ConditionExpression: '#available >= :quantity',
              ExpressionAttributeNames: { '#available': 'available' },
              ExpressionAttributeValues: { ':quantity': quantity },
            },
          },
        ]),
  ];
  return { apply, onConditionFailure: 'REJECTED_OUT_OF_STOCK' };
};

let db: MemoryDocumentClient;
let confirmed: { messageId: string; outcome: string | undefined }[];
let deps: ConsumeDeps;

beforeEach(async () => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  await db.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 3 } }));
  confirmed = [];
  deps = {
    client: db.asDocumentClient(),
    inboxTable: 'inbox',
    confirmer: {
      confirm: async (messageId: string, _now: Date, outcome?: string): Promise<ConfirmOutcome> => {
        confirmed.push({ messageId, outcome });
        return 'CONFIRMED';
      },
    },
    clock: () => FIXED_NOW,
    sleep: async () => {},
  };
});

async function history(): Promise<unknown> {
  const result = await db.send(new GetCommand({ TableName: 'orders', Key: { orderId: 'order-1' } }));
  return (result.Item as { history?: unknown } | undefined)?.history ?? [];
}

async function inboxRow(messageId: string): Promise<Record<string, unknown> | undefined> {
  const result = await db.send(new GetCommand({ TableName: 'inbox', Key: { messageId } }));
  return result.Item as Record<string, unknown> | undefined;
}

async function lastSeq(): Promise<unknown> {
  return (await inboxRow(cursorKeyOf(ORDER_KEY)))?.lastSeq;
}

/** What a result says of each message it settled: its own kind, then each drained message's. */
function settled(result: ConsumeResult): [string, string, string][] {
  return [
    ['self', result.kind, result.outcome],
    ...(result.drained ?? []).map((drained): [string, string, string] => [
      String(drained.message.seq),
      drained.kind,
      drained.outcome,
    ]),
  ];
}

describe('consumeMessage on an ordered topic', () => {
  it('applies messages that arrive in order, each moving the cursor in its own transaction', async () => {
    const first = await consumeMessage(ordered(1), plan, deps);
    const second = await consumeMessage(ordered(2), plan, deps);

    expect(first).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED', drained: [] });
    expect(second).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED', drained: [] });
    expect(await history()).toEqual(['step-1', 'step-2']);
    expect(await lastSeq()).toBe(2);
    expect(confirmed).toEqual([
      { messageId: ordered(1).messageId, outcome: 'APPLIED' },
      { messageId: ordered(2).messageId, outcome: 'APPLIED' },
    ]);
  });

  it('parks a message that arrives before its predecessor, then applies both in order when it comes', async () => {
    const early = await consumeMessage(ordered(2), plan, deps);

    expect(early).toEqual({ kind: 'PARKED', outcome: 'PARKED', confirmation: undefined, drained: [] });
    expect(await history()).toEqual([]);
    expect(confirmed).toEqual([]);
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toMatchObject({
      orderKey: ORDER_KEY,
      seq: 2,
      parkedMessageId: ordered(2).messageId,
      topic: 'order.created',
      parkedAt: FIXED_NOW.toISOString(),
    });

    const predecessor = await consumeMessage(ordered(1), plan, deps);

    expect(settled(predecessor)).toEqual([
      ['self', 'APPLIED', 'APPLIED'],
      ['2', 'APPLIED', 'APPLIED'],
    ]);
    expect(predecessor.drained?.[0]?.confirmation).toBe('CONFIRMED');
    expect(await history()).toEqual(['step-1', 'step-2']);
    expect(await lastSeq()).toBe(2);
    expect(confirmed.map((entry) => entry.messageId)).toEqual([ordered(1).messageId, ordered(2).messageId]);
    // The drained message's transaction removed its parked row and recorded its inbox row.
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toBeUndefined();
    expect(await inboxRow(ordered(2).messageId)).toMatchObject({ outcome: 'APPLIED' });
  });

  it('drains a run of parked successors and stops at the first gap', async () => {
    for (const seq of [5, 3, 2]) {
      expect((await consumeMessage(ordered(seq), plan, deps)).kind).toBe('PARKED');
    }

    const result = await consumeMessage(ordered(1), plan, deps);

    expect(settled(result).map(([seq]) => seq)).toEqual(['self', '2', '3']);
    expect(await history()).toEqual(['step-1', 'step-2', 'step-3']);
    expect(await lastSeq()).toBe(3);
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 5))).toBeDefined();

    expect(settled(await consumeMessage(ordered(4), plan, deps)).map(([seq]) => seq)).toEqual(['self', '5']);
    expect(await history()).toEqual(['step-1', 'step-2', 'step-3', 'step-4', 'step-5']);
  });

  it('parks a second copy of a parked message once, and applies it once', async () => {
    await consumeMessage(ordered(2), plan, deps);
    const copy = await consumeMessage(ordered(2), plan, deps);

    expect(copy.kind).toBe('PARKED');
    await consumeMessage(ordered(1), plan, deps);
    expect(await history()).toEqual(['step-1', 'step-2']);
  });

  it('skips a copy of an applied message (its inbox row exists) and confirms it with the earlier outcome', async () => {
    await consumeMessage(ordered(1), plan, deps);
    confirmed.length = 0;

    const copy = await consumeMessage(ordered(1), plan, deps);

    expect(copy).toEqual({ kind: 'DUPLICATE', outcome: 'APPLIED', confirmation: 'CONFIRMED', drained: [] });
    expect(await history()).toEqual(['step-1']);
    expect(confirmed).toEqual([{ messageId: ordered(1).messageId, outcome: 'APPLIED' }]);
  });

  it('skips a message the cursor has passed without an inbox row (skipped, or its row expired), unconfirmed', async () => {
    // An operator skipped seq 3: the cursor stands at 3 and no inbox row records it.
    await db.send(
      new PutCommand({
        TableName: 'inbox',
        Item: { messageId: cursorKeyOf(ORDER_KEY), lastSeq: 3, updatedAt: FIXED_NOW.toISOString() },
      }),
    );

    const late = await consumeMessage(ordered(3), plan, deps);

    expect(late).toEqual({ kind: 'DUPLICATE', outcome: 'UNKNOWN', confirmation: undefined, drained: [] });
    expect(await history()).toEqual([]);
    expect(await inboxRow(ordered(3).messageId)).toBeUndefined();
    // Confirming it would record a cancelled message as applied.
    expect(confirmed).toEqual([]);
    expect((await consumeMessage(ordered(4), plan, deps)).kind).toBe('APPLIED');
  });

  it('never applies a late copy of a skipped seq 1, and never moves the cursor back to it', async () => {
    // An operator skipped seq 1 (the cursor was created at 1 without an inbox row), then 2–4 were applied.
    await db.send(
      new PutCommand({
        TableName: 'inbox',
        Item: { messageId: cursorKeyOf(ORDER_KEY), lastSeq: 1, updatedAt: FIXED_NOW.toISOString() },
      }),
    );
    for (const seq of [2, 3, 4])
      await consumeMessage(ordered(seq, { step: `step-${seq}`, quantity: 1 }), plan, deps);

    const late = await consumeMessage(ordered(1, { step: 'step-1', quantity: 2 }), plan, deps);

    expect(late.kind).toBe('DUPLICATE');
    expect(await history()).toEqual(['step-2', 'step-3', 'step-4']);
    expect(await lastSeq()).toBe(4);
    const { Item } = await db.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
    expect((Item as { available?: number } | undefined)?.available).toBe(0);
  });

  it('keeps the first parked row of a message when a copy of it arrives later: its wait is counted from the first', async () => {
    await consumeMessage(ordered(2), plan, deps);
    const later = { ...deps, clock: () => new Date(FIXED_NOW.getTime() + 60_000) };

    const copy = await consumeMessage(ordered(2), plan, later);

    expect(copy.kind).toBe('PARKED');
    // The sweeper measures the gap from parkedAt: a copy resetting it would postpone the gap alarm forever.
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toMatchObject({ parkedAt: FIXED_NOW.toISOString() });
  });

  it('records a business rejection with the cursor move, so the successor applies next', async () => {
    const rejected = await consumeMessage(ordered(1, { step: 'reserve', quantity: 5 }), plan, deps);

    expect(rejected).toMatchObject({ kind: 'REJECTED', outcome: 'REJECTED_OUT_OF_STOCK' });
    expect(await lastSeq()).toBe(1);
    expect(await history()).toEqual([]);
    expect(await inboxRow(ordered(1).messageId)).toMatchObject({ outcome: 'REJECTED_OUT_OF_STOCK' });
    expect(confirmed).toEqual([{ messageId: ordered(1).messageId, outcome: 'REJECTED_OUT_OF_STOCK' }]);

    expect((await consumeMessage(ordered(2), plan, deps)).kind).toBe('APPLIED');
    expect(await history()).toEqual(['step-2']);
  });

  it('drains past a parked message whose business condition fails: rejected, and its successor applied', async () => {
    await consumeMessage(ordered(3), plan, deps);
    await consumeMessage(ordered(2, { step: 'reserve', quantity: 5 }), plan, deps);

    const result = await consumeMessage(ordered(1), plan, deps);

    expect(settled(result)).toEqual([
      ['self', 'APPLIED', 'APPLIED'],
      ['2', 'REJECTED', 'REJECTED_OUT_OF_STOCK'],
      ['3', 'APPLIED', 'APPLIED'],
    ]);
    expect(await history()).toEqual(['step-1', 'step-3']);
    expect(confirmed.map((entry) => entry.outcome)).toEqual(['APPLIED', 'REJECTED_OUT_OF_STOCK', 'APPLIED']);
  });

  it('moves the cursor past a message the plan declines', async () => {
    const decline: PlanEffect = (message) => (message.seq === 1 ? { reject: 'NOT_OURS' } : plan(message));

    expect((await consumeMessage(ordered(1), decline, deps)).outcome).toBe('NOT_OURS');
    expect((await consumeMessage(ordered(2), decline, deps)).kind).toBe('APPLIED');
  });

  it('applies a message whose predecessor commits between its refused apply and its park, instead of parking it behind a cursor that will not move again', async () => {
    const raced = { ...deps, client: db.asDocumentClient() };
    let predecessor: ConsumeResult | undefined;
    raced.client = {
      send: async (command: unknown) => {
        const isPark =
          command instanceof TransactWriteCommand &&
          (command.input.TransactItems ?? []).some((action) => action.ConditionCheck !== undefined);
        // Message 1 commits (and finds nothing parked to drain) just before message 2's park reaches DynamoDB.
        if (isPark && predecessor === undefined) predecessor = await consumeMessage(ordered(1), plan, deps);
        return db.send(command);
      },
    } as unknown as ConsumeDeps['client'];

    const result = await consumeMessage(ordered(2), plan, raced);

    expect(predecessor).toMatchObject({ kind: 'APPLIED', drained: [] });
    expect(result).toMatchObject({ kind: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(await history()).toEqual(['step-1', 'step-2']);
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toBeUndefined();
  });

  it('reports a parked successor that fails to apply and leaves it parked, without failing its predecessor', async () => {
    const s3 = new MemoryObjectStore({ clock: () => FIXED_NOW });
    s3.createBucket(BUCKET, [{ prefix: CLAIM_CHECK_PREFIX, expireAfterDays: 47 }]);
    const { object, message: sent } = checkIn(ordered(2, { step: 'large' }), { bucket: BUCKET });
    await s3.put(object);
    const reading = { ...deps, claimCheck: { store: s3, bucket: BUCKET } };
    await consumeMessage(sent, plan, reading);
    // Its payload is gone by the time its predecessor arrives: it cannot be applied without it.
    s3.delete(BUCKET, object.key);

    const result = await consumeMessage(ordered(1), plan, reading);

    expect(result).toMatchObject({ kind: 'APPLIED', confirmation: 'CONFIRMED', drained: [] });
    expect(result.drainFailure?.message).toEqual(sent);
    expect(result.drainFailure?.error).toBeInstanceOf(ClaimCheckObjectMissingError);
    expect(await lastSeq()).toBe(1);
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toBeDefined();
    expect(confirmed.map((entry) => entry.messageId)).toEqual([ordered(1).messageId]);
  });

  it('drains a parked message again after a copy of its predecessor, in case the first delivery stopped before its drain', async () => {
    await consumeMessage(ordered(1), plan, deps);
    // Message 2 was parked while message 1 committed, and message 1's delivery ended before draining it.
    await db.send(
      new PutCommand({
        TableName: 'inbox',
        Item: {
          messageId: parkedKeyOf(ORDER_KEY, 2),
          orderKey: ORDER_KEY,
          seq: 2,
          parkedMessageId: ordered(2).messageId,
          topic: 'order.created',
          body: JSON.stringify(ordered(2)),
          parkedAt: FIXED_NOW.toISOString(),
        },
      }),
    );

    const copy = await consumeMessage(ordered(1), plan, deps);

    expect(settled(copy)).toEqual([
      ['self', 'DUPLICATE', 'APPLIED'],
      ['2', 'APPLIED', 'APPLIED'],
    ]);
    expect(await history()).toEqual(['step-1', 'step-2']);
  });

  it('deletes a parked row whose message another copy applied meanwhile', async () => {
    await consumeMessage(ordered(2), plan, deps);
    // A copy of 2 applied after 1, by a path that did not drain (1's delivery stopped before it).
    await consumeMessage(ordered(1), plan, { ...deps, client: withoutParkedReads(db) });
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toBeDefined();
    await consumeMessage(ordered(2), plan, { ...deps, client: withoutParkedReads(db) });

    const result = await consumeMessage(ordered(1), plan, deps);

    expect(settled(result)).toEqual([
      ['self', 'DUPLICATE', 'APPLIED'],
      ['2', 'DUPLICATE', 'APPLIED'],
    ]);
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toBeUndefined();
    expect(await history()).toEqual(['step-1', 'step-2']);
  });

  it('parks a claim-checked message with its reference and reads the payload only to apply it', async () => {
    const s3 = new MemoryObjectStore({ clock: () => FIXED_NOW });
    s3.createBucket(BUCKET, [{ prefix: CLAIM_CHECK_PREFIX, expireAfterDays: 47 }]);
    const { object, message: sent } = checkIn(ordered(2, { step: 'large' }), { bucket: BUCKET });
    await s3.put(object);
    const reading = { ...deps, claimCheck: { store: s3, bucket: BUCKET } };

    await consumeMessage(sent, plan, reading);
    const parked = await inboxRow(parkedKeyOf(ORDER_KEY, 2));
    expect(JSON.parse(String(parked?.body)).payload.claimCheck.key).toBe(object.key);

    const result = await consumeMessage(ordered(1), plan, reading);

    expect(settled(result)).toEqual([
      ['self', 'APPLIED', 'APPLIED'],
      ['2', 'APPLIED', 'APPLIED'],
    ]);
    expect(await history()).toEqual(['step-1', 'large']);
  });

  it('leaves a message without orderKey and seq on the unordered path: no cursor, no drain', async () => {
    const plain = envelope({
      messageId: testMessageId(7),
      aggregateId: 'order-1',
      payload: { step: 'plain' },
    });

    const result = await consumeMessage(plain, plan, deps);

    expect(result).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(db.items('inbox').map((item) => item.messageId)).toEqual([plain.messageId]);
  });
});

describe('consumeMessage on an ordered topic, at the wrap-up point', () => {
  it('stops draining once the invocation has no time left: the successors stay parked for the next apply', async () => {
    for (const seq of [3, 2]) await consumeMessage(ordered(seq), plan, deps);
    let left = 1_000;
    const timed: ConsumeDeps = {
      ...deps,
      remainingMs: () => left,
      confirmer: {
        confirm: async (messageId: string, _now: Date, outcome?: string): Promise<ConfirmOutcome> => {
          confirmed.push({ messageId, outcome });
          // Seq 1's confirm used the last of the invocation's time.
          left = 0;
          return 'CONFIRMED';
        },
      },
    };

    const result = await consumeMessage(ordered(1), plan, timed);

    expect(result).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED', drained: [] });
    expect(await history()).toEqual(['step-1']);
    expect(await inboxRow(parkedKeyOf(ORDER_KEY, 2))).toBeDefined();
    // The next delivery that reaches the key drains them, in order.
    const later = await consumeMessage(ordered(1), plan, deps);
    expect(settled(later).map(([seq]) => seq)).toEqual(['self', '2', '3']);
    expect(await history()).toEqual(['step-1', 'step-2', 'step-3']);
  });
});

/** The in-memory client with every parked row read answered "none": a delivery that does not drain. */
function withoutParkedReads(memory: MemoryDocumentClient): ConsumeDeps['client'] {
  return {
    send: async (command: unknown) => {
      if (command instanceof GetCommand && String(command.input.Key?.messageId).startsWith('parked#'))
        return {};
      return memory.send(command);
    },
  } as unknown as ConsumeDeps['client'];
}
