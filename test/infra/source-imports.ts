/**
 * The module specifiers a TypeScript source file imports, read with the TypeScript parser (so an import-like
 * string or comment is never taken for an import): static imports, re-exports, `import x = require()` and
 * dynamic `import()` with a literal argument.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The repository root (the tests run from it, as `cdk synth` does). */
export const REPO_ROOT = process.cwd();

/** One import of a source file. */
export interface ImportSpecifier {
  /** The file, relative to the repository root. */
  readonly file: string;
  /** The module specifier as written. */
  readonly specifier: string;
  /** Whether the import is `import type` / `export type`, so nothing is loaded at run time. */
  readonly typeOnly: boolean;
  /** For a relative specifier, the imported path relative to the repository root. */
  readonly target?: string;
}

/** Every `.ts` file under `directory` (relative to the repository root), recursively. */
export function sourceFiles(directory: string): string[] {
  const root = resolve(REPO_ROOT, directory);
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => relative(REPO_ROOT, join(root, path)).split('\\').join('/'))
    .sort();
}

/** The imports of `file` (relative to the repository root). */
export function importsOf(file: string): ImportSpecifier[] {
  const text = readFileSync(resolve(REPO_ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: ImportSpecifier[] = [];
  const add = (literal: ts.Expression | undefined, typeOnly: boolean): void => {
    if (literal === undefined || !ts.isStringLiteralLike(literal)) return;
    const specifier = literal.text;
    const target = specifier.startsWith('.')
      ? relative(REPO_ROOT, resolve(dirname(resolve(REPO_ROOT, file)), specifier))
          .split('\\')
          .join('/')
      : undefined;
    found.push({ file, specifier, typeOnly, ...(target === undefined ? {} : { target }) });
  };
  const visit = (node: ts.Node): void => {
    // Under `verbatimModuleSyntax` only `import type` / `export type` disappear from the JavaScript; an
    // `import { type X }` still loads its module.
    if (ts.isImportDeclaration(node)) {
      add(node.moduleSpecifier, node.importClause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as ts.Expression, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Whether `path` (relative to the repository root) is `directory` or lies under it. */
export function isUnder(path: string, directory: string): boolean {
  return path === directory || path.startsWith(`${directory}/`) || path.startsWith(`${directory}.`);
}
