import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, isUnder, REPO_ROOT, sourceFiles } from '../source-imports.ts';

/** The library's sources: what `npm pack` ships. */
const LIBRARY_DIRECTORIES = ['infra/constructs', 'shared'] as const;

/** The package name of a bare specifier (`@aws-sdk/lib-dynamodb`, `aws-cdk-lib/aws-sqs` → `aws-cdk-lib`). */
function packageName(specifier: string): string {
  const [first = '', second = ''] = specifier.split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

const manifest = JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
/** What a project that installs the package gets (or must provide, for peer dependencies). */
const INSTALLED = new Set([
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
]);

describe('the construct library', () => {
  const files = sourceFiles('infra/constructs');

  it('has sources to check', () => {
    expect(files).toContain('infra/constructs/transactional-outbox.ts');
  });

  it('imports nothing from the example, the local runtime, the drill or the old topology', () => {
    const forbidden = ['functions', 'infra/stacks', 'infra/dev', 'infra/topology', 'infra/app'];
    const offending = files
      .flatMap(importsOf)
      .filter(
        ({ target }) => target !== undefined && forbidden.some((directory) => isUnder(target, directory)),
      )
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });

  it('reaches outside itself only into the library core', () => {
    const offending = files
      .flatMap(importsOf)
      .filter(({ target }) => target !== undefined)
      .filter(({ target = '' }) => !isUnder(target, 'infra/constructs') && !isUnder(target, 'shared'))
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });
});

describe('the library core', () => {
  it('imports nothing from the CDK side, the example or the local runtime', () => {
    const offending = sourceFiles('shared')
      .flatMap(importsOf)
      .filter(({ target }) => target !== undefined && !isUnder(target, 'shared'))
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });
});

/**
 * What the library may load that no installing project has, and why it never does at run time: the console's front
 * end is bundled at `npm run build` (the package ships the bundle, not these sources, which import Preact), and
 * from the repository's sources the console bundles it at start with esbuild, a development dependency it imports
 * only then (a missing esbuild is a named error, and the package never reaches that path).
 */
const BUILD_TIME_ONLY = {
  directory: 'shared/cli/console/web',
  imports: new Map([['shared/cli/console/console-assets.ts', 'esbuild']]),
} as const;

describe('the packed library', () => {
  it.each(LIBRARY_DIRECTORIES)(
    'loads from %s only Node built-ins and packages it depends on (or names as peers)',
    (directory) => {
      const builtins = new Set(builtinModules);
      const offending = sourceFiles(directory)
        .filter((file) => !isUnder(file, BUILD_TIME_ONLY.directory))
        .flatMap(importsOf)
        .filter(({ file, specifier }) => BUILD_TIME_ONLY.imports.get(file) !== specifier)
        .filter(({ target, typeOnly }) => target === undefined && !typeOnly)
        .filter(({ specifier }) => {
          if (specifier.startsWith('node:')) return !builtins.has(specifier.slice('node:'.length));
          return !INSTALLED.has(packageName(specifier));
        })
        .map(({ file, specifier }) => `${file} → ${specifier}`);
      expect(offending).toEqual([]);
    },
  );

  it('never imports itself by its package name (the sources would load a second copy from dist/)', () => {
    const offending = LIBRARY_DIRECTORIES.flatMap(sourceFiles)
      .flatMap(importsOf)
      .filter(({ specifier }) => packageName(specifier) === 'serverless-outbox')
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });
});
