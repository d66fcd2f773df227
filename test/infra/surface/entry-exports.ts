/**
 * The names a package entry exports, values and types alike, read with the TypeScript checker from its source
 * (what `dist/*.d.ts` will declare).
 */
import { resolve } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../source-imports.ts';

/** Each entry file's exported names, sorted; one program for all, so the checker parses the sources once. */
export function entryExports(entries: readonly string[]): Map<string, string[]> {
  const files = entries.map((entry) => resolve(REPO_ROOT, entry));
  const program = ts.createProgram(files, {
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
    strict: true,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const found = new Map<string, string[]>();
  entries.forEach((entry, index) => {
    const source = program.getSourceFile(files[index] ?? '');
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`${entry}: not a module the checker can read`);
    found.set(
      entry,
      checker
        .getExportsOfModule(symbol)
        .map((exported) => exported.name)
        .sort(),
    );
  });
  return found;
}
