/**
 * What every section of `npm run bench` returns: a table of figures measured side by side in one run, the
 * targets it checks (reported, never asserted on time), and notes that say how the figures were obtained.
 */

/** How big a bench run is: `full` for the figures the README quotes, `tiny` for the test that keeps it alive. */
export type BenchSize = 'tiny' | 'full';

/** Options every section receives. */
export interface BenchOptions {
  readonly size: BenchSize;
  /** Repetitions of each timed measurement; the section reports the median. */
  readonly repeats: number;
  /** Simulated latency of one SQS call, in milliseconds. */
  readonly sqsLatencyMs: number;
  /** Simulated latency of one DynamoDB call, in milliseconds. */
  readonly dynamoLatencyMs: number;
  /** Simulated latency of one SNS publish, in milliseconds (the fan-out section's SNS model). */
  readonly snsLatencyMs: number;
}

/** One checked target: what was measured, what it should be, and whether it holds in this run. */
export interface BenchTarget {
  readonly name: string;
  readonly measured: string;
  readonly target: string;
  readonly holds: boolean;
}

/** One cell of a section's table. */
export type BenchCell = string | number;

/** One section of the bench's output. */
export interface BenchSection {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly BenchCell[])[];
  readonly targets: readonly BenchTarget[];
  /** How the figures were measured, and what they mean for a deployment. */
  readonly notes: readonly string[];
}

/** A section of the bench: measures and returns its table. */
export type BenchMeasure = (options: BenchOptions) => Promise<BenchSection>;

/** The middle value of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The `p`-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Runs `measure` `repeats` times and returns every result (for a median taken by the caller). */
export async function repeat<T>(repeats: number, measure: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let run = 0; run < repeats; run += 1) results.push(await measure());
  return results;
}

/** `value` with `digits` decimals and thousands separators, for a table cell. */
export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
