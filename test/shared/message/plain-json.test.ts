import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../../shared/errors.ts';
import { UnreadableNumber } from '../../../shared/message/dynamo-numbers.ts';
import { assertPlainJson, MAX_PAYLOAD_DEPTH } from '../../../shared/message/plain-json.ts';

/** The error `assertPlainJson` throws for `value`. */
function refusal(value: unknown): InvalidMessageError {
  try {
    assertPlainJson(value, 'payload');
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return error as InvalidMessageError;
  }
  throw new Error(`expected ${String(value)} to be refused`);
}

/** [1, <hole>, 3]: a sparse array, as `new Array(3)` leaves it before index 1 is set. */
function withHole(): unknown[] {
  const list: unknown[] = new Array(3);
  list[0] = 1;
  list[2] = 3;
  return list;
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = { child: value };
  return value;
}

describe('assertPlainJson', () => {
  it('accepts plain JSON values', () => {
    const value = {
      text: 'Zoë 🚀',
      empty: '',
      integer: Number.MAX_SAFE_INTEGER,
      negative: -12,
      fraction: 0.1,
      tiny: 1e-100,
      flag: false,
      nothing: null,
      list: [1, 'two', { three: 3 }, []],
      'spaced key': {},
      bare: Object.create(null) as object,
    };

    expect(() => assertPlainJson(value, 'payload')).not.toThrow();
  });

  it.each(
    [
      ['a BigInt', { order: { total: 10n } }, 'payload.order.total', /bigint/],
      ['a Set', { skus: new Set(['A']) }, 'payload.skus', /Set/],
      ['a Map', { lines: new Map() }, 'payload.lines', /Map/],
      ['a Uint8Array', { bytes: new Uint8Array([1]) }, 'payload.bytes', /Uint8Array/],
      ['a Date', { at: new Date(0) }, 'payload.at', /Date/],
      ['a class instance', { user: new (class User {})() }, 'payload.user', /User/],
      ['undefined', { note: undefined }, 'payload.note', /undefined/],
      ['a function', { run: () => 1 }, 'payload.run', /function/],
      ['a symbol', { tag: Symbol('x') }, 'payload.tag', /symbol/],
      ['NaN', { price: Number.NaN }, 'payload.price', /NaN/],
      ['Infinity', { price: Number.POSITIVE_INFINITY }, 'payload.price', /Infinity/],
      ['-0', { delta: -0 }, 'payload.delta', /-0/],
      ['an unsafe integer', { id: 2 ** 53 }, 'payload.id', /cannot read it back/],
      ['1e20', { big: 1e20 }, 'payload.big', /cannot read it back/],
      ['a number below DynamoDB range', { tiny: 1e-200 }, 'payload.tiny', /1E-130/],
      ['a lone surrogate', { name: 'a\ud800' }, 'payload.name', /lone surrogate/],
      ['a lone surrogate in a key', { 'a\udc00': 1 }, 'payload["a\\udc00"]', /lone surrogate/],
      ['a __proto__ key', JSON.parse('{"__proto__":{"admin":true}}'), 'payload.__proto__', /__proto__/],
      ['an array hole', { list: withHole() }, 'payload.list[1]', /hole/],
      [
        'a stored number JavaScript cannot read',
        { total: new UnreadableNumber('1e20') },
        'payload.total',
        /1e20/,
      ],
      ['a symbol key', { [Symbol('k')]: 1 }, 'payload', /symbol/],
    ].map(([kind, value, path, problem]) => ({ kind, value, path, problem })),
  )('refuses $kind, naming its path', ({ value, path, problem }) => {
    const error = refusal(value);

    expect(error.path).toBe(path);
    expect(error.message).toMatch(problem as RegExp);
    expect(error.code).toBe('INVALID_MESSAGE');
  });

  it(`refuses nesting deeper than DynamoDB allows (${MAX_PAYLOAD_DEPTH} levels under the payload)`, () => {
    expect(() => assertPlainJson(nested(MAX_PAYLOAD_DEPTH), 'payload')).not.toThrow();
    expect(refusal(nested(MAX_PAYLOAD_DEPTH + 1)).message).toMatch(/nested more than 31 levels/);
  });

  it('accepts exactly what survives JSON unchanged', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        let accepted = true;
        try {
          assertPlainJson(value, 'payload');
        } catch {
          accepted = false;
        }
        // Everything accepted round-trips; what is refused would not (fast-check's JSON values include -0).
        const roundTrips =
          Object.is(JSON.parse(JSON.stringify(value)), value) ||
          deepEqual(JSON.parse(JSON.stringify(value)), value);
        return !accepted || roundTrips;
      }),
      { numRuns: 300 },
    );
  });
});

function deepEqual(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return (
    keysA.length === keysB.length &&
    keysA.every((key) => deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}
