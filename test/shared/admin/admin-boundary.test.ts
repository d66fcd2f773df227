import { describe, expect, it } from 'vitest';
import { importsOf, isUnder, sourceFiles } from '../../infra/source-imports.ts';

/**
 * Cores that reach their tables only through ports: the adapters in shared/aws are the only callers of the SDK.
 * `write-with-outbox.ts` still sends its own transaction; it leaves this list once it writes through a port.
 */
const PORTED_CORES = ['shared/admin', 'shared/outbox'] as const;
const NOT_YET_PORTED = new Set(['shared/outbox/write-with-outbox.ts']);

describe('the admin and outbox cores', () => {
  const files = PORTED_CORES.flatMap((directory) => sourceFiles(directory)).filter(
    (file) => !NOT_YET_PORTED.has(file),
  );

  it('has sources to check', () => {
    expect(files).toContain('shared/admin/skip-order-gap.ts');
  });

  it('load no SDK module and no adapter (type imports of the SDK are allowed)', () => {
    const offending = files
      .flatMap(importsOf)
      .filter(
        ({ specifier, target, typeOnly }) =>
          (specifier.startsWith('@aws-sdk/') && !typeOnly) ||
          (target !== undefined && isUnder(target, 'shared/aws')),
      )
      .map(({ file, specifier }) => `${file} → ${specifier}`);
    expect(offending).toEqual([]);
  });
});
