import { InvalidMessageError } from '../errors.ts';
import { UnreadableNumber } from './dynamo-numbers.ts';

/**
 * DynamoDB nests documents at most 32 levels deep; the payload is itself one attribute of the outbox item, so
 * it keeps one level less.
 */
export const MAX_PAYLOAD_DEPTH = 31;

/** The smallest magnitude DynamoDB stores (its numbers range from 1E-130 to 9.9999…E+125). */
const MIN_MAGNITUDE = 1e-130;

/**
 * Throws an {@link InvalidMessageError} naming the first value under `path` that would not come back exactly
 * the same after a trip through DynamoDB and JSON: only `null`, booleans, well-formed strings, finite numbers
 * that JavaScript reads back as written (safe integers; fractions DynamoDB can hold), arrays and plain objects
 * with string keys. A BigInt, a Map, a Set, a Date, a typed array, `undefined`, NaN, -0 or a lone surrogate
 * would be sent changed, or fail on every delivery attempt — so it is refused before anything is written.
 * @example
 * assertPlainJson({ sku: 'A', quantity: 2 }, 'payload'); // fine
 * assertPlainJson({ total: 10n }, 'payload'); // InvalidMessageError: payload.total: a bigint is not JSON
 */
export function assertPlainJson(value: unknown, path: string): void {
  check(value, path, 0);
}

function check(value: unknown, path: string, depth: number): void {
  if (depth > MAX_PAYLOAD_DEPTH) {
    throw new InvalidMessageError(path, `nested more than ${MAX_PAYLOAD_DEPTH} levels deep`);
  }
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'string') {
    if (!value.isWellFormed())
      throw new InvalidMessageError(path, 'a string with a lone surrogate is not valid UTF-8');
    return;
  }
  if (typeof value === 'number') {
    checkNumber(value, path);
    return;
  }
  if (typeof value !== 'object') throw new InvalidMessageError(path, `a ${typeof value} is not JSON`);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      // A hole reads as undefined, which JSON turns into null.
      if (!(index in value)) throw new InvalidMessageError(`${path}[${index}]`, 'an array hole is not JSON');
      check(value[index], `${path}[${index}]`, depth + 1);
    }
    return;
  }
  if (value instanceof UnreadableNumber) {
    throw new InvalidMessageError(
      path,
      `the stored number ${value.text} cannot be read back exactly by JavaScript`,
    );
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'non-plain object';
    throw new InvalidMessageError(path, `a ${kind} is not plain JSON (use an object, an array or a string)`);
  }
  if (Object.getOwnPropertySymbols(value).length > 0) {
    throw new InvalidMessageError(path, 'symbol keys are not JSON');
  }
  for (const [key, child] of Object.entries(value)) {
    const childPath = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
    // A key that JSON.parse turns back into the prototype would not survive the trip.
    if (key === '__proto__') throw new InvalidMessageError(childPath, 'the key "__proto__" is not allowed');
    if (!key.isWellFormed())
      throw new InvalidMessageError(childPath, 'a key with a lone surrogate is not valid UTF-8');
    if (child === undefined)
      throw new InvalidMessageError(childPath, 'undefined is not JSON (omit the key or use null)');
    check(child, childPath, depth + 1);
  }
}

function checkNumber(value: number, path: string): void {
  if (!Number.isFinite(value)) throw new InvalidMessageError(path, `${value} is not a JSON number`);
  if (Object.is(value, -0)) throw new InvalidMessageError(path, '-0 becomes 0 in JSON');
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw new InvalidMessageError(
      path,
      `${value} is beyond ±${Number.MAX_SAFE_INTEGER}: JavaScript cannot read it back exactly (send it as a string)`,
    );
  }
  if (value !== 0 && Math.abs(value) < MIN_MAGNITUDE) {
    throw new InvalidMessageError(path, `${value} is smaller than DynamoDB's smallest number (1E-130)`);
  }
}
