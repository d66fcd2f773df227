import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cursorKeyOf, PARKED_KEY_PREFIX } from '../../../shared/aws/inbox-table.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { messageIdOf } from '../../../shared/outbox/outbox-item.ts';
import { SUBSCRIBERS, type Subscriber, world } from '../../support/fan-out-world.ts';

const RUNS = { numRuns: 40, seed: 20_261_202 } as const;
/** Messages of the one aggregate (SKU-1) each test writes. */
const K = 5;
const ORDER_KEY = 'order#SKU-1';
const SEQS = Array.from({ length: K }, (_, i) => i + 1);

type World = ReturnType<typeof world>;

/** An ordered world with ample stock, `K` messages of SKU-1 written and relayed. */
async function written(): Promise<{ w: World; ids: string[] }> {
  const w = world({ ordered: true, maxAttempts: 10, auditSends: true });
  await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 100 } }));
  const ids: string[] = [];
  for (const n of SEQS) ids.push((await w.write(n)).messageId);
  return { w, ids };
}

/** The seq a delivered body carries. */
const seqOf = (body: string): number => Number(JSON.parse(body).seq);

/** The seqs `subscriber` applied, as its ledger row records them (appended in each apply's transaction). */
async function ledger(w: World, subscriber: Subscriber): Promise<unknown[]> {
  const { Item } = await w.client.send(new GetCommand({ TableName: 'ledger', Key: { subscriber } }));
  return (Item?.seqs as unknown[] | undefined) ?? [];
}

/** The seqs `subscriber`'s consumer reported APPLIED, in the order it applied them (a drained one after its own). */
function appliedSeqs(w: World, subscriber: Subscriber): (number | undefined)[] {
  return w.consumed
    .filter((placed) => placed.subscriber === subscriber && placed.kind === 'APPLIED')
    .map((placed) => placed.seq);
}

async function statusBySeq(w: World, subscriber: Subscriber): Promise<Record<number, string>> {
  const rows = (await w.rows()).filter((row) => row.subscriber === subscriber);
  return Object.fromEntries(rows.map((row) => [row.seq ?? 0, row.status]));
}

async function cursorOf(w: World, subscriber: Subscriber): Promise<unknown> {
  const { Item } = await w.client.send(
    new GetCommand({ TableName: 'inbox', Key: { messageId: cursorKeyOf(`${ORDER_KEY}#${subscriber}`) } }),
  );
  return Item?.lastSeq;
}

/** Each subscriber applied 1..k in order, once each, every delivery is CONFIRMED and nothing is left parked. */
async function expectAllAppliedInOrder(w: World): Promise<void> {
  for (const subscriber of SUBSCRIBERS) {
    expect(await ledger(w, subscriber)).toEqual(SEQS);
    expect(appliedSeqs(w, subscriber)).toEqual(SEQS);
    expect(Object.values(await statusBySeq(w, subscriber))).toEqual(SEQS.map(() => MessageStatus.CONFIRMED));
  }
  expect(await parkedRows(w)).toEqual([]);
}

async function parkedRows(w: World): Promise<unknown[]> {
  const { Items = [] } = await w.client.send(new ScanCommand({ TableName: 'inbox' }));
  return Items.filter((row) => String(row.messageId).startsWith(PARKED_KEY_PREFIX));
}

describe('fan-out of an ordered topic: each subscriber has its own sequence', () => {
  it('stores each delivery under <orderKey>#<subscriber> with seqs 1..k; the wire carries the order key as written', async () => {
    const { w, ids } = await written();

    const rows = await w.rows();
    expect(rows.map((row) => [messageIdOf(row), row.subscriber, row.orderKey, row.seq]).sort()).toEqual(
      SUBSCRIBERS.flatMap((subscriber) =>
        ids.map((id, i) => [id, subscriber, `${ORDER_KEY}#${subscriber}`, i + 1]),
      ).sort(),
    );
    // One counter for the aggregate: both subscribers' deliveries of a message share its seq.
    const { Item: counter } = await w.client.send(
      new GetCommand({ TableName: 'sequences', Key: { orderKey: ORDER_KEY } }),
    );
    expect(counter?.lastSeq).toBe(K);

    expect(await w.relay()).toMatchObject({ sent: 2 * K, failed: 0, held: 0 });
    for (const subscriber of SUBSCRIBERS) {
      const bodies = w.take(subscriber).map((body) => JSON.parse(body));
      expect(bodies.map((body) => [body.messageId, body.orderKey, body.seq])).toEqual(
        ids.map((id, i) => [id, ORDER_KEY, i + 1]),
      );
      expect(bodies.every((body) => !('subscriber' in body))).toBe(true);
    }
  });

  it('each subscriber applies its seqs 1..k in order, each once, whatever order and copies they arrive in', async () => {
    // Every delivery (subscriber, seq) arrives once or twice; all of them, both subscribers', in one random order.
    const copies = fc.array(fc.integer({ min: 1, max: 2 }), {
      minLength: 2 * K,
      maxLength: 2 * K,
    });
    const arrivals = copies.chain((counts) => {
      const deliveries = SUBSCRIBERS.flatMap((subscriber, s) =>
        SEQS.flatMap((seq) =>
          Array.from({ length: counts[s * K + seq - 1] as number }, () => ({ subscriber, seq })),
        ),
      );
      return fc.shuffledSubarray(deliveries, { minLength: deliveries.length });
    });
    await fc.assert(
      fc.asyncProperty(arrivals, async (order) => {
        const { w, ids } = await written();
        await w.relay();
        const bodies = Object.fromEntries(
          SUBSCRIBERS.map((subscriber) => [
            subscriber,
            new Map(w.take(subscriber).map((body) => [seqOf(body), body])),
          ]),
        ) as Record<Subscriber, Map<number, string>>;

        for (const { subscriber, seq } of order)
          await w.deliver(subscriber, bodies[subscriber].get(seq) ?? '');
        await w.applyReceipts();

        for (const subscriber of SUBSCRIBERS) {
          expect(appliedSeqs(w, subscriber)).toEqual(SEQS);
          expect(await ledger(w, subscriber)).toEqual(SEQS);
          expect(await cursorOf(w, subscriber)).toBe(K);
          expect(Object.values(await statusBySeq(w, subscriber))).toEqual(
            SEQS.map(() => MessageStatus.CONFIRMED),
          );
        }
        // Each message placed is the one its seq names.
        expect(w.consumed.filter((placed) => placed.messageId !== ids[(placed.seq ?? 0) - 1])).toEqual([]);
        expect(await parkedRows(w)).toEqual([]);
        const stock = await w.client.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
        const points = await w.client.send(
          new GetCommand({ TableName: 'points', Key: { customerId: 'c-1' } }),
        );
        expect([stock.Item?.available, points.Item?.points]).toEqual([100 - K, 10 * K]);
      }),
      RUNS,
    );
  });

  it("whichever of one subscriber's seqs are lost, the other's all apply and confirm; the sweeper's resends close the gaps in order", async () => {
    const lossArb = fc.record({
      lossy: fc.constantFrom(...SUBSCRIBERS),
      lost: fc.subarray(SEQS, { minLength: 1 }),
      order: fc.shuffledSubarray(SEQS, { minLength: K }),
    });
    await fc.assert(
      fc.asyncProperty(lossArb, async ({ lossy, lost, order }) => {
        const other = SUBSCRIBERS.find((s) => s !== lossy) as Subscriber;
        const { w } = await written();
        await w.relay();
        const bodies = Object.fromEntries(
          SUBSCRIBERS.map((subscriber) => [
            subscriber,
            new Map(w.take(subscriber).map((body) => [seqOf(body), body])),
          ]),
        ) as Record<Subscriber, Map<number, string>>;
        for (const seq of order) {
          if (!lost.includes(seq)) await w.deliver(lossy, bodies[lossy].get(seq) ?? '');
          await w.deliver(other, bodies[other].get(seq) ?? '');
        }
        await w.applyReceipts();

        // The other subscriber never waits for the lossy one's gaps.
        expect(await ledger(w, other)).toEqual(SEQS);
        expect(Object.values(await statusBySeq(w, other))).toEqual(SEQS.map(() => MessageStatus.CONFIRMED));
        // The lossy one applied exactly the seqs before its first gap, in order.
        const before = SEQS.filter((seq) => seq < Math.min(...lost));
        expect(await ledger(w, lossy)).toEqual(before);
        const sentToOther = w.sends.filter((send) => send.subscriber === other).length;

        for (let round = 0; round < 5; round += 1) {
          w.clock.advance(13 * 3_600_000);
          await w.sweep();
          for (const subscriber of SUBSCRIBERS) while ((await w.consume(subscriber)).length > 0);
          await w.applyReceipts();
          if ((await w.rows()).every((row) => row.status === MessageStatus.CONFIRMED)) break;
        }

        await expectAllAppliedInOrder(w);
        // The other's confirmed deliveries were never sent again.
        expect(w.sends.filter((send) => send.subscriber === other)).toHaveLength(sentToOther);
        expect(
          w.sends.filter(
            (send) => send.rowStatus !== MessageStatus.SENT || send.rowSubscriber !== send.subscriber,
          ),
        ).toEqual([]);
      }),
      RUNS,
    );
  });

  it("a subscriber that lost seq 2 holds only its own later seqs; the other's go through, and the resend closes the gap", async () => {
    const { w } = await written();
    await w.relay();
    const inventory = new Map(w.take('inventory').map((body) => [seqOf(body), body]));
    const loyalty = new Map(w.take('loyalty').map((body) => [seqOf(body), body]));

    // Inventory's copy of seq 2 is lost; the rest arrive out of order.
    for (const seq of [5, 3, 1, 4]) await w.deliver('inventory', inventory.get(seq) ?? '');
    for (const seq of [4, 2, 5, 1, 3]) await w.deliver('loyalty', loyalty.get(seq) ?? '');
    await w.applyReceipts();

    expect(await ledger(w, 'loyalty')).toEqual(SEQS);
    expect(await statusBySeq(w, 'loyalty')).toEqual(
      Object.fromEntries(SEQS.map((seq) => [seq, MessageStatus.CONFIRMED])),
    );
    expect(await ledger(w, 'inventory')).toEqual([1]);
    expect(await cursorOf(w, 'inventory')).toBe(1);
    expect(
      w.consumed
        .filter((placed) => placed.subscriber === 'inventory')
        .map((placed) => [placed.seq, placed.kind]),
    ).toEqual([
      [5, 'PARKED'],
      [3, 'PARKED'],
      [1, 'APPLIED'],
      [4, 'PARKED'],
    ]);
    // Parked deliveries are not confirmed: only seq 1 of inventory's is.
    expect(await statusBySeq(w, 'inventory')).toEqual({
      1: MessageStatus.CONFIRMED,
      2: MessageStatus.SENT,
      3: MessageStatus.SENT,
      4: MessageStatus.SENT,
      5: MessageStatus.SENT,
    });

    // Past the confirmation deadline the sweeper resends inventory's unconfirmed deliveries, and only those.
    const sentBefore = w.sends.length;
    w.clock.advance(6 * 60_000);
    expect(await w.sweep()).toMatchObject({ requeued: 4, sent: 4, failed: 0 });
    const resent = w.sends.slice(sentBefore);
    expect(resent.map((send) => send.subscriber)).toEqual([
      'inventory',
      'inventory',
      'inventory',
      'inventory',
    ]);
    expect(w.take('loyalty')).toEqual([]);

    const results = await w.consume('inventory');
    expect(results.map((result) => result.kind)).toEqual(['APPLIED', 'DUPLICATE', 'DUPLICATE', 'DUPLICATE']);
    // Seq 2 applied, then its parked successors drained in order.
    expect(results[0]?.drained?.map((drained) => [drained.message.seq, drained.kind])).toEqual([
      [3, 'APPLIED'],
      [4, 'APPLIED'],
      [5, 'APPLIED'],
    ]);
    await w.applyReceipts();

    await expectAllAppliedInOrder(w);
    // No delivery was sent but under its own SENT mark, to its own subscriber.
    expect(
      w.sends.filter(
        (send) => send.rowStatus !== MessageStatus.SENT || send.rowSubscriber !== send.subscriber,
      ),
    ).toEqual([]);
  });
});
