import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { cursorKeyOf } from '../../../shared/aws/inbox-table.ts';
import { APPLIED } from '../../../shared/consumer/inbox-record.ts';
import {
  type AggregatePlan,
  OrderingWorld,
  orderKeyOfAggregate,
  REJECTED,
  type WorldOutcome,
} from './ordering-world.ts';
import { pathTotals, run, SMALL, scenario } from './world-scenarios.ts';

/** A run of a property takes a few seconds; the margin is for a busy machine. */
const TIMEOUT_MS = Number(process.env.ORDERING_TIMEOUT_MS ?? 60_000);

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
  const mode = plan.mode === 'counter' ? 'counter' : 'version';
  expect(stored.map((row) => row.orderKey)).toEqual(stored.map(() => orderKeyOfAggregate(index, mode)));
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
  const orderKey = orderKeyOfAggregate(index, mode);
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
