/** How a property of the fuzz suite runs: its number of cases and, to replay a failure, its seed. */
export interface FuzzParameters {
  readonly numRuns: number;
  readonly seed?: number;
}

/**
 * How many cases each property of the fuzz suite runs: `defaultRuns` in CI, or `FUZZ_RUNS` from the
 * environment for a longer search (`FUZZ_RUNS=10000 npx vitest run test/fuzz`). `FUZZ_SEED` replays the seed a
 * failure printed.
 */
export function fuzzParameters(
  defaultRuns: number,
  env: Readonly<Record<string, string | undefined>> = process.env,
): FuzzParameters {
  const runs = env.FUZZ_RUNS === undefined ? defaultRuns : Number(env.FUZZ_RUNS);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`FUZZ_RUNS must be a positive integer, not "${env.FUZZ_RUNS}"`);
  }
  const seed = env.FUZZ_SEED === undefined ? undefined : Number(env.FUZZ_SEED);
  if (seed !== undefined && !Number.isInteger(seed)) {
    throw new Error(`FUZZ_SEED must be an integer, not "${env.FUZZ_SEED}"`);
  }
  return { numRuns: runs, ...(seed === undefined ? {} : { seed }) };
}

/**
 * The time a property may take: `msPerRun` per case, never less than a minute, so that a long `FUZZ_RUNS`
 * search is not cut short by the test timeout of the project that runs it.
 */
export function fuzzTimeoutMs(parameters: FuzzParameters, msPerRun: number): number {
  return Math.max(60_000, parameters.numRuns * msPerRun);
}
