/**
 * DynamoDB's JSON AttributeValues (`{"S": "…"}`, `{"N": "1.5"}`, `{"B": "<base64>"}`…) to and from the item
 * values the in-memory table holds, with @aws-sdk/util-dynamodb doing the conversion. Numbers stay exact:
 * a double only when it holds the number exactly, a `NumberValue` otherwise. Input is checked the way
 * DynamoDB checks it (one type per value, numbers in range, sets non-empty and without duplicates).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import {
  canonicalNumber,
  exactNumber,
  InvalidNumberError,
  type Item,
  numberText,
} from '../../../../../shared/memory/index.ts';
import { WireError } from './wire-error.ts';

const TYPES = ['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL'] as const;

/**
 * An item from the wire (a map of attribute name → AttributeValue), as the in-memory table holds it.
 * Throws a ValidationException {@link WireError} for a malformed value.
 */
export function fromWireItem(wire: unknown, where: string): Item {
  if (!isObject(wire)) throw invalid(`${where} must be a map of attribute values`);
  const checked: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(wire)) checked[name] = checkedValue(value, `${where}.${name}`);
  return unmarshall(checked, { wrapNumbers: exactNumber });
}

/** An optional item from the wire; `undefined` stays `undefined`. */
export function fromWireItemOrUndefined(wire: unknown, where: string): Item | undefined {
  return wire === undefined || wire === null ? undefined : fromWireItem(wire, where);
}

/** ExpressionAttributeValues from the wire (`:name` → AttributeValue), as expression values. */
export function fromWireValues(wire: unknown): Record<string, unknown> | undefined {
  if (wire === undefined || wire === null) return undefined;
  return fromWireItem(wire, 'ExpressionAttributeValues');
}

/** An item (or key) of the in-memory table as wire AttributeValues. */
export function toWireItem(item: Item): Record<string, unknown> {
  return wireBinaries(marshall(uniformNumberSets(item), { removeUndefinedValues: true })) as Record<
    string,
    unknown
  >;
}

/**
 * AttributeValues the SDK's own `marshall` produced (an exception's `Item`), ready for JSON: binaries as
 * base64 text.
 */
export function toWireAttributeValues(values: Record<string, AttributeValue>): Record<string, unknown> {
  return wireBinaries(values) as Record<string, unknown>;
}

function checkedValue(value: unknown, where: string): AttributeValue {
  if (!isObject(value)) throw invalid(`${where}: an AttributeValue must be an object`);
  const present = TYPES.filter((type) => value[type] !== undefined && value[type] !== null);
  const [type] = present;
  if (present.length !== 1 || type === undefined) {
    throw invalid(
      `Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes (${where})`,
    );
  }
  const raw = value[type];
  switch (type) {
    case 'S':
      return { S: stringOf(raw, where) };
    case 'N':
      return { N: number(raw, where) };
    case 'B':
      return { B: binary(raw, where) };
    case 'BOOL':
      if (typeof raw !== 'boolean') throw invalid(`${where}: BOOL must be true or false`);
      return { BOOL: raw };
    case 'NULL':
      if (raw !== true)
        throw invalid(
          `One or more parameter values were invalid: Null attribute value types must have the value of true (${where})`,
        );
      return { NULL: true };
    case 'SS':
      return {
        SS: uniqueSet(
          listOf(raw, where).map((member) => stringOf(member, where)),
          where,
          'string',
        ),
      };
    case 'NS':
      return {
        NS: uniqueSet(
          listOf(raw, where).map((member) => number(member, where)),
          where,
          'number',
        ),
      };
    case 'BS': {
      const members = listOf(raw, where).map((member) => binary(member, where));
      uniqueSet(
        members.map((member) => Buffer.from(member).toString('base64')),
        where,
        'binary',
      );
      return { BS: members };
    }
    case 'L':
      return { L: listOf(raw, where).map((member, index) => checkedValue(member, `${where}[${index}]`)) };
    case 'M': {
      if (!isObject(raw)) throw invalid(`${where}: M must be a map`);
      return {
        M: Object.fromEntries(
          Object.entries(raw).map(([name, member]) => [name, checkedValue(member, `${where}.${name}`)]),
        ),
      };
    }
  }
}

function stringOf(raw: unknown, where: string): string {
  if (typeof raw !== 'string') throw invalid(`${where}: expected a string`);
  return raw;
}

function number(raw: unknown, where: string): string {
  if (typeof raw !== 'string') throw invalid(`${where}: a number must be sent as text`);
  try {
    return canonicalNumber(raw);
  } catch (error) {
    if (error instanceof InvalidNumberError) throw invalid(`${error.message} (${where})`);
    throw error;
  }
}

function binary(raw: unknown, where: string): Uint8Array {
  if (typeof raw !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(raw)) {
    throw invalid(`${where}: a binary must be sent as base64 text`);
  }
  return new Uint8Array(Buffer.from(raw, 'base64'));
}

function listOf(raw: unknown, where: string): unknown[] {
  if (!Array.isArray(raw)) throw invalid(`${where}: expected a list`);
  return raw;
}

function uniqueSet<T extends string>(members: T[], where: string, kind: string): T[] {
  if (members.length === 0) {
    throw invalid(`One or more parameter values were invalid: An ${kind} set  may not be empty (${where})`);
  }
  if (new Set(members).size !== members.length) {
    throw invalid(
      `One or more parameter values were invalid: Input collection ${JSON.stringify(members)} contains duplicates.`,
    );
  }
  return members;
}

/**
 * `marshall` writes a number set from its first member's kind: a set mixing doubles and `NumberValue`s is
 * written as all `NumberValue`s, which always marshal exactly.
 */
function uniformNumberSets(value: unknown): unknown {
  if (value instanceof Set) {
    const members = [...value];
    return members.some((member) => member instanceof NumberValue)
      ? new Set(members.map((member) => new NumberValue(numberText(member as number | NumberValue))))
      : value;
  }
  if (Array.isArray(value)) return value.map(uniformNumberSets);
  if (isObject(value) && !(value instanceof Uint8Array) && !(value instanceof NumberValue)) {
    return Object.fromEntries(
      Object.entries(value).map(([name, member]) => [name, uniformNumberSets(member)]),
    );
  }
  return value;
}

/** AttributeValues with their binaries as base64 text, as DynamoDB's JSON protocol carries them. */
function wireBinaries(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(wireBinaries);
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, wireBinaries(member)]));
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): WireError {
  return new WireError('ValidationException', message);
}
