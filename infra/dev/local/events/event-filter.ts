/**
 * The subset of Lambda's event filtering (EventBridge pattern syntax) the local pollers apply, so that a
 * record the deployed mapping would drop never reaches the local handler either.
 *
 * Supported: nested objects, and arrays of exact values (string, number, boolean, null), plus the
 * `prefix`, `suffix`, `exists`, `numeric` and `anything-but` (exact values) operators. Anything else fails at start rather than
 * silently matching differently from AWS.
 */

import { LocalRuntimeError } from '../local-runtime-error.ts';

/** An EventBridge-style filter pattern, as a mapping's `FilterCriteria` holds it (`{ eventName: ['INSERT'] }`). */
export type FilterPattern = Readonly<Record<string, unknown>>;

type Scalar = string | number | boolean | null;
type ValueTest = (value: unknown, present: boolean) => boolean;
type Matcher = (event: unknown) => boolean;

/**
 * A predicate that is true when `event` matches any of `patterns` (an empty list matches everything, as a
 * mapping without filter criteria does).
 * @example
 * const isInsert = compileFilters([{ eventName: ['INSERT'] }]);
 * isInsert({ eventName: 'INSERT' }); // true
 */
export function compileFilters(patterns: readonly FilterPattern[]): (event: unknown) => boolean {
  if (patterns.length === 0) return () => true;
  const matchers = patterns.map((pattern, index) => compileObject(pattern, `filters[${index}]`));
  return (event) => matchers.some((matches) => matches(event));
}

function compileObject(pattern: FilterPattern, path: string): Matcher {
  const fields = Object.entries(pattern).map(([key, rule]): Matcher => {
    const at = `${path}.${key}`;
    if (Array.isArray(rule)) {
      const test = compileValueList(rule, at);
      return (event) => {
        const present = isRecord(event) && key in event;
        return test(present ? event[key] : undefined, present);
      };
    }
    if (isRecord(rule)) {
      const nested = compileObject(rule, at);
      return (event) => isRecord(event) && nested(event[key]);
    }
    throw unsupported(`${at}: a pattern value must be an array of values or a nested object`);
  });
  return (event) => fields.every((matches) => matches(event));
}

/** Any value test matching is enough; an array in the event matches when any of its elements does. */
function compileValueList(rules: readonly unknown[], path: string): ValueTest {
  const tests = rules.map((rule, index) => compileValueTest(rule, `${path}[${index}]`));
  return (value, present) => {
    const candidates = Array.isArray(value) ? value : [value];
    return tests.some((test) =>
      // `exists` looks at presence, not at each element.
      candidates.length === 0
        ? test(undefined, present)
        : candidates.some((candidate) => test(candidate, present)),
    );
  };
}

function compileValueTest(rule: unknown, path: string): ValueTest {
  if (isScalar(rule)) return (value, present) => present && value === rule;
  if (!isRecord(rule)) throw unsupported(`${path}: unsupported rule ${JSON.stringify(rule)}`);
  const operators = Object.keys(rule);
  const [operator] = operators;
  if (operators.length !== 1 || operator === undefined) {
    throw unsupported(`${path}: a rule object must hold exactly one operator`);
  }
  const operand = rule[operator];
  if (operator === 'prefix' && typeof operand === 'string') {
    return (value, present) => present && typeof value === 'string' && value.startsWith(operand);
  }
  if (operator === 'exists' && typeof operand === 'boolean') {
    return (_value, present) => present === operand;
  }
  if (operator === 'suffix' && typeof operand === 'string') {
    return (value, present) => present && typeof value === 'string' && value.endsWith(operand);
  }
  if (operator === 'anything-but') {
    const excluded = Array.isArray(operand) ? operand : [operand];
    if (excluded.every(isScalar)) return (value, present) => present && !excluded.includes(value as Scalar);
  }
  if (operator === 'numeric' && Array.isArray(operand)) return compileNumeric(operand, path);
  throw unsupported(
    `${path}: operator ${JSON.stringify(operator)} with ${JSON.stringify(operand)} is not supported locally`,
  );
}

const COMPARISONS: Readonly<Record<string, (value: number, bound: number) => boolean>> = {
  '=': (value, bound) => value === bound,
  '<': (value, bound) => value < bound,
  '<=': (value, bound) => value <= bound,
  '>': (value, bound) => value > bound,
  '>=': (value, bound) => value >= bound,
};

/** `{ numeric: ['>', 0, '<=', 5] }`: every comparison holds for a number (or a numeric string, as in a stream image). */
function compileNumeric(operand: readonly unknown[], path: string): ValueTest {
  const checks: ((value: number) => boolean)[] = [];
  for (let index = 0; index < operand.length; index += 2) {
    const compare = COMPARISONS[String(operand[index])];
    const bound = operand[index + 1];
    if (compare === undefined || typeof bound !== 'number') {
      throw unsupported(`${path}: malformed numeric rule ${JSON.stringify(operand)}`);
    }
    checks.push((value) => compare(value, bound));
  }
  return (value, present) => {
    const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    return (
      present &&
      typeof number === 'number' &&
      Number.isFinite(number) &&
      checks.every((check) => check(number))
    );
  };
}

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A pattern uses syntax the local matcher does not implement: the start fails rather than match differently. */
function unsupported(message: string): LocalRuntimeError {
  return new LocalRuntimeError('UNSUPPORTED_TEMPLATE', `event filter ${message}`);
}
