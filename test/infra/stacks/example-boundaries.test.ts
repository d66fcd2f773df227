import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, isUnder, REPO_ROOT, sourceFiles } from '../source-imports.ts';

/** The example: its handlers, its stack and its CDK app. */
const EXAMPLE_FILES = [...sourceFiles('functions'), ...sourceFiles('infra/stacks'), 'infra/app.ts'];

/** The entry points the package exports; anything deeper is not part of its public surface. */
const ENTRY_POINTS = new Set([
  'serverless-outbox',
  'serverless-outbox/lambda',
  'serverless-outbox/cdk',
  'serverless-outbox/testing',
]);

describe('the example', () => {
  it('has files to check', () => {
    expect(EXAMPLE_FILES).toEqual(
      expect.arrayContaining([
        'functions/inventory/apply-order/handler.ts',
        'infra/stacks/orders-stack.ts',
        'infra/stacks/inventory-stack.ts',
        'infra/stacks/loyalty-stack.ts',
        'infra/app.ts',
      ]),
    );
  });

  it('imports the library by its package name, never by a relative path', () => {
    const offending = EXAMPLE_FILES.flatMap(importsOf)
      .filter(
        ({ specifier, target }) =>
          specifier.startsWith('shared/') ||
          specifier.startsWith('infra/constructs') ||
          (target !== undefined && (isUnder(target, 'shared') || isUnder(target, 'infra/constructs'))),
      )
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });

  it('imports the library only through the entry points the package exports', () => {
    const offending = EXAMPLE_FILES.flatMap(importsOf)
      .filter(({ specifier }) => specifier.startsWith('serverless-outbox') && !ENTRY_POINTS.has(specifier))
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });

  it('keeps its Lambda code free of the CDK app, the local runtime and the drill, which bundles must not carry', () => {
    const offending = sourceFiles('functions')
      .flatMap(importsOf)
      .filter(
        ({ specifier, target }) =>
          specifier.startsWith('aws-cdk-lib') || (target !== undefined && isUnder(target, 'infra')),
      )
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });

  it.each(sourceFiles('functions').filter((file) => file.endsWith('/handler.ts')))(
    'keeps %s a thin entry point of at most 30 lines',
    (file) => {
      const lines = readFileSync(resolve(REPO_ROOT, file), 'utf8').trimEnd().split('\n');
      expect(lines.length).toBeLessThanOrEqual(30);
    },
  );
});
