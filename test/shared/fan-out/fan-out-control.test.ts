import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { cursorKeyOf, PARKED_KEY_PREFIX } from '../../../shared/aws/inbox-table.ts';
import { ControlTopic, isControlTopic } from '../../../shared/message/control-topics.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { messageIdOf, type OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { SUBSCRIBERS, type Subscriber, world } from '../../support/fan-out-world.ts';

type World = ReturnType<typeof world>;

const ORDER_KEY = 'order#SKU-1';
const operator = { reason: 'data-protection request #12', actor: 'local:ops' };
/** Past a SENT delivery's confirmation deadline (5 minutes by default): the sweeper resends it. */
const PAST_DEADLINE_MS = 6 * 60_000;
/** Past any resend's confirmation deadline. */
const AN_HOUR_MS = 60 * 60_000;

/** An ordered world with ample stock and messages 1..n of SKU-1 written. */
async function ordered(n: number, options: Parameters<typeof world>[0] = {}): Promise<World> {
  const w = world({ ordered: true, ...options });
  await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 100 } }));
  for (let seq = 1; seq <= n; seq += 1) await w.write(seq);
  return w;
}

/** The seq a delivered body carries. */
const seqOf = (body: string): number => Number(JSON.parse(body).seq);

async function inboxItem(w: World, key: string): Promise<Record<string, unknown> | undefined> {
  return (await w.client.send(new GetCommand({ TableName: 'inbox', Key: { messageId: key } }))).Item;
}

async function parkedRows(w: World): Promise<string[]> {
  const { Items = [] } = await w.client.send(new ScanCommand({ TableName: 'inbox' }));
  return Items.map((row) => String(row.messageId))
    .filter((key) => key.startsWith(PARKED_KEY_PREFIX))
    .sort();
}

async function cursorOf(w: World, subscriber: Subscriber): Promise<unknown> {
  return (await inboxItem(w, cursorKeyOf(`${ORDER_KEY}#${subscriber}`)))?.lastSeq;
}

async function ledger(w: World, subscriber: Subscriber): Promise<unknown[]> {
  const { Item } = await w.client.send(new GetCommand({ TableName: 'ledger', Key: { subscriber } }));
  return (Item?.seqs as unknown[] | undefined) ?? [];
}

const controlRows = async (w: World): Promise<OutboxItem[]> =>
  (await w.rows()).filter((row) => isControlTopic(row.topic));
const businessRows = async (w: World): Promise<OutboxItem[]> =>
  (await w.rows()).filter((row) => !isControlTopic(row.topic));

/** Every plan call of either subscriber was a business message. */
function expectPlansSawNoControl(w: World): void {
  for (const subscriber of SUBSCRIBERS) {
    expect(w.planned[subscriber].filter((message) => isControlTopic(message.topic))).toEqual([]);
  }
}

/**
 * Messages 1 and 2 of SKU-1, both applied by loyalty; inventory never got 1 and holds 2 parked (its payload in its
 * inbox). Its deliveries were resent and lost again until they ran out of rounds, so they are FAILED: nothing of the
 * aggregate is in flight.
 */
async function parkedAtInventory(): Promise<{ w: World; ids: string[] }> {
  const w = await ordered(2, { maxAttempts: 1 });
  const ids = (await businessRows(w))
    .filter((row) => row.subscriber === 'inventory')
    .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
    .map(messageIdOf);
  await w.relay();
  const inventory = w.take('inventory');
  await w.deliver('inventory', inventory.find((body) => seqOf(body) === 2) ?? '');
  await w.consume('loyalty');
  await w.applyReceipts();
  // Each resend of them is lost too, until they run out of delivery rounds.
  for (let round = 0; round < 5; round += 1) {
    w.clock.advance(AN_HOUR_MS);
    await w.sweep();
    w.take('inventory');
    const rows = (await w.rows()).filter((row) => row.subscriber === 'inventory');
    if (rows.every((row) => row.status === MessageStatus.FAILED)) break;
  }
  const statuses = Object.fromEntries(
    (await w.rows()).map((row) => [`${row.subscriber} ${row.seq}`, row.status]),
  );
  expect(statuses).toEqual({
    'inventory 1': MessageStatus.FAILED,
    'inventory 2': MessageStatus.FAILED,
    'loyalty 1': MessageStatus.CONFIRMED,
    'loyalty 2': MessageStatus.CONFIRMED,
  });
  expect(await parkedRows(w)).toEqual([`${PARKED_KEY_PREFIX}${ORDER_KEY}#inventory#2`]);
  return { w, ids };
}

describe('erase of an aggregate delivered to subscribers: an outbox.erase to each, confirmed by receipt', () => {
  it('deletes the outbox rows, sends each subscriber an erase that deletes its parked copy; both confirm ERASED and no plan sees one', async () => {
    const { w, ids } = await parkedAtInventory();
    const admin = w.admin();

    const erased = await admin.erase({ aggregateId: 'SKU-1', ...operator });

    expect(erased).toMatchObject({ messagesDeleted: 2, parkedRowsDeleted: 0, skippedInFlight: [] });
    expect(erased.erasesSent.map((sent) => [sent.subscriber, sent.topic]).sort()).toEqual([
      ['inventory', ControlTopic.ERASE],
      ['loyalty', ControlTopic.ERASE],
    ]);
    expect(await businessRows(w)).toEqual([]);
    // One erase delivery per subscriber, listing the messages by id and place: never a payload.
    const controls = await controlRows(w);
    expect(controls.map((row) => [row.subscriber, row.status, row.aggregateId]).sort()).toEqual([
      ['inventory', MessageStatus.PENDING, 'SKU-1'],
      ['loyalty', MessageStatus.PENDING, 'SKU-1'],
    ]);
    for (const row of controls) {
      const { messages } = row.payload as { messages: { seq: number }[] };
      expect([...messages].sort((a, b) => a.seq - b.seq)).toEqual(
        ids.map((messageId, n) => ({ messageId, orderKey: ORDER_KEY, seq: n + 1 })),
      );
      // Unordered itself: no cursor holds it.
      expect(row).not.toHaveProperty('orderKey');
    }

    expect(await w.relay()).toMatchObject({ sent: 2, failed: 0 });
    expect(await w.consume('inventory')).toMatchObject([{ kind: 'APPLIED', outcome: 'ERASED' }]);
    expect(await w.consume('loyalty')).toMatchObject([{ kind: 'APPLIED', outcome: 'ERASED' }]);
    await w.applyReceipts();

    // Inventory's parked copy (its payload) is gone; loyalty's dedupe rows and cursor, which hold no payload, stay.
    expect(await parkedRows(w)).toEqual([]);
    for (const id of ids) expect(await inboxItem(w, deliveryIdOf(id, 'loyalty'))).toBeDefined();
    expect(await cursorOf(w, 'loyalty')).toBe(2);
    expect(await ledger(w, 'loyalty')).toEqual([1, 2]);
    expect(await ledger(w, 'inventory')).toEqual([]);
    for (const sent of erased.erasesSent) {
      const shown = await admin.showMessage(sent.messageId);
      expect(shown.message).toMatchObject({ topic: ControlTopic.ERASE, status: MessageStatus.CONFIRMED });
      expect(shown.deliveries?.map((d) => [d.subscriber, d.delivery.status, d.delivery.outcome])).toEqual([
        [sent.subscriber, MessageStatus.CONFIRMED, 'ERASED'],
      ]);
    }
    expectPlansSawNoControl(w);
  });

  it('a second erase is not held by the first one’s control deliveries, erases none of them, and sends nothing new', async () => {
    const { w } = await parkedAtInventory();
    const admin = w.admin();
    const first = await admin.erase({ aggregateId: 'SKU-1', ...operator });

    // The first erase's deliveries are still PENDING: they hold ids only, and are no message of the aggregate's.
    const again = await admin.erase({ aggregateId: 'SKU-1', ...operator });

    expect(again).toMatchObject({ messagesDeleted: 0, erasesSent: [] });
    expect((await controlRows(w)).map(messageIdOf).sort()).toEqual(
      first.erasesSent.map((sent) => sent.messageId).sort(),
    );
  });

  it('a duplicated erase is applied once and confirmed once; a lost receipt costs one resend, answered from the inbox', async () => {
    const { w } = await parkedAtInventory();
    const { erasesSent } = await w.admin().erase({ aggregateId: 'SKU-1', ...operator });
    const inventoryErase = erasesSent.find((sent) => sent.subscriber === 'inventory');
    await w.relay();
    const [body] = w.take('inventory');
    w.channel.losing.add('inventory');

    expect(await w.deliver('inventory', body ?? '')).toMatchObject({ kind: 'APPLIED', outcome: 'ERASED' });
    expect(await w.deliver('inventory', body ?? '')).toMatchObject({ kind: 'DUPLICATE', outcome: 'ERASED' });
    await w.applyReceipts();
    const row = async () =>
      (await controlRows(w)).find((control) => control.subscriber === 'inventory') as OutboxItem;
    expect((await row()).status).toBe(MessageStatus.SENT);

    // Its receipts were lost: past the deadline the sweeper resends the erase once, and the inbox answers it.
    w.channel.losing.clear();
    w.clock.advance(PAST_DEADLINE_MS);
    const sentBefore = w.sends.filter((send) => send.messageId === inventoryErase?.messageId).length;
    await w.sweep();
    expect(w.sends.filter((send) => send.messageId === inventoryErase?.messageId)).toHaveLength(
      sentBefore + 1,
    );
    expect(await w.consume('inventory')).toMatchObject([{ kind: 'DUPLICATE', outcome: 'ERASED' }]);
    await w.applyReceipts();
    // A copy of its receipt arriving late changes nothing.
    w.channel.arrived.push(...w.channel.applied.slice(-1));
    await w.applyReceipts();

    const confirmed = await row();
    expect(confirmed).toMatchObject({ status: MessageStatus.CONFIRMED, outcome: 'ERASED', resends: 1 });
    expect((confirmed.history ?? []).filter((entry) => entry.event === 'CONFIRMED')).toHaveLength(1);
    expect(await parkedRows(w)).toEqual([]);
    expectPlansSawNoControl(w);
  });

  it('a lost erase message is sent again past its deadline and applied then', async () => {
    const { w } = await parkedAtInventory();
    await w.admin().erase({ aggregateId: 'SKU-1', ...operator });
    await w.relay();
    expect(w.take('inventory')).toHaveLength(1);
    await w.consume('loyalty');
    await w.applyReceipts();
    expect(await parkedRows(w)).toHaveLength(1);

    w.clock.advance(PAST_DEADLINE_MS);
    expect(await w.sweep()).toMatchObject({ requeued: 1, sent: 1 });
    expect(w.take('loyalty')).toEqual([]);
    expect(await w.consume('inventory')).toMatchObject([{ kind: 'APPLIED', outcome: 'ERASED' }]);
    await w.applyReceipts();

    expect(await parkedRows(w)).toEqual([]);
    expect((await controlRows(w)).map((row) => [row.subscriber, row.status, row.outcome]).sort()).toEqual([
      ['inventory', MessageStatus.CONFIRMED, 'ERASED'],
      ['loyalty', MessageStatus.CONFIRMED, 'ERASED'],
    ]);
  });
});

describe('skip at one subscriber: an outbox.skip to it, which moves its cursor and applies what it parked', () => {
  /**
   * Messages 1..3 of SKU-1: inventory's queue refused seq 1 (FAILED at once: one attempt), and took 2 and 3, which its
   * consumer holds parked behind the gap; loyalty applied all three.
   */
  async function gapAtInventory(): Promise<World> {
    const w = await ordered(1, { maxAttempts: 1 });
    w.down.add('inventory');
    await w.relay();
    w.down.clear();
    await w.write(2);
    await w.write(3);
    await w.relay();
    for (const body of w.take('inventory')) {
      expect(await w.deliver('inventory', body)).toMatchObject({ kind: 'PARKED' });
    }
    while ((await w.consume('loyalty')).length > 0);
    await w.applyReceipts();
    expect(
      Object.fromEntries((await w.rows()).map((row) => [`${row.subscriber} ${row.seq}`, row.status])),
    ).toEqual({
      'inventory 1': MessageStatus.FAILED,
      'inventory 2': MessageStatus.SENT,
      'inventory 3': MessageStatus.SENT,
      'loyalty 1': MessageStatus.CONFIRMED,
      'loyalty 2': MessageStatus.CONFIRMED,
      'loyalty 3': MessageStatus.CONFIRMED,
    });
    expect(await parkedRows(w)).toHaveLength(2);
    return w;
  }

  it("cancels that subscriber's delivery, sends it a skip; its cursor moves, its parked successors apply, the other is untouched", async () => {
    const w = await gapAtInventory();
    const sentToLoyalty = w.sends.filter((send) => send.subscriber === 'loyalty').length;

    const skipped = await w.admin().skipOrderGap({
      orderKey: ORDER_KEY,
      seq: 1,
      subscriber: 'inventory',
      reason: 'order withdrawn',
      actor: 'local:ops',
    });

    expect(skipped).toMatchObject({
      orderKey: `${ORDER_KEY}#inventory`,
      subscriber: 'inventory',
      from: MessageStatus.FAILED,
      to: MessageStatus.CANCELLED,
      cursors: [],
      skipSent: { subscriber: 'inventory', topic: ControlTopic.SKIP },
      // Parked at inventory: applied right after the skip, never resent for it.
      successor: { seq: 2, status: MessageStatus.SENT, action: 'LEFT' },
      changed: true,
    });
    const control = (await controlRows(w))[0];
    expect(control).toMatchObject({
      subscriber: 'inventory',
      status: MessageStatus.PENDING,
      payload: { orderKey: ORDER_KEY, seq: 1 },
    });
    const byPlace = async () =>
      Object.fromEntries((await businessRows(w)).map((row) => [`${row.subscriber} ${row.seq}`, row]));
    expect((await byPlace())['inventory 1']).toMatchObject({ status: MessageStatus.CANCELLED });
    expect((await byPlace())['inventory 1']).toHaveProperty('skippedAt');

    expect(await w.relay()).toMatchObject({ sent: 1 });
    const [skip] = w.take('inventory');
    expect(JSON.parse(skip ?? '{}')).toMatchObject({
      topic: ControlTopic.SKIP,
      payload: { orderKey: ORDER_KEY, seq: 1 },
    });

    const result = await w.deliver('inventory', skip ?? '');
    expect(result).toMatchObject({ kind: 'APPLIED', outcome: 'SKIPPED' });
    expect(result.drained?.map((drained) => [drained.message.seq, drained.kind])).toEqual([
      [2, 'APPLIED'],
      [3, 'APPLIED'],
    ]);
    await w.applyReceipts();

    expect(await cursorOf(w, 'inventory')).toBe(3);
    expect(await ledger(w, 'inventory')).toEqual([2, 3]);
    expect(await parkedRows(w)).toEqual([]);
    const rows = await byPlace();
    expect(
      Object.fromEntries(Object.entries(rows).map(([place, row]) => [place, [row.status, row.outcome]])),
    ).toEqual({
      'inventory 1': [MessageStatus.CANCELLED, undefined],
      'inventory 2': [MessageStatus.CONFIRMED, 'APPLIED'],
      'inventory 3': [MessageStatus.CONFIRMED, 'APPLIED'],
      'loyalty 1': [MessageStatus.CONFIRMED, 'AWARDED'],
      'loyalty 2': [MessageStatus.CONFIRMED, 'AWARDED'],
      'loyalty 3': [MessageStatus.CONFIRMED, 'AWARDED'],
    });
    expect(await controlRows(w)).toMatchObject([{ status: MessageStatus.CONFIRMED, outcome: 'SKIPPED' }]);
    // Loyalty was sent nothing more, and its sequence is as it was.
    expect(w.sends.filter((send) => send.subscriber === 'loyalty')).toHaveLength(sentToLoyalty);
    expect(await cursorOf(w, 'loyalty')).toBe(3);
    expect(await ledger(w, 'loyalty')).toEqual([1, 2, 3]);
    expectPlansSawNoControl(w);
  });

  it('a skip that arrives twice moves the cursor once; the copy answers SKIPPED again and confirms nothing new', async () => {
    const w = await gapAtInventory();
    await w.admin().skipOrderGap({ orderKey: `${ORDER_KEY}#inventory`, seq: 1, ...operator });
    await w.relay();
    const [skip] = w.take('inventory');

    expect(await w.deliver('inventory', skip ?? '')).toMatchObject({ kind: 'APPLIED', outcome: 'SKIPPED' });
    expect(await w.deliver('inventory', skip ?? '')).toMatchObject({
      kind: 'DUPLICATE',
      outcome: 'SKIPPED',
      drained: [],
    });
    await w.applyReceipts();

    expect(await cursorOf(w, 'inventory')).toBe(3);
    expect(await ledger(w, 'inventory')).toEqual([2, 3]);
    const [control] = await controlRows(w);
    expect(control).toMatchObject({ status: MessageStatus.CONFIRMED, outcome: 'SKIPPED' });
    expect((control?.history ?? []).filter((entry) => entry.event === 'CONFIRMED')).toHaveLength(1);
  });

  it('a skip the subscriber is already past answers ALREADY_PAST and moves nothing', async () => {
    const w = await gapAtInventory();
    await w.admin().skipOrderGap({ orderKey: ORDER_KEY, seq: 1, subscriber: 'inventory', ...operator });
    await w.relay();
    for (const body of w.take('inventory')) await w.deliver('inventory', body);
    const again = await w.admin().skipOrderGap({
      orderKey: ORDER_KEY,
      seq: 1,
      subscriber: 'inventory',
      ...operator,
    });
    expect(again).toMatchObject({ from: MessageStatus.CANCELLED, cancelled: false, changed: true });
    await w.relay();
    const [second] = w.take('inventory');

    expect(await cursorOf(w, 'inventory')).toBe(3);

    expect(await w.deliver('inventory', second ?? '')).toMatchObject({
      kind: 'REJECTED',
      outcome: 'ALREADY_PAST at seq 3',
    });
    await w.applyReceipts();
    expect(await cursorOf(w, 'inventory')).toBe(3);
    expect(
      (await controlRows(w)).map((row) => row.outcome).sort((a, b) => String(a).localeCompare(String(b))),
    ).toEqual(['ALREADY_PAST at seq 3', 'SKIPPED']);
    expectPlansSawNoControl(w);
  });
});

describe('skip of an order key delivered to subscribers', () => {
  it('without a subscriber is refused, naming the subscribers whose sequences hold the seq', async () => {
    const w = await ordered(1);
    await expect(w.admin().skipOrderGap({ orderKey: ORDER_KEY, seq: 1, ...operator })).rejects.toMatchObject({
      httpStatus: 400,
      field: 'subscriber',
      message: /inventory, loyalty/,
    });
    expect(await controlRows(w)).toEqual([]);
  });
});
