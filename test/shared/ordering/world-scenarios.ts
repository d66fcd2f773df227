import fc from 'fast-check';
import {
  type AggregateMode,
  type AggregatePlan,
  type OperatorAction,
  OrderingWorld,
  type Step,
  type WorldOutcome,
} from './ordering-world.ts';

/** What a scenario may contain. */
export interface Shape {
  /** How aggregates number their messages (a mode listed twice is drawn twice as often). */
  readonly modes: readonly AggregateMode[];
  readonly aggregates: { readonly min: number; readonly max: number };
  readonly messages: { readonly min: number; readonly max: number };
  /** The most messages one write takes. */
  readonly writeSize: number;
  /** The most stream records the relay gets at once in the random phase. */
  readonly relayBatch: number;
  /** Operators act at random points too: replay, bulk replay, cancel, erase, skip, recover. @default false */
  readonly operators?: boolean;
}

/** The acceptance shape: 2–5 aggregates of 1–4 messages, written one or two at a time. */
export const SMALL: Omit<Shape, 'modes'> = {
  aggregates: { min: 2, max: 5 },
  messages: { min: 1, max: 4 },
  writeSize: 2,
  relayBatch: 12,
};

const pick = fc.nat({ max: 40 });

/** One operator action; cancels and replays weigh more, since most races are theirs. */
export const operatorAction: fc.Arbitrary<OperatorAction> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('replay'), pick }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('bulkReplay'),
      topic: fc.nat({ max: 4 }),
      includeCancelled: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('cancel'), pick }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('erase'), pick }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('skip'), pick }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('recover') }) },
);

/** Operator steps: alone, or in the middle of a sweeper run, a delivery, a relay batch or another action. */
const operatorSteps: fc.WeightedArbitrary<Step>[] = [
  // A send whose answer is lost leaves a copy in the queue of a PENDING message: what a cancel cannot recall.
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('lostAnswer'), entries: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('operator'), action: operatorAction }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('interleave'),
      during: fc.constantFrom('sweep', 'deliver', 'stream', 'operator'),
      // Early calls weighted up: the races sit between a read and the write that follows it.
      at: fc.oneof(fc.nat({ max: 4 }), fc.nat({ max: 16 })),
      pick,
      first: operatorAction,
      action: operatorAction,
    }),
  },
];

/** One step of the random phase; writes and receives weigh more, so that there is something to scramble. */
export function step(shape: Shape): fc.Arbitrary<Step> {
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
  return fc.oneof(...steps, ...(shape.operators === true ? operatorSteps : []));
}

export function scenario(shape: Shape) {
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
export const pathTotals = new Map<string, number>();

/** A scenario as drawn. */
export interface Scenario {
  readonly plans: readonly AggregatePlan[];
  readonly steps: readonly Step[];
  readonly seed: number;
  readonly gapTimeoutMs: number;
}

export async function run({ plans, steps, seed, gapTimeoutMs }: Scenario): Promise<WorldOutcome> {
  const world = new OrderingWorld(plans, { seed, gapTimeoutMs });
  for (const next of steps) await world.step(next);
  const outcome = await world.settle();
  for (const [path, times] of Object.entries(outcome.paths)) {
    pathTotals.set(path, (pathTotals.get(path) ?? 0) + times);
  }
  return outcome;
}
