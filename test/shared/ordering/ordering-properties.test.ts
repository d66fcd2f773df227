import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { APPLIED } from '../../../shared/consumer/inbox.ts';
import { cursorKeyOf } from '../../../shared/consumer/order-cursor.ts';
import {
  type AggregateMode,
  type AggregatePlan,
  OrderingWorld,
  orderKeyOfAggregate,
  REJECTED,
  type Step,
  type WorldOutcome,
} from './ordering-world.ts';

/** A run of a property takes a few seconds; the margin is for a busy machine. */
const TIMEOUT_MS = Number(process.env.ORDERING_TIMEOUT_MS ?? 60_000);

/** What a scenario may contain. */
interface Shape {
  /** How aggregates number their messages (a mode listed twice is drawn twice as often). */
  readonly modes: readonly AggregateMode[];
  readonly aggregates: { readonly min: number; readonly max: number };
  readonly messages: { readonly min: number; readonly max: number };
  /** The most messages one write takes. */
  readonly writeSize: number;
  /** The most stream records the relay gets at once in the random phase. */
  readonly relayBatch: number;
}

/** The acceptance shape: 2–5 aggregates of 1–4 messages, written one or two at a time. */
const SMALL: Omit<Shape, 'modes'> = {
  aggregates: { min: 2, max: 5 },
  messages: { min: 1, max: 4 },
  writeSize: 2,
  relayBatch: 12,
};

const pick = fc.nat({ max: 40 });

/** One step of the random phase; writes and receives weigh more, so that there is something to scramble. */
function step(shape: Shape): fc.Arbitrary<Step> {
  const aggregate = fc.nat({ max: shape.aggregates.max - 1 });
  const steps: fc.WeightedArbitrary<Step>[] = [
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('write'),
        aggregate,
        count: fc.integer({ min: 1, max: shape.writeSize }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('race'), aggregate }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('stream'),
        picks: fc.array(pick, { minLength: 1, maxLength: shape.relayBatch }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('loseStream'), pick }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('outage'), entries: fc.integer({ min: 1, max: 3 }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('storeOutage'),
        healthy: fc.nat({ max: 6 }),
        failing: fc.integer({ min: 1, max: 3 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('sweep'),
        advanceMs: fc.constantFrom(0, 1_000, 5_000, 11_000, 31_000, 61_000),
        rounds: fc.integer({ min: 1, max: 2 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('tick'), advanceMs: fc.constantFrom(1_000, 11_000, 31_000) }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('deliver'),
        pick,
        fate: fc.constantFrom('ack', 'ack', 'ack', 'crash', 'crash', 'deadLetter', 'lose'),
        // Small call indexes weighted up: a crash inside the consumer's calls, not only after its last one.
        crashAt: fc.oneof(fc.nat({ max: 2 }), fc.nat({ max: 8 })),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('redrive') }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('batch'),
        picks: fc.array(pick, { minLength: 1, maxLength: 5 }),
        fifo: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('together'),
        picks: fc.tuple(pick, pick),
        sweeps: fc.integer({ min: 0, max: 2 }),
        stream: fc.boolean(),
      }),
    },
  ];
  return fc.oneof(...steps);
}

function scenario(shape: Shape) {
  return fc.record({
    plans: fc.array(
      fc.record({ messages: fc.integer(shape.messages), mode: fc.constantFrom(...shape.modes) }),
      { minLength: shape.aggregates.min, maxLength: shape.aggregates.max },
    ),
    steps: fc.array(step(shape), { minLength: 5, maxLength: 40, size: 'max' }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    // Shorter and longer than the confirmation deadline (60 s).
    gapTimeoutMs: fc.constantFrom(5_000, 30_000, 120_000),
  });
}

/** How often each path ran, over every run of the property under way. */
const pathTotals = new Map<string, number>();

/** A scenario as drawn. */
interface Scenario {
  readonly plans: readonly AggregatePlan[];
  readonly steps: readonly Step[];
  readonly seed: number;
  readonly gapTimeoutMs: number;
}

async function run({ plans, steps, seed, gapTimeoutMs }: Scenario): Promise<WorldOutcome> {
  const world = new OrderingWorld(plans, { seed, gapTimeoutMs });
  for (const next of steps) await world.step(next);
  const outcome = await world.settle();
  for (const [path, times] of Object.entries(outcome.paths)) {
    pathTotals.set(path, (pathTotals.get(path) ?? 0) + times);
  }
  return outcome;
}

/**
 * The runs of a property went where it is meant to look (each path listed ran at least once): e.g. messages
 * parked and drained, copies found duplicates, declined messages recorded, gaps resolved by resends, consumer
 * crashes, SQS and DynamoDB faults. Set ORDERING_PATHS to print how often each path ran.
 */
function expectPathsCovered(paths: readonly string[]): void {
  if (process.env.ORDERING_PATHS !== undefined) console.log(Object.fromEntries(pathTotals));
  expect([...pathTotals.keys()]).toEqual(expect.arrayContaining([...paths]));
}

/** Every message written is CONFIRMED and the pipeline settled: nothing is left waiting. */
function expectSettled(outcome: WorldOutcome): void {
  expect(outcome.quiescent, outcome.sweepProblems.join('\n')).toBe(true);
  expect(outcome.outbox.filter((row) => row.status !== 'CONFIRMED')).toEqual([]);
}

/** Whether a stored message is one the consumer declines (see the world's plan). */
const isDeclined = (row: Record<string, unknown>) =>
  (row.payload as { declined?: boolean }).declined === true;

/**
 * Aggregate `index`'s ordered messages were applied as seq 1..k, in order, each once (a declined one is recorded
 * as rejected in its place, and appends nothing).
 */
function expectAppliedInOrder(outcome: WorldOutcome, index: number, plan: AggregatePlan): void {
  const aggregateId = OrderingWorld.aggregateId(index);
  const stored = outcome.outbox
    .filter((row) => row.aggregateId === aggregateId)
    .sort((a, b) => Number(a.seq) - Number(b.seq));
  // The seqs 1..k belong to the k messages written, one each, all under the aggregate's order key.
  expect(stored.map((row) => row.seq)).toEqual(Array.from({ length: plan.messages }, (_, n) => n + 1));
  expect(stored.map((row) => row.orderKey)).toEqual(stored.map(() => orderKeyOfAggregate(index)));
  expect(stored.map((row) => row.messageId).sort()).toEqual(
    [...(outcome.written.get(aggregateId) ?? [])].sort(),
  );
  expect(outcome.applied.get(aggregateId), `applied seqs of ${aggregateId} (${plan.mode})`).toEqual(
    stored.filter((row) => !isDeclined(row)).map((row) => row.seq),
  );
  expect(stored.map((row) => row.outcome)).toEqual(
    stored.map((row) => (isDeclined(row) ? REJECTED : APPLIED)),
  );
  // The consumer's cursor stands at the last seq (a rejection moves it too).
  const orderKey = orderKeyOfAggregate(index);
  expect(outcome.inbox.find((row) => row.messageId === cursorKeyOf(orderKey))).toMatchObject({
    lastSeq: plan.messages,
  });
}

describe('per-aggregate ordering over the whole pipeline (writer, stream relay, sweeper, consumer)', () => {
  beforeEach(() => {
    pathTotals.clear();
  });

  it(
    'applies every order key’s seqs exactly 1..k, in order, each once, whatever the transport does',
    async () => {
      await fc.assert(
        fc.asyncProperty(scenario({ ...SMALL, modes: ['counter', 'version'] }), async (drawn) => {
          const { plans } = drawn;
          const outcome = await run(drawn);

          for (const [index, plan] of plans.entries()) expectAppliedInOrder(outcome, index, plan);
          expectSettled(outcome);
        }),
        { numRuns: Number(process.env.ORDERING_RUNS ?? 100) },
      );
      expectPathsCovered([
        'consumed PARKED',
        'drained',
        'consumed DUPLICATE',
        'consumed REJECTED',
        'ordering gaps',
        'sweep requeued',
        'consumer crashed',
        'relay retry scheduled',
        'store call failed',
        'batch',
      ]);
    },
    TIMEOUT_MS,
  );

  it(
    'leaves unordered topics as they were: each message applied once, with no order key or seq',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          scenario({ ...SMALL, modes: ['unordered', 'unordered', 'counter', 'version'] }),
          async (drawn) => {
            const { plans } = drawn;
            const outcome = await run(drawn);

            for (const [index, plan] of plans.entries()) {
              if (plan.mode !== 'unordered') {
                expectAppliedInOrder(outcome, index, plan);
                continue;
              }
              const aggregateId = OrderingWorld.aggregateId(index);
              const written = outcome.written.get(aggregateId) ?? [];
              expect(written).toHaveLength(plan.messages);
              const stored = outcome.outbox.filter((row) => row.aggregateId === aggregateId);
              expect(stored.map((row) => row.messageId).sort()).toEqual([...written].sort());
              const accepted = stored.filter((row) => !isDeclined(row)).map((row) => row.messageId);
              expect([...(outcome.applied.get(aggregateId) ?? [])].sort()).toEqual(accepted.sort());
              expect(stored.map((row) => row.outcome)).toEqual(
                stored.map((row) => (isDeclined(row) ? REJECTED : APPLIED)),
              );
              expect(stored.filter((row) => 'orderKey' in row || 'seq' in row)).toEqual([]);
            }
            expectSettled(outcome);
          },
        ),
        { numRuns: Number(process.env.ORDERING_RUNS ?? 50) },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'keeps order when an order key’s run is longer than one SendMessageBatch and an entry of it fails',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          scenario({
            modes: ['counter', 'version'],
            aggregates: { min: 1, max: 2 },
            messages: { min: 11, max: 14 },
            writeSize: 12,
            relayBatch: 14,
          }),
          async (drawn) => {
            const { plans } = drawn;
            const outcome = await run(drawn);

            for (const [index, plan] of plans.entries()) expectAppliedInOrder(outcome, index, plan);
            expectSettled(outcome);
          },
        ),
        { numRuns: Number(process.env.ORDERING_LONG_RUNS ?? 25) },
      );
      expectPathsCovered(['consumed PARKED', 'drained', 'ordering gaps', 'relay retry scheduled']);
    },
    TIMEOUT_MS,
  );
});
