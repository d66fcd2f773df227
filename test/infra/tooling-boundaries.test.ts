import { describe, expect, it } from 'vitest';
import { importsOf, isUnder, sourceFiles } from './source-imports.ts';

/** The development tooling: the local runtime (`npm start`), the fault drill and the bench. */
const TOOLING = 'infra/dev';

/**
 * The library's entry files, one per published entry. Anything
 * the tooling needs from deeper in the library is exported from one of these (internals from `/testing`).
 */
const ENTRY_FILES = new Set([
  'shared/index.ts',
  'shared/admin/index.ts',
  'shared/lambda/index.ts',
  'shared/memory/index.ts',
  'infra/constructs/index.ts',
]);

/** The entries a package-name import may name. */
const PUBLISHED_ENTRIES = new Set([
  'serverless-outbox',
  'serverless-outbox/admin',
  'serverless-outbox/lambda',
  'serverless-outbox/cdk',
  'serverless-outbox/testing',
]);

describe('the development tooling', () => {
  const files = sourceFiles(TOOLING);

  it('has sources to check', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'infra/dev/local/host/start.ts',
        'infra/dev/drill/cli.ts',
        'infra/dev/bench/cli.ts',
      ]),
    );
  });

  it('uses the library only through its entry files', () => {
    const offending = files
      .flatMap(importsOf)
      .filter(
        ({ specifier, target }) =>
          (specifier.startsWith('serverless-outbox') && !PUBLISHED_ENTRIES.has(specifier)) ||
          (target !== undefined &&
            (isUnder(target, 'shared') || isUnder(target, 'infra/constructs')) &&
            !ENTRY_FILES.has(target)),
      )
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });
});
