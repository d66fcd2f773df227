import { describe, expect, it } from 'vitest';
import type { DrillConfig } from '../../infra/drill/drill-config.ts';
import { uniformRates } from '../../infra/drill/faults.ts';
import { runMotoDrill } from '../../infra/drill/moto-drill.ts';
import { formatReport } from '../../infra/drill/report.ts';

describe('the fault drill on moto (small)', () => {
  it('keeps every invariant with 10 % faults at every hop, and says so in its report', async () => {
    const config: DrillConfig = {
      orders: 30,
      rates: uniformRates(0.1),
      poisonRate: 0.05,
      seed: 11,
      skus: 10,
      initialStock: 12,
    };

    const result = await runMotoDrill(config, () => {});

    expect(result.invariants.map(({ name, ok, detail }) => ({ name, ok, detail }))).toEqual(
      result.invariants.map(({ name, detail }) => ({ name, ok: true, detail })),
    );
    expect(Object.values(result.injected).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    expect(formatReport(result)).toMatch(/PASS stock moved exactly once/);
  }, 600_000);
});
