/**
 * The order the stacks of one app deploy in: each after the stacks it depends on — the cloud assembly's
 * dependencies, and the stacks whose exports it imports (`Fn::ImportValue`) — and otherwise in the order given.
 */
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { type CloudFormationTemplate, isRecord } from './cloudformation-template.ts';

/** What ordering needs of a stack. */
export interface OrderedStack {
  readonly stackName: string;
  /** Names of the stacks it depends on; names of stacks not in the list are ignored. */
  readonly dependencies: readonly string[];
}

/**
 * `stacks` in deployment order; throws `SYNTH_FAILED` when their dependencies form a cycle.
 * @example
 * deploymentOrder([{ stackName: 'B', dependencies: ['A'] }, { stackName: 'A', dependencies: [] }]); // A, B
 */
export function deploymentOrder<T extends OrderedStack>(stacks: readonly T[]): T[] {
  const byName = new Map(stacks.map((stack) => [stack.stackName, stack]));
  const state = new Map<string, 'visiting' | 'done'>();
  const order: T[] = [];
  const visit = (stack: T, path: readonly string[]): void => {
    const seen = state.get(stack.stackName);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      throw new LocalRuntimeError(
        'SYNTH_FAILED',
        `the app's stacks depend on each other in a cycle: ${[...path, stack.stackName].join(' → ')}`,
      );
    }
    state.set(stack.stackName, 'visiting');
    for (const name of stack.dependencies) {
      const dependency = byName.get(name);
      if (dependency !== undefined && name !== stack.stackName) visit(dependency, [...path, stack.stackName]);
    }
    state.set(stack.stackName, 'done');
    order.push(stack);
  };
  for (const stack of stacks) visit(stack, []);
  return order;
}

/**
 * For each stack, the names of the other stacks whose exports its template imports (export names written as
 * literal strings, as CDK writes its cross-stack references).
 * @example
 * importDependencies([{ stackName: 'Shop', template: shop }, { stackName: 'Mailroom', template: mailroom }]);
 * // Map { 'Shop' => [], 'Mailroom' => ['Shop'] }
 */
export function importDependencies(
  stacks: readonly { readonly stackName: string; readonly template: CloudFormationTemplate }[],
): Map<string, string[]> {
  const exporterOf = new Map<string, string>();
  for (const { stackName, template } of stacks) {
    for (const name of exportNames(template)) exporterOf.set(name, stackName);
  }
  return new Map(
    stacks.map(({ stackName, template }) => [
      stackName,
      [
        ...new Set(
          importedNames(template).flatMap((name) => {
            const exporter = exporterOf.get(name);
            return exporter === undefined || exporter === stackName ? [] : [exporter];
          }),
        ),
      ],
    ]),
  );
}

/** The literal export names of a template's outputs (`Outputs.*.Export.Name`). */
export function exportNames(template: CloudFormationTemplate): string[] {
  return Object.values(template.Outputs ?? {}).flatMap((output) =>
    isRecord(output) && isRecord(output.Export) && typeof output.Export.Name === 'string'
      ? [output.Export.Name]
      : [],
  );
}

/** Every literal name a template imports with `Fn::ImportValue`, in order, once each. */
export function importedNames(node: unknown): string[] {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isRecord(value)) return;
    for (const [key, item] of Object.entries(value)) {
      if (key === 'Fn::ImportValue' && typeof item === 'string') found.add(item);
      else visit(item);
    }
  };
  visit(node);
  return [...found];
}
