import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { messageIdOf } from '../../../shared/outbox/outbox-item.ts';
import { SUBSCRIBERS, type Subscriber, world } from '../../support/fan-out-world.ts';

const RUNS = { numRuns: 50, seed: 20_261_202 } as const;
/** Enough stock that no order is ever refused: each message takes one. */
const STOCK = 1_000;
/** Past the longest confirmation deadline (12 hours, however often a delivery was resent). */
const HEAL_ADVANCE_MS = 13 * 3_600_000;
const HEAL_ROUNDS = 30;

type World = ReturnType<typeof world>;

/** One thing that happens to the fan-out between the writes and the heal. */
type Step =
  | { readonly kind: 'relay' }
  | { readonly kind: 'consume'; readonly subscriber: Subscriber }
  | { readonly kind: 'applyReceipts' }
  | { readonly kind: 'sweep'; readonly advanceMs: number }
  | { readonly kind: 'toggleLoss'; readonly subscriber: Subscriber }
  | { readonly kind: 'toggleOutage'; readonly subscriber: Subscriber }
  /** An earlier receipt arrives again, and every receipt waiting to be applied arrives twice. */
  | { readonly kind: 'duplicateReceipts'; readonly pick: number }
  /** SQS hands a subscriber a copy of a message it received before (at-least-once delivery). */
  | { readonly kind: 'redeliver'; readonly subscriber: Subscriber; readonly pick: number };

const subscriberArb = fc.constantFrom(...SUBSCRIBERS);
/** Seconds, minutes or hours. */
const advanceArb = fc.oneof(
  fc.integer({ min: 1, max: 59 }).map((s) => s * 1_000),
  fc.integer({ min: 1, max: 59 }).map((m) => m * 60_000),
  fc.integer({ min: 1, max: 6 }).map((h) => h * 3_600_000),
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'relay' } as const), weight: 2 },
  { arbitrary: subscriberArb.map((subscriber) => ({ kind: 'consume', subscriber }) as const), weight: 3 },
  { arbitrary: fc.constant({ kind: 'applyReceipts' } as const), weight: 2 },
  { arbitrary: advanceArb.map((advanceMs) => ({ kind: 'sweep', advanceMs }) as const), weight: 2 },
  { arbitrary: subscriberArb.map((subscriber) => ({ kind: 'toggleLoss', subscriber }) as const), weight: 1 },
  {
    arbitrary: subscriberArb.map((subscriber) => ({ kind: 'toggleOutage', subscriber }) as const),
    weight: 1,
  },
  { arbitrary: fc.nat().map((pick) => ({ kind: 'duplicateReceipts', pick }) as const), weight: 1 },
  {
    arbitrary: fc
      .record({ subscriber: subscriberArb, pick: fc.nat() })
      .map(({ subscriber, pick }) => ({ kind: 'redeliver', subscriber, pick }) as const),
    weight: 1,
  },
);

function toggle(set: Set<Subscriber>, subscriber: Subscriber): void {
  if (!set.delete(subscriber)) set.add(subscriber);
}

async function run(w: World, step: Step): Promise<void> {
  switch (step.kind) {
    case 'relay':
      await w.relay();
      return;
    case 'consume':
      await w.consume(step.subscriber);
      return;
    case 'applyReceipts':
      await w.applyReceipts();
      return;
    case 'sweep':
      w.clock.advance(step.advanceMs);
      await w.sweep();
      return;
    case 'toggleLoss':
      toggle(w.channel.losing, step.subscriber);
      return;
    case 'toggleOutage':
      toggle(w.down, step.subscriber);
      return;
    case 'duplicateReceipts': {
      const { applied, arrived } = w.channel;
      const again = applied.length === 0 ? [] : [applied[step.pick % applied.length] as string];
      arrived.push(...arrived, ...again);
      return;
    }
    case 'redeliver': {
      const seen = w.received[step.subscriber];
      if (seen.length === 0) return;
      const copy = seen[step.pick % seen.length] as string;
      // A copy of a message this consumer already took: never applied a second time.
      expect((await w.deliver(step.subscriber, copy)).kind).toBe('DUPLICATE');
      return;
    }
  }
}

/** Everything `subscriber`'s queue holds now, consumed. */
async function drain(w: World, subscriber: Subscriber): Promise<void> {
  for (let batch = 0; batch < 50 && (await w.consume(subscriber)).length > 0; batch += 1);
}

async function allConfirmed(w: World): Promise<boolean> {
  return (await w.rows()).every((row) => row.status === MessageStatus.CONFIRMED);
}

/**
 * Every fault cleared, the system left to itself: consumers take what their queues hold, receipts are applied, and
 * the sweeper runs past each confirmation deadline, until every delivery is confirmed. Returns the rounds it took.
 */
async function heal(w: World): Promise<number> {
  w.channel.losing.clear();
  w.down.clear();
  for (let round = 1; round <= HEAL_ROUNDS; round += 1) {
    for (const subscriber of SUBSCRIBERS) await drain(w, subscriber);
    await w.applyReceipts();
    if (await allConfirmed(w)) return round;
    w.clock.advance(HEAL_ADVANCE_MS);
    await w.sweep();
  }
  return HEAL_ROUNDS + 1;
}

/** How often each subscriber applied each message (`APPLIED` results), by `<subscriber>/<messageId>`. */
function appliedCounts(w: World): Map<string, number> {
  const counts = new Map<string, number>();
  for (const placed of w.consumed) {
    if (placed.kind !== 'APPLIED') continue;
    const key = `${placed.subscriber}/${placed.messageId}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Each subscriber applied each message exactly once, and the business effects add up to that. */
async function expectAppliedOnceEach(w: World, messageIds: readonly string[]): Promise<void> {
  const expected = new Map(
    SUBSCRIBERS.flatMap((subscriber) => messageIds.map((id) => [`${subscriber}/${id}`, 1] as const)),
  );
  expect(appliedCounts(w)).toEqual(expected);
  // Never refused (stock is ample), never anything but applied or a duplicate of it.
  expect(w.consumed.filter((placed) => placed.kind !== 'APPLIED' && placed.kind !== 'DUPLICATE')).toEqual([]);
  const stock = await w.client.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
  const points = await w.client.send(new GetCommand({ TableName: 'points', Key: { customerId: 'c-1' } }));
  expect(stock.Item?.available).toBe(STOCK - messageIds.length);
  expect(points.Item?.points).toBe(10 * messageIds.length);
}

/**
 * Every send went to the queue of the subscriber whose delivery row it was, under that row's own SENT mark: so a
 * CONFIRMED delivery was never sent again (CONFIRMED is final), and no subscriber got the other's delivery.
 */
function expectSendsUnderOwnMark(w: World): void {
  const stray = w.sends.filter(
    (send) => send.rowStatus !== MessageStatus.SENT || send.rowSubscriber !== send.subscriber,
  );
  expect(stray).toEqual([]);
}

/** Every delivery row CONFIRMED, with its subscriber's outcome. */
async function expectConfirmed(w: World, messageIds: readonly string[]): Promise<void> {
  const rows = await w.rows();
  expect(rows.map((row) => [messageIdOf(row), row.subscriber, row.status, row.outcome]).sort()).toEqual(
    messageIds
      .flatMap((id) => [
        [id, 'inventory', MessageStatus.CONFIRMED, 'APPLIED'],
        [id, 'loyalty', MessageStatus.CONFIRMED, 'AWARDED'],
      ])
      .sort(),
  );
}

async function seeded(): Promise<World> {
  const w = world({ maxAttempts: 100, auditSends: true });
  await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: STOCK } }));
  return w;
}

describe('fan-out properties', () => {
  it('whatever the faults (lost or duplicated receipts, outages, redeliveries, resends), once they clear every delivery is confirmed and each subscriber applied each message once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(stepArb, { maxLength: 25, size: 'max' }),
        async (messages, steps) => {
          const w = await seeded();
          const ids: string[] = [];
          for (let n = 1; n <= messages; n += 1) ids.push((await w.write(n)).messageId);

          for (const step of steps) await run(w, step);
          const rounds = await heal(w);

          expect(rounds).toBeLessThanOrEqual(HEAL_ROUNDS);
          await expectConfirmed(w, ids);
          await expectAppliedOnceEach(w, ids);
          expectSendsUnderOwnMark(w);
        },
      ),
      RUNS,
    );
  });

  it("a stopped subscriber never holds the other's confirmations, and catches up once it is back", async () => {
    /** What the running subscriber's side does while the other is stopped; `write` writes the next message. */
    type RunningStep = 'write' | 'relay' | 'consume' | 'applyReceipts' | 'sweep';
    const runningArb = fc.record({
      kind: fc.constantFrom<RunningStep>('write', 'relay', 'consume', 'applyReceipts', 'sweep'),
      advanceMs: advanceArb,
    });
    await fc.assert(
      fc.asyncProperty(
        subscriberArb,
        fc.integer({ min: 1, max: 4 }),
        fc.array(runningArb, { maxLength: 20, size: 'max' }),
        async (stopped, messages, stretch) => {
          const running = SUBSCRIBERS.find((s) => s !== stopped) as Subscriber;
          const w = await seeded();
          const ids: string[] = [];
          const writeNext = async () => {
            if (ids.length < messages) ids.push((await w.write(ids.length + 1)).messageId);
          };
          w.down.add(stopped);

          // The stretch: the stopped subscriber's queue refuses every send and its consumer never runs.
          for (const step of stretch) {
            if (step.kind === 'write') await writeNext();
            else if (step.kind === 'relay') await w.relay();
            else if (step.kind === 'consume') await drain(w, running);
            else if (step.kind === 'applyReceipts') await w.applyReceipts();
            else {
              w.clock.advance(step.advanceMs);
              await w.sweep();
            }
          }
          while (ids.length < messages) await writeNext();
          // The running side settles on its own, the stopped one still down.
          await w.relay();
          for (let round = 0; round < 10; round += 1) {
            await drain(w, running);
            await w.applyReceipts();
            const mine = (await w.rows()).filter((row) => row.subscriber === running);
            if (mine.every((row) => row.status === MessageStatus.CONFIRMED)) break;
            w.clock.advance(HEAL_ADVANCE_MS);
            await w.sweep();
          }

          const during = await w.rows();
          expect(
            during.filter((row) => row.subscriber === running).map((row) => [messageIdOf(row), row.status]),
          ).toEqual(expect.arrayContaining(ids.map((id) => [id, MessageStatus.CONFIRMED])));
          expect(during.filter((row) => row.subscriber === running)).toHaveLength(ids.length);
          // The stopped subscriber got nothing, applied nothing, confirmed nothing, and none of its rows gave up.
          expect(
            during
              .filter((row) => row.subscriber === stopped)
              .every((row) => row.status === MessageStatus.PENDING),
          ).toBe(true);
          expect(w.sends.filter((send) => send.subscriber === stopped)).toEqual([]);
          expect(w.consumed.filter((placed) => placed.subscriber === stopped)).toEqual([]);

          // Back: it catches up, and the running subscriber's deliveries are never sent again.
          const sentToRunning = w.sends.filter((send) => send.subscriber === running).length;
          const rounds = await heal(w);
          expect(rounds).toBeLessThanOrEqual(HEAL_ROUNDS);
          await expectConfirmed(w, ids);
          await expectAppliedOnceEach(w, ids);
          expectSendsUnderOwnMark(w);
          expect(w.sends.filter((send) => send.subscriber === running)).toHaveLength(sentToRunning);
        },
      ),
      RUNS,
    );
  });
});
