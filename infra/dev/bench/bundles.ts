/**
 * Bench section "Bundle and cold start": every function of the example stack bundled with esbuild exactly as
 * `cdk deploy` bundles it (the options of `defaultBundling()`), then its size, the packages that weigh most in it,
 * and how long a fresh Node process takes to import it — the part of a cold start the bundle decides.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { defaultBundling } from '../../constructs/index.ts';
import { synthExampleTemplates } from '../../synth-template.ts';
import { asTemplate } from '../local/template/cloudformation-template.ts';
import { readFunctions } from '../local/template/read-functions.ts';
import {
  type BenchOptions,
  type BenchSection,
  type BenchTarget,
  formatNumber,
  median,
  repeat,
} from './bench-section.ts';

/** Largest minified bundle of a function the section accepts, in KB (1,000 bytes). */
const SIZE_TARGET_KB = 300;
/** Slowest median import of a bundle in a fresh Node process the section accepts, in milliseconds. */
const IMPORT_TARGET_MS = 150;
/** Inputs listed per bundle, largest first. */
const LARGEST_INPUTS = 3;
/** The library's own Lambda entries: those the example stack leaves out (the archiver) are bundled too. */
const LIBRARY_ENTRIES_DIR = 'shared/lambda/entries';

/** A function to bundle: its name in the stack and its handler module, relative to the project root. */
export interface FunctionEntry {
  readonly name: string;
  readonly entry: string;
}

/** Thrown when `defaultBundling()` sets an option this section cannot translate to esbuild. */
export class UnsupportedBundlingOptionError extends Error {
  readonly code = 'UNSUPPORTED_BUNDLING_OPTION';
  override readonly name = 'UnsupportedBundlingOptionError';
}

/** CDK bundling options this section translates; any other one set throws rather than being silently ignored. */
const TRANSLATED_OPTIONS = new Set([
  'minify',
  'sourceMap',
  'sourceMapMode',
  'sourcesContent',
  'target',
  'format',
  'mainFields',
  'banner',
  'footer',
  'externalModules',
  'nodeModules',
  'loader',
  'define',
  'logLevel',
  'keepNames',
  'tsconfig',
  'metafile',
  'inject',
  'charset',
]);

/** Where {@link esbuildOptions} writes a bundle. */
export interface BundleTarget {
  /** Handler module, relative to `workingDir`. */
  readonly entry: string;
  /** Directory the bundle goes to, as the CDK's asset directory (`index.mjs` or `index.js`). */
  readonly outdir: string;
  /** The project root (where `cdk synth` runs). */
  readonly workingDir: string;
}

/**
 * The esbuild options the CDK's NodejsFunction passes for `bundling` (its `--platform=node --bundle` command line
 * as build options), plus a metafile: the one translation, so the bench cannot drift from what is deployed.
 */
export function esbuildOptions(bundling: nodejs.BundlingOptions, target: BundleTarget): BuildOptions {
  const unsupported = Object.entries(bundling)
    .filter(([key, value]) => value !== undefined && !TRANSLATED_OPTIONS.has(key))
    .map(([key]) => key);
  if (unsupported.length > 0) {
    throw new UnsupportedBundlingOptionError(
      `bundling option(s) ${unsupported.join(', ')} are not translated to esbuild by the bundle bench`,
    );
  }
  // As the CDK reads them: a source map mode turns source maps on; `default` is esbuild's plain `--sourcemap`.
  const sourceMap = Boolean(bundling.sourceMapMode ?? bundling.sourceMap);
  const mode = bundling.sourceMapMode ?? 'default';
  const esm = bundling.format === 'esm';
  return {
    absWorkingDir: target.workingDir,
    entryPoints: [target.entry],
    outfile: join(target.outdir, esm ? 'index.mjs' : 'index.js'),
    bundle: true,
    platform: 'node',
    write: true,
    metafile: true,
    logLevel: bundling.logLevel ?? 'warning',
    ...(bundling.target === undefined ? {} : { target: bundling.target }),
    ...(bundling.format === undefined ? {} : { format: bundling.format }),
    ...(bundling.minify === true ? { minify: true } : {}),
    ...(sourceMap ? { sourcemap: mode === 'default' ? true : (mode as BuildOptions['sourcemap']) } : {}),
    ...(bundling.sourcesContent === false ? { sourcesContent: false } : {}),
    external: [...(bundling.externalModules ?? ['@aws-sdk/*']), ...(bundling.nodeModules ?? [])],
    ...(bundling.loader === undefined ? {} : { loader: bundling.loader as BuildOptions['loader'] }),
    ...(bundling.define === undefined ? {} : { define: bundling.define }),
    ...(bundling.keepNames === true ? { keepNames: true } : {}),
    ...(bundling.tsconfig === undefined ? {} : { tsconfig: bundling.tsconfig }),
    ...(bundling.banner === undefined ? {} : { banner: { js: bundling.banner } }),
    ...(bundling.footer === undefined ? {} : { footer: { js: bundling.footer } }),
    ...(bundling.mainFields === undefined ? {} : { mainFields: [...bundling.mainFields] }),
    ...(bundling.inject === undefined ? {} : { inject: [...bundling.inject] }),
    ...(bundling.charset === undefined ? {} : { charset: bundling.charset }),
  };
}

/**
 * The functions of the example's stacks (their handler module from each template's entry metadata) and the library
 * entries no stack deploys, in template order.
 */
export function functionEntries(
  templates: readonly Record<string, unknown>[],
  projectDir: string,
): FunctionEntry[] {
  const fromStack = templates
    .flatMap((template) => readFunctions(asTemplate(template)).functions)
    .map((fn) => ({ name: fn.name, entry: fn.entry }));
  const deployed = new Set(fromStack.map((fn) => fn.entry));
  const library = readdirSync(join(projectDir, LIBRARY_ENTRIES_DIR))
    .filter((file) => file.endsWith('.ts'))
    .sort()
    .map((file) => `${LIBRARY_ENTRIES_DIR}/${file}`)
    .filter((entry) => !deployed.has(entry))
    .map((entry) => ({ name: `(library) ${basename(entry, '.ts')}`, entry }));
  return [...fromStack, ...library];
}

/** Bytes one package (or project folder) puts in a bundle. */
export interface BundleInput {
  /** `@smithy/core`, `zod`, or a project folder such as `shared`. */
  readonly source: string;
  readonly bytes: number;
}

/** The package a metafile input belongs to: the one of its last `node_modules` segment, else its first folder. */
export function inputSource(path: string): string {
  const parts = path.split('/');
  const modules = parts.lastIndexOf('node_modules');
  if (modules === -1) return parts.length > 1 ? (parts[0] as string) : path;
  const first = parts[modules + 1] ?? path;
  return first.startsWith('@') ? `${first}/${parts[modules + 2] ?? ''}` : first;
}

/** Bytes each package contributes to the output `output` of `metafile`, largest first. */
export function inputsBySource(metafile: Metafile, output: string): BundleInput[] {
  const inputs = metafile.outputs[output]?.inputs ?? {};
  const totals = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const source = inputSource(path);
    totals.set(source, (totals.get(source) ?? 0) + bytesInOutput);
  }
  return [...totals].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** One built bundle. */
export interface BuiltBundle {
  readonly file: string;
  readonly bytes: number;
  readonly inputs: readonly BundleInput[];
}

/** Bundles `entry` with `bundling` into `outdir`. */
export async function buildBundle(
  bundling: nodejs.BundlingOptions,
  target: BundleTarget,
): Promise<BuiltBundle> {
  const options = esbuildOptions(bundling, target);
  const result = await build(options);
  const file = options.outfile as string;
  const output = Object.keys(result.metafile?.outputs ?? {}).find(
    (key) => join(target.workingDir, key) === file,
  );
  if (result.metafile === undefined || output === undefined) {
    throw new Error(`esbuild wrote no metafile output for ${target.entry}`);
  }
  return { file, bytes: (await stat(file)).size, inputs: inputsBySource(result.metafile, output) };
}

/** Options of {@link importMilliseconds}. */
export interface ImportOptions {
  /** `NODE_OPTIONS` of the fresh process (the deployed functions run with `--enable-source-maps`). */
  readonly nodeOptions?: string;
}

/**
 * Milliseconds a fresh `node` process takes to import `file` (measured inside the process, so its own start-up is
 * not counted): what a cold start pays for the bundle before the handler runs.
 */
export function importMilliseconds(file: string, options: ImportOptions = {}): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const env = { ...process.env, NODE_OPTIONS: options.nodeOptions ?? '' };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = Number(stdout.trim().split('\n').pop());
      if (code === 0 && Number.isFinite(ms)) resolve(ms);
      else reject(new Error(`importing ${file} failed (exit ${code}): ${stderr.trim().slice(0, 500)}`));
    });
  });
}

/** What the section measures of one function. */
interface FunctionFigures {
  readonly fn: FunctionEntry;
  readonly bundle: BuiltBundle;
  readonly importMs: number;
  readonly importWithSourceMapsMs: number;
}

/** Times the import of a built bundle, without and with source maps, `repeats` times each (medians). */
async function measureImports(
  fn: FunctionEntry,
  bundle: BuiltBundle,
  repeats: number,
): Promise<FunctionFigures> {
  const importMs = median(await repeat(repeats, () => importMilliseconds(bundle.file)));
  const importWithSourceMapsMs = median(
    await repeat(repeats, () => importMilliseconds(bundle.file, { nodeOptions: '--enable-source-maps' })),
  );
  return { fn, bundle, importMs, importWithSourceMapsMs };
}

const kb = (bytes: number): number => bytes / 1000;

function targets(figures: readonly FunctionFigures[]): BenchTarget[] {
  const largest = figures.reduce((a, b) => (b.bundle.bytes > a.bundle.bytes ? b : a));
  const slowest = figures.reduce((a, b) => (b.importMs > a.importMs ? b : a));
  return [
    {
      name: 'largest bundle (minified)',
      measured: `${formatNumber(kb(largest.bundle.bytes))} KB (${largest.fn.name})`,
      target: `≤ ${SIZE_TARGET_KB} KB`,
      holds: kb(largest.bundle.bytes) <= SIZE_TARGET_KB,
    },
    {
      name: 'slowest median import',
      measured: `${formatNumber(slowest.importMs)} ms (${slowest.fn.name})`,
      target: `≤ ${IMPORT_TARGET_MS} ms`,
      holds: slowest.importMs <= IMPORT_TARGET_MS,
    },
  ];
}

/**
 * Every function at full size; at tiny size (inside `npm test`) one of the library's and one of the example's,
 * so both kinds of entry are still built and imported.
 */
function sizedEntries(entries: readonly FunctionEntry[], size: BenchOptions['size']): FunctionEntry[] {
  if (size === 'full') return [...entries];
  const library = entries.find((fn) => fn.entry.startsWith('shared/'));
  const example = entries.find((fn) => !fn.entry.startsWith('shared/'));
  return [library, example].filter((fn): fn is FunctionEntry => fn !== undefined);
}

function largestInputsCell(inputs: readonly BundleInput[]): string {
  return inputs
    .slice(0, LARGEST_INPUTS)
    .map((input) => `${input.source} ${formatNumber(kb(input.bytes))}`)
    .join(', ');
}

/**
 * Bundles every function of the example stack with `defaultBundling()` and reports its size, its largest inputs
 * and its median import time in fresh Node processes, with and without `--enable-source-maps`.
 */
export async function measureBundles(options: BenchOptions): Promise<BenchSection> {
  const workingDir = process.cwd();
  const entries = sizedEntries(
    functionEntries(
      synthExampleTemplates().map(({ template }) => template),
      workingDir,
    ),
    options.size,
  );
  const outdir = await mkdtemp(join(tmpdir(), 'bench-bundles-'));
  try {
    // esbuild builds side by side; the imports are timed one at a time, so they do not compete for the CPU.
    const bundles = await Promise.all(
      entries.map((fn) =>
        buildBundle(defaultBundling(), {
          entry: fn.entry,
          outdir: join(outdir, fn.entry.replace(/[^a-zA-Z0-9]+/g, '-')),
          workingDir,
        }),
      ),
    );
    const figures: FunctionFigures[] = [];
    for (const [index, fn] of entries.entries()) {
      figures.push(await measureImports(fn, bundles[index] as BuiltBundle, options.repeats));
    }
    return {
      title: 'Bundle and cold start',
      columns: [
        'function',
        'entry',
        'KB (minified)',
        'import ms',
        'import ms (source maps on)',
        `largest inputs (KB)`,
      ],
      rows: figures.map((f) => [
        f.fn.name,
        f.fn.entry,
        formatNumber(kb(f.bundle.bytes)),
        formatNumber(f.importMs),
        formatNumber(f.importWithSourceMapsMs),
        largestInputsCell(f.bundle.inputs),
      ]),
      targets: targets(figures),
      notes: [
        'Bundled with esbuild using defaultBundling() translated option by option (the settings cdk deploy uses); KB = 1,000 bytes of index.mjs, source map excluded.',
        `Import ms: median over ${options.repeats} fresh node process(es) of performance.now() around import() of the bundle; process start-up excluded.`,
        'Source maps on: the same with NODE_OPTIONS=--enable-source-maps, as the functions are deployed.',
        'Largest inputs: bytes each package puts in the minified bundle (esbuild metafile), largest first.',
      ],
    };
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}
