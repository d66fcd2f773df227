/**
 * A health hook for `outbox recover --health test/integration/support/downstream-health.ts`: the downstream is
 * as healthy as the test that switched it off says. The flag lives on `globalThis` under a registered symbol, so
 * the test and the copy of this module the CLI imports by path share it.
 */

const HEALTHY = Symbol.for('serverless-outbox.test.downstream-healthy');

type Flagged = { [HEALTHY]?: boolean };

/** Tells the hook whether the test's downstream is up. */
export function setDownstreamHealthy(healthy: boolean): void {
  (globalThis as Flagged)[HEALTHY] = healthy;
}

/** The hook `recover` calls: healthy unless the test has said the downstream is down. */
export async function checkHealth(topic: string): Promise<{ healthy: boolean; detail: string }> {
  const healthy = (globalThis as Flagged)[HEALTHY] !== false;
  return { healthy, detail: `the test's ${topic} downstream is ${healthy ? 'up' : 'down'}` };
}
