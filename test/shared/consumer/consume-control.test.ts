import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { cursorKeyOf, PARKED_KEY_PREFIX, parkedKeyOf } from '../../../shared/aws/inbox-table.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { PoisonMessageError } from '../../../shared/errors.ts';
import { type ConsumeDeps, consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { ControlTopic } from '../../../shared/message/control-topics.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import type { ConfirmOutcome } from '../../../shared/outbox/outbox-store.ts';
import { envelope, FIXED_NOW, MEMORY_TABLE_SCHEMAS, testMessageId } from '../../support/factories.ts';

const SUBSCRIBER = 'inventory';
const ORDER_KEY = 'order#order-1';
/** Where this subscriber files the order key's cursor and parked rows. */
const FILED_UNDER = `${ORDER_KEY}#${SUBSCRIBER}`;

/** Message `seq` of order-1, as the producer sends it (the order key as written, the same for every subscriber). */
const ordered = (seq: number): Envelope =>
  envelope({ messageId: testMessageId(100 + seq), orderKey: ORDER_KEY, seq, payload: { step: seq } });

const control = (topic: string, payload: unknown, n = 1): Envelope =>
  envelope({ messageId: testMessageId(900 + n), topic, aggregateId: 'order-1', payload });

const erase = (messages: readonly Envelope[], n = 1): Envelope =>
  control(
    ControlTopic.ERASE,
    {
      messages: messages.map(({ messageId, orderKey, seq }) => ({
        messageId,
        ...(orderKey === undefined ? {} : { orderKey, seq }),
      })),
    },
    n,
  );

const skip = (seq: number, n = 1): Envelope => control(ControlTopic.SKIP, { orderKey: ORDER_KEY, seq }, n);

let db: MemoryDocumentClient;
let confirmed: { messageId: string; outcome: string | undefined }[];
/** Every message the plan was handed. */
let planned: Envelope[];
let deps: ConsumeDeps;

/** Records each step it is handed in the order's history. */
const plan: PlanEffect = (message) => {
  planned.push(message);
  return {
    apply: [
      {
        Update: {
          TableName: 'orders',
          Key: { orderId: 'order-1' },
          UpdateExpression: 'SET #steps = list_append(if_not_exists(#steps, :none), :step)',
          ExpressionAttributeNames: { '#steps': 'steps' },
          ExpressionAttributeValues: { ':none': [], ':step': [(message.payload as { step: number }).step] },
        },
      },
    ],
    onConditionFailure: 'NEVER',
  };
};

beforeEach(() => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  confirmed = [];
  planned = [];
  deps = {
    client: db.asDocumentClient(),
    inboxTable: 'inbox',
    subscriber: SUBSCRIBER,
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

async function inboxKeys(): Promise<string[]> {
  const { Items = [] } = await db.asDocumentClient().send(new ScanCommand({ TableName: 'inbox' }));
  return Items.map((row) => String(row.messageId)).sort();
}

async function row(key: string): Promise<Record<string, unknown> | undefined> {
  return (await db.asDocumentClient().send(new GetCommand({ TableName: 'inbox', Key: { messageId: key } })))
    .Item;
}

async function steps(): Promise<unknown> {
  const { Item } = await db
    .asDocumentClient()
    .send(new GetCommand({ TableName: 'orders', Key: { orderId: 'order-1' } }));
  return Item?.steps ?? [];
}

const cursor = async (): Promise<unknown> => (await row(cursorKeyOf(FILED_UNDER)))?.lastSeq;

describe('outbox.erase in the consumer', () => {
  it('deletes the parked rows of the listed messages only, records ERASED and confirms it; the plan never sees it', async () => {
    await consumeMessage(ordered(1), plan, deps);
    await consumeMessage(ordered(3), plan, deps);
    await consumeMessage(ordered(4), plan, deps);
    const parkedBefore = (await inboxKeys()).filter((key) => key.startsWith(PARKED_KEY_PREFIX));
    expect(parkedBefore).toEqual([parkedKeyOf(FILED_UNDER, 3), parkedKeyOf(FILED_UNDER, 4)]);
    planned = [];
    confirmed = [];

    // Seq 3 is erased; seq 4 is listed under another message's id (a different message at its place): kept.
    const request = erase([ordered(3), { ...ordered(4), messageId: testMessageId(555) }]);
    const result = await consumeMessage(request, plan, deps);

    expect(result).toEqual({ kind: 'APPLIED', outcome: 'ERASED', confirmation: 'CONFIRMED' });
    expect((await inboxKeys()).filter((key) => key.startsWith(PARKED_KEY_PREFIX))).toEqual([
      parkedKeyOf(FILED_UNDER, 4),
    ]);
    expect(await row(deliveryIdOf(request.messageId, SUBSCRIBER))).toMatchObject({
      topic: ControlTopic.ERASE,
      outcome: 'ERASED',
    });
    // Dedupe rows and the cursor stay: a copy still in a queue must not be applied twice.
    expect(await row(deliveryIdOf(ordered(1).messageId, SUBSCRIBER))).toBeDefined();
    expect(await cursor()).toBe(1);
    expect(confirmed).toEqual([{ messageId: request.messageId, outcome: 'ERASED' }]);
    expect(planned).toEqual([]);
  });

  it('a copy is a duplicate that confirms the outcome again, deleting nothing more', async () => {
    await consumeMessage(ordered(2), plan, deps);
    const request = erase([ordered(2)]);
    await consumeMessage(request, plan, deps);
    const keys = await inboxKeys();

    const copy = await consumeMessage(request, plan, deps);

    expect(copy).toEqual({ kind: 'DUPLICATE', outcome: 'ERASED', confirmation: 'CONFIRMED' });
    expect(await inboxKeys()).toEqual(keys);
    expect(confirmed.slice(-2)).toEqual([
      { messageId: request.messageId, outcome: 'ERASED' },
      { messageId: request.messageId, outcome: 'ERASED' },
    ]);
  });

  it('erases in a consumer without a subscriber too, its rows filed under the message ids alone', async () => {
    const { subscriber: _, ...single } = deps;
    await consumeMessage(ordered(2), plan, single);
    expect(await row(parkedKeyOf(ORDER_KEY, 2))).toBeDefined();

    await expect(consumeMessage(erase([ordered(2)]), plan, single)).resolves.toMatchObject({
      outcome: 'ERASED',
    });

    expect(await row(parkedKeyOf(ORDER_KEY, 2))).toBeUndefined();
    expect(await row(erase([]).messageId)).toMatchObject({ outcome: 'ERASED' });
  });
});

describe('outbox.skip in the consumer', () => {
  it('moves the cursor from seq - 1 to seq, applies the parked messages after it, and confirms each', async () => {
    await consumeMessage(ordered(1), plan, deps);
    await consumeMessage(ordered(3), plan, deps);
    await consumeMessage(ordered(4), plan, deps);
    confirmed = [];
    planned = [];

    const result = await consumeMessage(skip(2), plan, deps);

    expect(result).toMatchObject({ kind: 'APPLIED', outcome: 'SKIPPED', confirmation: 'CONFIRMED' });
    expect(result.drained?.map((drained) => [drained.message.seq, drained.kind])).toEqual([
      [3, 'APPLIED'],
      [4, 'APPLIED'],
    ]);
    expect(await cursor()).toBe(4);
    expect(await steps()).toEqual([1, 3, 4]);
    expect((await inboxKeys()).filter((key) => key.startsWith(PARKED_KEY_PREFIX))).toEqual([]);
    expect(confirmed).toEqual([
      { messageId: skip(2).messageId, outcome: 'SKIPPED' },
      { messageId: ordered(3).messageId, outcome: 'APPLIED' },
      { messageId: ordered(4).messageId, outcome: 'APPLIED' },
    ]);
    // The plan saw the drained messages, and never the skip.
    expect(planned.map((message) => message.topic)).toEqual(['order.created', 'order.created']);
  });

  it('skips seq 1 of an order key it has no cursor of yet', async () => {
    await consumeMessage(ordered(2), plan, deps);

    await expect(consumeMessage(skip(1), plan, deps)).resolves.toMatchObject({
      outcome: 'SKIPPED',
      drained: [{ kind: 'APPLIED' }],
    });
    expect(await cursor()).toBe(2);
  });

  it('answers ALREADY_PAST, naming the cursor, when it is at or past the seq; nothing moves', async () => {
    await consumeMessage(ordered(1), plan, deps);
    await consumeMessage(ordered(2), plan, deps);

    await expect(consumeMessage(skip(2), plan, deps)).resolves.toMatchObject({
      kind: 'REJECTED',
      outcome: 'ALREADY_PAST at seq 2',
      confirmation: 'CONFIRMED',
    });
    expect(await cursor()).toBe(2);
    expect(await row(deliveryIdOf(skip(2).messageId, SUBSCRIBER))).toMatchObject({
      outcome: 'ALREADY_PAST at seq 2',
    });
  });

  it('answers EARLIER_GAP, naming the cursor, when it is further behind; nothing moves and nothing parked is applied', async () => {
    await consumeMessage(ordered(1), plan, deps);
    await consumeMessage(ordered(4), plan, deps);

    const result = await consumeMessage(skip(3), plan, deps);

    expect(result).toEqual({ kind: 'REJECTED', outcome: 'EARLIER_GAP at seq 1', confirmation: 'CONFIRMED' });
    expect(await cursor()).toBe(1);
    expect(await row(parkedKeyOf(FILED_UNDER, 4))).toBeDefined();
    // Its copy answers the same, and still applies nothing.
    await expect(consumeMessage(skip(3), plan, deps)).resolves.toEqual({
      kind: 'DUPLICATE',
      outcome: 'EARLIER_GAP at seq 1',
      confirmation: 'CONFIRMED',
    });
    expect(await row(parkedKeyOf(FILED_UNDER, 4))).toBeDefined();
  });

  it('a copy of an applied skip is a duplicate: the cursor moved once', async () => {
    await consumeMessage(ordered(1), plan, deps);
    await consumeMessage(skip(2), plan, deps);
    await consumeMessage(ordered(3), plan, deps);

    await expect(consumeMessage(skip(2), plan, deps)).resolves.toMatchObject({
      kind: 'DUPLICATE',
      outcome: 'SKIPPED',
    });
    expect(await cursor()).toBe(3);
    expect(await steps()).toEqual([1, 3]);
  });
});

describe('a control message the consumer cannot apply', () => {
  it.each([
    ['an erase without messages', control(ControlTopic.ERASE, { messages: [] })],
    [
      'an erase of a message id that is not one',
      control(ControlTopic.ERASE, { messages: [{ messageId: 'x' }] }),
    ],
    ['a skip without a seq', control(ControlTopic.SKIP, { orderKey: ORDER_KEY })],
    ['a control topic this version does not know', control('outbox.rewind', { orderKey: ORDER_KEY, seq: 1 })],
  ])(
    'is poison (%s): nothing recorded, nothing confirmed, the plan never sees it',
    async (_case, message) => {
      await expect(consumeMessage(message, plan, deps)).rejects.toThrow(PoisonMessageError);
      expect(await inboxKeys()).toEqual([]);
      expect(confirmed).toEqual([]);
      expect(planned).toEqual([]);
    },
  );
});
