import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The package's own entry points resolve to their sources, as tsconfig.json's `paths` says. */
const packageSources = [
  { find: /^serverless-outbox$/, replacement: './shared/index.ts' },
  { find: /^serverless-outbox\/lambda$/, replacement: './shared/lambda/index.ts' },
  { find: /^serverless-outbox\/cdk$/, replacement: './infra/constructs/index.ts' },
  { find: /^serverless-outbox\/testing$/, replacement: './shared/memory/index.ts' },
  { find: /^serverless-outbox\/admin$/, replacement: './shared/admin/index.ts' },
].map(({ find, replacement }) => ({
  find,
  replacement: fileURLToPath(new URL(replacement, import.meta.url)),
}));

/** One vitest config for the repository: each area of the code is a project run with `--project <name>`. */
export default defineConfig({
  resolve: { alias: packageSources },
  test: {
    // CDK's built-in CloudFormation validation (a WASM rule engine whose findings are warnings by default) takes
    // about 5 s of every synth; `npm test` runs it once, in `cdk synth`. The tests assert the template themselves.
    env: { CDK_VALIDATION: 'false' },
    // Says what the run is on (Node, moto or the embedded backend, cfn-lint) and so what is skipped.
    globalSetup: ['./test/integration/support/announce-environment.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/shared/**/*.test.ts', 'test/functions/**/*.test.ts', 'test/fuzz/**/*.test.ts'],
          // Property tests run hundreds of cases; on a busy two-core machine that can pass vitest's 5 s default.
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // Synthesizing the stack takes a few seconds per test file.
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/local/**/*.test.ts'],
          testTimeout: 120_000,
          // Starting moto and deploying the template takes a few seconds per suite.
          hookTimeout: 120_000,
          // The suites share one emulator and its data; running them in parallel slows moto down.
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'package',
          include: ['test/package/**/*.test.ts'],
          // Packing, installing into a fresh project and bundling take a minute or two.
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
