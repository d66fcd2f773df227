/**
 * Finding a function by the name someone gives it. In an app of several stacks each function is named
 * `<stack display name>/<construct path>`; the construct path alone still names it when exactly one stack has
 * a function there, so tests and overrides written for one stack keep working. An app of one stack names its
 * functions by construct path alone, as it always did.
 */
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { qualifiedName } from '../template/app-of-stacks.ts';

/** Resolves given names to the runtime's own function names. */
export interface FunctionNames {
  /** Every function's name, in order. */
  readonly names: readonly string[];
  /**
   * The function `given` names: itself, or the one qualified name it is the construct path of. Throws
   * `UNKNOWN_FUNCTION` for a name that names none, `AMBIGUOUS_FUNCTION` (listing them) for one that names several.
   */
  resolve(given: string): string;
  /**
   * `record` (keyed by function name) with each unambiguous construct path also answering, as a property that
   * is not enumerated: `Object.keys` and spreading see each function once.
   */
  withPaths<T>(record: Record<string, T>): Readonly<Record<string, T>>;
}

/**
 * The names of `functions`; `stacks` lists the display names that qualify them (empty for an app of one stack).
 * @example
 * const names = functionNames(['Shop/Health', 'Mailroom/Health', 'Mailroom/Courier'], ['Shop', 'Mailroom']);
 * names.resolve('Courier'); // 'Mailroom/Courier'
 * names.resolve('Health'); // throws AMBIGUOUS_FUNCTION: Shop/Health, Mailroom/Health
 */
export function functionNames(functions: readonly string[], stacks: readonly string[]): FunctionNames {
  const known = new Set(functions);
  const candidatesOf = (path: string): string[] =>
    stacks.map((stack) => qualifiedName(stack, path)).filter((name) => known.has(name));
  const paths = new Map<string, string>();
  for (const name of functions) {
    for (const stack of stacks) {
      const prefix = qualifiedName(stack, '');
      if (!name.startsWith(prefix)) continue;
      const path = name.slice(prefix.length);
      const [only, ...others] = candidatesOf(path);
      if (only !== undefined && others.length === 0 && !known.has(path)) paths.set(path, only);
    }
  }
  return {
    names: functions,
    resolve(given) {
      if (known.has(given)) return given;
      const candidates = candidatesOf(given);
      const [only, ...others] = candidates;
      if (only !== undefined && others.length === 0) return only;
      if (only !== undefined) {
        throw new LocalRuntimeError(
          'AMBIGUOUS_FUNCTION',
          `${given} names a function in ${candidates.length} stacks (${candidates.join(', ')}); ` +
            'say which one with its stack: <stack>/<path>',
        );
      }
      throw new LocalRuntimeError(
        'UNKNOWN_FUNCTION',
        `no function ${given} runs locally (functions: ${functions.join(', ') || 'none'})`,
      );
    },
    withPaths(record) {
      const copy = { ...record };
      for (const [path, name] of paths) {
        if (!(name in record) || path in copy) continue;
        Object.defineProperty(copy, path, { value: record[name], enumerable: false });
      }
      return copy;
    },
  };
}
