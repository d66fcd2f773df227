/**
 * The library's layers, read from its imports. Each layer may import only those below it:
 *
 *   entries (shared/index.ts, shared/admin/index.ts, shared/memory/index.ts, shared/lambda/index.ts)
 *   edges: handler factories (shared/lambda), the CLI (shared/cli), settings (shared/settings)
 *   adapters (shared/aws): the only library code that calls the AWS SDK, besides the CLI and the in-memory doubles
 *   core: messages, the state machine, retry, ordering, relay, sweeper, consumer and admin logic, and their ports
 *
 * and the product (shared/, infra/constructs/) never imports the example or the development tooling, and has no
 * import cycle. `LAYER_RULES` below is the whole rule set; a failure names the file and the import that broke it.
 */
import { describe, expect, it } from 'vitest';
import { type ImportSpecifier, importsOf, isUnder, sourceFiles } from './source-imports.ts';

/** Folders (and files) of the core: they import no SDK, Powertools or CDK value, no adapter and no edge. */
const CORE = [
  'shared/admin',
  'shared/archive',
  'shared/claim-check',
  'shared/consumer',
  'shared/errors.ts',
  'shared/message',
  'shared/observability',
  'shared/ordering',
  'shared/outbox',
  'shared/receipts',
  'shared/relay',
  'shared/retry',
  'shared/sweeper',
  'shared/transaction',
  'shared/validation',
] as const;
/** The entry modules: what `package.json` exports, each a list of re-exports. */
const ENTRIES = [
  'shared/index.ts',
  'shared/admin/index.ts',
  'shared/lambda/index.ts',
  'shared/memory/index.ts',
];
const ADAPTERS = 'shared/aws';
const EDGES = ['shared/settings', 'shared/lambda', 'shared/cli'] as const;
/** Where library code may load the AWS SDK at run time. */
const SDK_ALLOWED = ['shared/aws', 'shared/lambda', 'shared/cli', 'shared/memory'] as const;
/** Development tooling and the example app: the product never imports them. */
const NOT_PRODUCT = ['infra/dev', 'infra/local', 'infra/drill', 'infra/bench', 'infra/stacks', 'functions'];
const PRODUCT = ['shared', 'infra/constructs'] as const;

const SDK_PACKAGE = /^@aws-sdk\/|^@smithy\//;
const RUNTIME_FRAMEWORK = /^@aws-lambda-powertools\/|^aws-cdk-lib|^constructs$|^@middy\//;

const under = (path: string, folders: readonly string[]): boolean =>
  folders.some((folder) => isUnder(path, folder));
const isEntry = (path: string): boolean => ENTRIES.includes(path);
const isCore = (path: string): boolean => under(path, CORE) && !isEntry(path);
const shown = ({ file, specifier }: ImportSpecifier): string => `${file} → ${specifier}`;

const productImports = PRODUCT.flatMap((folder) => sourceFiles(folder)).flatMap(importsOf);

/** Every import of a core module that reaches above the core. */
function coreViolations(imports: readonly ImportSpecifier[]): string[] {
  return imports
    .filter(({ file }) => isCore(file))
    .filter(({ specifier, target, typeOnly }) => {
      if (target === undefined) {
        return !typeOnly && (SDK_PACKAGE.test(specifier) || RUNTIME_FRAMEWORK.test(specifier));
      }
      return under(target, [ADAPTERS, ...EDGES, 'shared/memory']) || isEntry(`${target}`);
    })
    .map(shown);
}

/** Every run-time SDK import of library code outside the adapters, the edges that may and the in-memory doubles. */
function sdkViolations(imports: readonly ImportSpecifier[]): string[] {
  return imports
    .filter(({ file }) => isUnder(file, 'shared') && !under(file, SDK_ALLOWED))
    .filter(
      ({ specifier, target, typeOnly }) => target === undefined && !typeOnly && SDK_PACKAGE.test(specifier),
    )
    .map(shown);
}

/** Adapters implement core ports; they never reach up into settings, handlers or the CLI. */
function adapterViolations(imports: readonly ImportSpecifier[]): string[] {
  return imports
    .filter(({ file }) => isUnder(file, ADAPTERS))
    .filter(({ target }) => target !== undefined && (under(target, EDGES) || isEntry(target)))
    .map(shown);
}

/** Settings read the environment; they may use core constants, never adapters, handlers or the CLI. */
function settingsViolations(imports: readonly ImportSpecifier[]): string[] {
  return imports
    .filter(({ file }) => isUnder(file, 'shared/settings'))
    .filter(
      ({ target }) =>
        target !== undefined && (under(target, [ADAPTERS, 'shared/lambda', 'shared/cli']) || isEntry(target)),
    )
    .map(shown);
}

/** Imports from the product into the example or the tooling. */
function productViolations(imports: readonly ImportSpecifier[]): string[] {
  return imports.filter(({ target }) => target !== undefined && under(target, NOT_PRODUCT)).map(shown);
}

/** The import cycles among `files` (type imports included), each as the files on it. */
function importCycles(imports: readonly ImportSpecifier[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const { file, target } of imports) {
    const edges = graph.get(file) ?? [];
    if (target !== undefined) edges.push(target);
    graph.set(file, edges);
  }
  // Tarjan's strongly connected components: any component of more than one file is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

describe('the library layers', () => {
  it('has sources in every layer', () => {
    const files = new Set(productImports.map(({ file }) => file));
    for (const folder of [...CORE.filter((path) => !path.endsWith('.ts')), ADAPTERS, ...EDGES]) {
      expect(
        [...files].some((file) => isUnder(file, folder)),
        folder,
      ).toBe(true);
    }
  });

  it('keeps the core free of the SDK, Powertools, the CDK, adapters, edges and entries', () => {
    expect(coreViolations(productImports)).toEqual([]);
  });

  it('loads the AWS SDK only in adapters, handler factories, the CLI and the in-memory doubles', () => {
    expect(sdkViolations(productImports)).toEqual([]);
  });

  it('keeps adapters below the edges and settings below the adapters', () => {
    expect([...adapterViolations(productImports), ...settingsViolations(productImports)]).toEqual([]);
  });

  it('never imports the example or the development tooling from the product', () => {
    expect(productViolations(productImports)).toEqual([]);
  });

  it('has no import cycle in the product', () => {
    expect(importCycles(productImports)).toEqual([]);
  });
});

/** The CLI's own packages: a service's bundle must never carry them. */
const CLI_ONLY = /^commander$|^@aws-sdk\/client-cloudformation$|^@aws-sdk\/client-sts$/;

/** Every module and package an entry loads at run time, following value imports only (what esbuild bundles). */
function loadedBy(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const { specifier, target, typeOnly } of importsOf(file)) {
      if (typeOnly) continue;
      if (target === undefined) packages.add(specifier);
      else visit(target);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('what a service bundles', () => {
  it.each(['shared/index.ts', 'shared/lambda/index.ts', 'infra/constructs/index.ts'])(
    '%s loads nothing of the CLI',
    (entry) => {
      const { files, packages } = loadedBy(entry);
      expect([...files].filter((file) => isUnder(file, 'shared/cli'))).toEqual([]);
      expect([...packages].filter((name) => CLI_ONLY.test(name))).toEqual([]);
    },
  );
});

describe('the layer rules themselves', () => {
  // Each rule on a deliberate violation, so a rule that cannot fail is caught here.
  const at = (file: string, specifier: string, typeOnly = false): ImportSpecifier => {
    const target = /^(shared|infra|functions)\//.test(specifier) ? specifier : undefined;
    return { file, specifier, typeOnly, ...(target === undefined ? {} : { target }) };
  };

  it('flags a core module that imports an adapter, the SDK, Powertools or an edge', () => {
    expect(
      coreViolations([
        at('shared/relay/relay-messages.ts', 'shared/aws/sqs-publisher.ts'),
        at('shared/consumer/consume-message.ts', '@aws-sdk/lib-dynamodb'),
        at('shared/sweeper/sweep.ts', '@aws-lambda-powertools/logger'),
        at('shared/admin/list-messages.ts', 'shared/settings/outbox-settings.ts'),
        at('shared/outbox/outbox-store.ts', 'shared/lambda/create-logger.ts'),
      ]),
    ).toHaveLength(5);
    expect(coreViolations([at('shared/outbox/write-with-outbox.ts', '@aws-sdk/lib-dynamodb', true)])).toEqual(
      [],
    );
  });

  it('sees the CLI packages from the CLI entry, so the bundle check can fail', () => {
    expect([...loadedBy('shared/cli/main.ts').packages].filter((name) => CLI_ONLY.test(name)).sort()).toEqual(
      ['@aws-sdk/client-cloudformation', '@aws-sdk/client-sts', 'commander'],
    );
  });

  it('flags an SDK value outside the adapters, the edges and the doubles', () => {
    expect(sdkViolations([at('shared/settings/setting.ts', '@aws-sdk/client-sqs')])).toHaveLength(1);
    expect(sdkViolations([at('shared/aws/clients.ts', '@aws-sdk/client-sqs')])).toEqual([]);
  });

  it('flags the product importing tooling or the example, and a cycle', () => {
    expect(productViolations([at('shared/index.ts', 'infra/dev/local/host/start.ts')])).toHaveLength(1);
    expect(productViolations([at('infra/constructs/index.ts', 'functions/orders/order.ts')])).toHaveLength(1);
    expect(
      importCycles([
        at('shared/a.ts', 'shared/b.ts'),
        at('shared/b.ts', 'shared/a.ts'),
        at('shared/c.ts', 'shared/a.ts'),
      ]),
    ).toEqual([['shared/a.ts', 'shared/b.ts']]);
  });
});
