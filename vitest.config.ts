import { defineConfig } from 'vitest/config';

/** One vitest config for the repository: each area of the code is a project run with `--project <name>`. */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/shared/**/*.test.ts', 'test/functions/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // Synthesizing the stack takes a few seconds per test file.
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/local/**/*.test.ts'],
          testTimeout: 120_000,
          // Starting moto and deploying the template takes a few seconds per suite.
          hookTimeout: 120_000,
          // The suites share one emulator and its data; running them in parallel slows moto down (DESIGN §5).
          fileParallelism: false,
        },
      },
    ],
  },
});
