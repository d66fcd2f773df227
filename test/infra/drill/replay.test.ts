import { describe, expect, it, vi } from 'vitest';
import type { DrillResult } from '../../../infra/dev/drill/drill-config.ts';
import { uniformRates } from '../../../infra/dev/drill/faults.ts';
import { runMemoryDrill } from '../../../infra/dev/drill/memory-drill.ts';
import { counterIds } from './counter-ulid.ts';

// Ids from a counter, so that everything the drill draws (faults, poison, order lines, jitter) can be checked to
// follow from the seed alone.
vi.mock('ulid', async (importOriginal) =>
  (await import('./counter-ulid.ts')).counterUlid(await importOriginal<typeof import('ulid')>()),
);

/** What a run did, without its wall-clock timings. */
function outcome({ injected, counts, deliveries, metrics, simulatedMs }: DrillResult) {
  return { injected, counts, deliveries, metrics, simulatedMs };
}

describe('the scale drill with a seed', () => {
  it('replays the same faults and outcomes, so a failing run can be investigated', async () => {
    const config = {
      orders: 150,
      rates: uniformRates(0.1),
      poisonRate: 0.02,
      cancelRate: 0.3,
      hotConflictRate: 0.6,
      seed: 11,
      skus: 10,
      initialStock: 60,
    };

    counterIds.issued = 0;
    const first = await runMemoryDrill(config, () => {});
    counterIds.issued = 0;
    const second = await runMemoryDrill(config, () => {});

    expect(outcome(second)).toEqual(outcome(first));
    expect(first.invariants.every((invariant) => invariant.ok)).toBe(true);
    // Cancels, the ones racing their creates among them, follow from the seed too.
    expect(first.counts['orders cancelled']).toBeGreaterThan(0);
  }, 120_000);
});
