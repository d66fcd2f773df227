import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBundling } from '../../../infra/constructs/defaults.ts';
import type { BenchSection } from '../../../infra/dev/bench/bench-section.ts';
import {
  buildBundle,
  esbuildOptions,
  inputSource,
  measureBundles,
  UnsupportedBundlingOptionError,
} from '../../../infra/dev/bench/bundles.ts';
import { SYNTH_TIMEOUT_MS } from '../template-queries.ts';

const projectDir = process.cwd();
let outdir: string;
let section: BenchSection;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'bundles-test-'));
  section = await measureBundles({
    size: 'tiny',
    repeats: 1,
    sqsLatencyMs: 20,
    dynamoLatencyMs: 8,
    snsLatencyMs: 20,
  });
}, SYNTH_TIMEOUT_MS);

afterAll(async () => {
  await rm(outdir, { recursive: true, force: true });
});

/** The value of `column` in `row` of the section's table. */
function cell(row: readonly (string | number)[], column: string): string {
  return String(row[section.columns.indexOf(column)]);
}

const figure = (text: string): number => Number(text.replaceAll(',', ''));

describe('measureBundles', () => {
  it('bundles and imports one library function and one example function of the stack', () => {
    const entries = section.rows.map((row) => cell(row, 'entry'));
    expect(entries).toHaveLength(2);
    expect(entries.filter((entry) => entry.startsWith('shared/lambda/entries/'))).toHaveLength(1);
    expect(entries.filter((entry) => entry.startsWith('functions/'))).toHaveLength(1);
    for (const row of section.rows) {
      expect(row).toHaveLength(section.columns.length);
      expect(figure(cell(row, 'KB (minified)'))).toBeGreaterThan(0);
      expect(figure(cell(row, 'import ms'))).toBeGreaterThan(0);
      expect(figure(cell(row, 'import ms (source maps on)'))).toBeGreaterThan(0);
      // The three heaviest packages, each with its KB.
      expect(cell(row, 'largest inputs (KB)').split(', ')).toHaveLength(3);
    }
  });

  it('reports each target as met exactly when the measured figure is within it', () => {
    const sizes = section.rows.map((row) => figure(cell(row, 'KB (minified)')));
    const [size, time] = section.targets;
    expect(size?.measured).toContain(`${Math.max(...sizes).toLocaleString('en-US')} KB`);
    expect(size?.holds).toBe(Math.max(...sizes) <= 300);
    const imports = section.rows.map((row) => figure(cell(row, 'import ms')));
    expect(time?.holds).toBe(Math.max(...imports) <= 150);
  });
});

describe('bundles of the shipped functions', () => {
  it('carry zod/mini only, not classic zod (which cannot be tree-shaken and weighs over 400 KB)', async () => {
    const bundle = await buildBundle(defaultBundling(), {
      entry: 'functions/orders/create-order/handler.ts',
      outdir: join(outdir, 'create-order'),
      workingDir: projectDir,
    });
    const zod = bundle.inputs.find((input) => input.source === 'zod');
    expect(zod?.bytes).toBeGreaterThan(0);
    expect(zod?.bytes).toBeLessThan(40_000);
  });
});

describe('defaultBundling', () => {
  it('keeps class names, so an error thrown from a minified bundle is still named ConfigError', async () => {
    const bundle = await buildBundle(defaultBundling(), {
      entry: 'test/infra/bench/fixtures/named-error.ts',
      outdir: join(outdir, 'named-error'),
      workingDir: projectDir,
    });
    const script = `const { errorName } = await import(${JSON.stringify(pathToFileURL(bundle.file).href)}); console.log(errorName);`;
    const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(printed.toString().trim()).toBe('ConfigError');
  });
});

describe('esbuildOptions', () => {
  const target = { entry: 'shared/lambda/entries/relay.ts', outdir: '/tmp/out', workingDir: projectDir };

  it('passes every setting of defaultBundling to esbuild, as the CDK does', () => {
    const options = esbuildOptions(defaultBundling(), target);
    expect(options).toMatchObject({
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: '/tmp/out/index.mjs',
      minify: true,
      keepNames: true,
      sourcemap: true,
      target: 'node24',
      mainFields: ['module', 'main'],
      external: [],
      metafile: true,
    });
    expect(options.banner?.js).toContain('createRequire');
  });

  it('leaves the AWS SDK out when externalModules is not given, as the CDK does', () => {
    const { externalModules: _all, ...bundling } = defaultBundling();
    expect(esbuildOptions(bundling, target).external).toEqual(['@aws-sdk/*']);
  });

  it('writes no source map when sourceMap is off', () => {
    expect(esbuildOptions({ ...defaultBundling(), sourceMap: false }, target).sourcemap).toBeUndefined();
  });

  it('refuses a bundling option it does not translate rather than measuring a different bundle', () => {
    expect(() =>
      esbuildOptions({ ...defaultBundling(), esbuildArgs: { '--tree-shaking': 'false' } }, target),
    ).toThrow(UnsupportedBundlingOptionError);
  });
});

describe('inputSource', () => {
  it('names the package of a dependency, scoped or nested, and the top folder of project code', () => {
    expect(inputSource('node_modules/zod/v4/core/schemas.js')).toBe('zod');
    expect(inputSource('node_modules/@smithy/core/dist-es/index.js')).toBe('@smithy/core');
    expect(inputSource('node_modules/a/node_modules/@aws-sdk/core/x.js')).toBe('@aws-sdk/core');
    expect(inputSource('shared/outbox/read-outbox-item.ts')).toBe('shared');
  });
});
