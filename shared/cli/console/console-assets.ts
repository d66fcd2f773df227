/**
 * The console page's script and style sheet. The published package carries them prebuilt (`npm run build` bundles
 * `web/` next to this module's compiled file); run from the sources (`npm run outbox -- console`), they are bundled
 * here at start with esbuild, a development dependency, so the console works without a build.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ConfigError, describeError } from '../../errors.ts';

/** The page's script and style sheet, and where they came from. */
export interface ConsoleAssets {
  readonly script: string;
  readonly style: string;
  /** `prebuilt`: from the package; `bundled`: from the sources, just now. */
  readonly origin: 'prebuilt' | 'bundled';
}

/** The bundle's file names, in the folder `web/` beside this module. */
export const CONSOLE_BUNDLE = { script: 'console.js', style: 'console.css' } as const;

/** The front end's sources, beside this module in the repository. */
const SOURCES = { script: 'web/main.ts', style: 'web/console.css' } as const;

let bundled: Promise<ConsoleAssets> | undefined;

/**
 * The assets: the prebuilt bundle when there is one beside this module, else the sources bundled (once per process).
 * @example
 * const { script, style } = await loadConsoleAssets();
 */
export async function loadConsoleAssets(): Promise<ConsoleAssets> {
  const prebuilt = {
    script: new URL(`./web/${CONSOLE_BUNDLE.script}`, import.meta.url),
    style: new URL(`./web/${CONSOLE_BUNDLE.style}`, import.meta.url),
  };
  if (existsSync(prebuilt.script) && existsSync(prebuilt.style)) {
    const [script, style] = await Promise.all([
      readFile(prebuilt.script, 'utf8'),
      readFile(prebuilt.style, 'utf8'),
    ]);
    return { script, style, origin: 'prebuilt' };
  }
  bundled ??= bundleConsole();
  return bundled;
}

/**
 * Bundles the front end's sources with esbuild (minified, one ES module and one style sheet, nothing left to fetch
 * from anywhere else). Throws a `ConfigError` where esbuild or the sources are missing.
 */
export async function bundleConsole(): Promise<ConsoleAssets> {
  const sources = {
    script: new URL(`./${SOURCES.script}`, import.meta.url),
    style: new URL(`./${SOURCES.style}`, import.meta.url),
  };
  if (!existsSync(sources.script)) {
    throw new ConfigError(
      `the console's page is missing: neither web/${CONSOLE_BUNDLE.script} (built by npm run build) nor its sources are beside ${fileURLToPath(import.meta.url)}`,
    );
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (cause) {
    throw new ConfigError(
      `the console's page is not built and esbuild, which builds it from the sources, cannot be loaded: ${describeError(cause)}; run npm run build`,
      { cause },
    );
  }
  const result = await esbuild.build({
    entryPoints: [
      { in: fileURLToPath(sources.script), out: 'console' },
      { in: fileURLToPath(sources.style), out: 'console' },
    ],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    outdir: 'console-bundle',
    write: false,
    logLevel: 'silent',
  });
  const output = (extension: string) =>
    result.outputFiles.find((file) => file.path.endsWith(`console.${extension}`))?.text ?? '';
  return { script: output('js'), style: output('css'), origin: 'bundled' };
}

/**
 * Writes the bundle to `outdir` (the build's `dist/shared/cli/console/web`), where the published console finds it.
 * @example
 * await writeConsoleBundle('dist/shared/cli/console/web');
 */
export async function writeConsoleBundle(outdir: string): Promise<{ readonly files: readonly string[] }> {
  const { script, style } = await bundleConsole();
  await mkdir(outdir, { recursive: true });
  const files = [`${outdir}/${CONSOLE_BUNDLE.script}`, `${outdir}/${CONSOLE_BUNDLE.style}`];
  await Promise.all([writeFile(files[0] ?? '', script), writeFile(files[1] ?? '', style)]);
  return { files };
}
