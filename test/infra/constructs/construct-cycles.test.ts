import { describe, expect, it } from 'vitest';
import { importsOf, isUnder, sourceFiles } from '../source-imports.ts';

const CONSTRUCTS = 'infra/constructs';

/** Each file of the construct library → the files of the library it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(CONSTRUCTS);
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      [
        ...new Set(
          importsOf(file)
            .map(({ target }) => target)
            .filter((target): target is string => target !== undefined && known.has(target)),
        ),
      ],
    ]),
  );
}

/**
 * The import cycles of `graph`, each as the files around it (`a → b → a`), found by a depth-first search that
 * reports every back edge once.
 */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const start = path.indexOf(next);
      if (start >= 0) cycles.push([...path.slice(start), next].join(' → '));
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return cycles;
}

describe('the construct library’s files', () => {
  const graph = importGraph();

  it('are read with their imports', () => {
    expect(graph.get(`${CONSTRUCTS}/transactional-outbox.ts`)).toContain(`${CONSTRUCTS}/outbox-relay.ts`);
    expect([...graph.keys()].every((file) => isUnder(file, CONSTRUCTS))).toBe(true);
  });

  it('import one another without a cycle, type-only imports included', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const cyclic = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cyclesOf(cyclic)).toEqual(['a.ts → b.ts → c.ts → a.ts']);
  });
});
