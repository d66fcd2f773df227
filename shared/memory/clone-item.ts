/**
 * Deep copies of item values that keep what `structuredClone` loses: a `NumberValue` stays a `NumberValue`
 * (structuredClone turns a class instance into a plain object), sets stay sets, binaries stay binaries.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';

/** A deep copy of an item value (a whole item included). */
export function cloneValue<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  // A NumberValue is never changed in place here, so it can be shared.
  if (value instanceof NumberValue) return value;
  if (value instanceof Uint8Array) return new Uint8Array(value) as T;
  if (value instanceof Set) return new Set([...value].map(cloneValue)) as T;
  if (Array.isArray(value)) return value.map(cloneValue) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  const copy: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) copy[name] = cloneValue(member);
  return copy as T;
}

/**
 * A deep copy without `undefined` members of maps and lists: what the Document client (with
 * `removeUndefinedValues`, as the library's client is built) sends to DynamoDB for an item or a value.
 */
export function cloneDefined<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof NumberValue || value instanceof Uint8Array || value instanceof Date)
    return cloneValue(value);
  if (value instanceof Set) return new Set([...value].filter(isDefined).map(cloneDefined)) as T;
  if (Array.isArray(value)) return value.filter(isDefined).map(cloneDefined) as T;
  const copy: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    if (member !== undefined) copy[name] = cloneDefined(member);
  }
  return copy as T;
}

function isDefined(value: unknown): boolean {
  return value !== undefined;
}
