import type { BenchMeasure, BenchOptions, BenchSection } from './bench-section.ts';
import { measureBundles } from './bundles.ts';
import { measureCapacity } from './capacity.ts';
import { measureConsumer } from './consumer-throughput.ts';
import { measureCostModel } from './cost-model.ts';
import { measureFanOut } from './fan-out.ts';
import { measureIdleCost } from './idle-cost.ts';
import { measureLatency } from './latency.ts';
import { measureRecovery } from './recovery.ts';
import { measureRelay } from './relay-throughput.ts';

/** The sections in the order they are printed. */
export const BENCH_SECTIONS: readonly { readonly name: string; readonly measure: BenchMeasure }[] = [
  { name: 'relay', measure: measureRelay },
  { name: 'consumer', measure: measureConsumer },
  { name: 'capacity', measure: measureCapacity },
  { name: 'fanout', measure: measureFanOut },
  { name: 'bundles', measure: measureBundles },
  { name: 'latency', measure: measureLatency },
  { name: 'recovery', measure: measureRecovery },
  { name: 'idle', measure: measureIdleCost },
  { name: 'cost', measure: measureCostModel },
];

/** Runs the named sections (all by default) and returns their tables. */
export async function runBench(
  options: BenchOptions,
  only: readonly string[] = BENCH_SECTIONS.map((s) => s.name),
): Promise<BenchSection[]> {
  const sections: BenchSection[] = [];
  for (const { name, measure } of BENCH_SECTIONS) {
    if (only.includes(name)) sections.push(await measure(options));
  }
  return sections;
}
