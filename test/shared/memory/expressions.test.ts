import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  applyUpdate,
  compareValues,
  compileCondition,
  compileKeyCondition,
  compileProjection,
  type ExpressionContext,
  expressionPlaceholders,
  type Item,
  sameValue,
  UnsupportedExpressionError,
  updatedAttributeNames,
} from '../../../shared/memory/expressions.ts';

/** Evaluates a condition with `#x` → `x` for every name used and the given values. */
function holds(expression: string, item: Item, values: Record<string, unknown> = {}): boolean {
  const names = Object.fromEntries(
    (expression.match(/#\w+/g) ?? []).map((placeholder) => [placeholder, placeholder.slice(1)]),
  );
  return compileCondition(expression, { names, values })(item);
}

/** Applies an update with `#x` → `x` for every name used and the given values. */
function updated(expression: string, item: Item, values: Record<string, unknown> = {}): Item {
  const names = Object.fromEntries(
    (expression.match(/#\w+/g) ?? []).map((placeholder) => [placeholder, placeholder.slice(1)]),
  );
  return applyUpdate(item, expression, { names, values });
}

const EARLY = '2024-05-01T12:00:00.000Z';
const LATE = '2024-05-01T12:00:01.000Z';

describe('compileCondition', () => {
  describe('attribute_exists / attribute_not_exists', () => {
    it('tells a present attribute from a missing one', () => {
      const item = { id: 'a', status: 'PENDING' };
      expect(holds('attribute_exists(#status)', item)).toBe(true);
      expect(holds('attribute_not_exists(#status)', item)).toBe(false);
      expect(holds('attribute_exists(#leaseOwner)', item)).toBe(false);
      expect(holds('attribute_not_exists(#leaseOwner)', item)).toBe(true);
    });

    it('treats every attribute of a missing item (an empty one) as not existing', () => {
      expect(holds('attribute_not_exists(#id)', {})).toBe(true);
      expect(holds('attribute_exists(#id)', {})).toBe(false);
    });

    it('follows nested map paths and list indexes', () => {
      const item = { headers: { traceparent: 't' }, items: [{ sku: 'A' }] };
      expect(holds('attribute_exists(#headers.#traceparent)', item)).toBe(true);
      expect(holds('attribute_exists(#headers.#other)', item)).toBe(false);
      expect(holds('attribute_exists(#items[0].#sku)', item)).toBe(true);
      expect(holds('attribute_exists(#items[1])', item)).toBe(false);
    });

    it('counts an attribute whose value is false, 0 or empty as existing', () => {
      expect(holds('attribute_exists(#flag)', { flag: false })).toBe(true);
      expect(holds('attribute_exists(#count)', { count: 0 })).toBe(true);
      expect(holds('attribute_exists(#text)', { text: '' })).toBe(true);
    });
  });

  describe('comparisons', () => {
    it('compares numbers numerically, not as text', () => {
      const item = { attempts: 9 };
      expect(holds('#attempts < :ten', item, { ':ten': 10 })).toBe(true);
      expect(holds('#attempts > :ten', item, { ':ten': 10 })).toBe(false);
      expect(holds('#attempts <= :nine', item, { ':nine': 9 })).toBe(true);
      expect(holds('#attempts >= :nine', item, { ':nine': 9 })).toBe(true);
      expect(holds('#attempts >= :ten', item, { ':ten': 10 })).toBe(false);
      expect(holds('#attempts = :nine', item, { ':nine': 9 })).toBe(true);
      expect(holds('#attempts <> :nine', item, { ':nine': 9 })).toBe(false);
      expect(holds('#attempts <> :ten', item, { ':ten': 10 })).toBe(true);
    });

    it('orders ISO-8601 timestamps chronologically', () => {
      expect(holds('#nextAttemptAt <= :now', { nextAttemptAt: EARLY }, { ':now': LATE })).toBe(true);
      expect(holds('#nextAttemptAt <= :now', { nextAttemptAt: EARLY }, { ':now': EARLY })).toBe(true);
      expect(holds('#nextAttemptAt <= :now', { nextAttemptAt: LATE }, { ':now': EARLY })).toBe(false);
      expect(holds('#nextAttemptAt < :now', { nextAttemptAt: EARLY }, { ':now': EARLY })).toBe(false);
      expect(holds('#nextAttemptAt > :now', { nextAttemptAt: LATE }, { ':now': EARLY })).toBe(true);
    });

    it('compares strings by character code (upper case sorts before lower case)', () => {
      expect(holds('#name < :lower', { name: 'Z' }, { ':lower': 'a' })).toBe(true);
    });

    it('never matches values of different types', () => {
      const item = { attempts: 1 };
      expect(holds('#attempts = :text', item, { ':text': '1' })).toBe(false);
      expect(holds('#attempts < :text', item, { ':text': '2' })).toBe(false);
      expect(holds('#attempts >= :text', item, { ':text': '0' })).toBe(false);
    });

    it('evaluates every comparison with a missing attribute to false', () => {
      const values = { ':v': 1, ':low': 0, ':high': 10, ':p': 'x' };
      for (const condition of [
        '#missing = :v',
        '#missing < :v',
        '#missing <= :v',
        '#missing > :v',
        '#missing >= :v',
        '#missing IN (:v, :low)',
        '#missing BETWEEN :low AND :high',
        'begins_with(#missing, :p)',
      ]) {
        expect(holds(condition, { present: 1 }, values), condition).toBe(false);
      }
    });

    it('makes NOT of a comparison with a missing attribute true', () => {
      expect(holds('NOT #missing = :v', {}, { ':v': 1 })).toBe(true);
    });

    it('compares two attributes of the item with each other', () => {
      expect(holds('#available >= #reserved', { available: 3, reserved: 2 })).toBe(true);
      expect(holds('#available >= #reserved', { available: 1, reserved: 2 })).toBe(false);
    });

    it('compares whole maps and lists by value', () => {
      const item = { headers: { a: '1' }, tags: ['x', 'y'] };
      expect(holds('#headers = :h', item, { ':h': { a: '1' } })).toBe(true);
      expect(holds('#tags = :t', item, { ':t': ['x', 'y'] })).toBe(true);
      expect(holds('#tags = :t', item, { ':t': ['y', 'x'] })).toBe(false);
    });
  });

  describe('IN', () => {
    const values = { ':from0': 'PENDING', ':from1': 'SENT', ':from2': 'FAILED' };

    it('matches when the value equals one of the list', () => {
      expect(holds('#status IN (:from0, :from1, :from2)', { status: 'SENT' }, values)).toBe(true);
      expect(holds('#status IN (:from0)', { status: 'PENDING' }, values)).toBe(true);
    });

    it('does not match a value outside the list', () => {
      expect(holds('#status IN (:from0, :from1, :from2)', { status: 'CONFIRMED' }, values)).toBe(false);
    });
  });

  describe('BETWEEN', () => {
    it('includes both bounds', () => {
      const values = { ':low': 2, ':high': 4 };
      expect(holds('#n BETWEEN :low AND :high', { n: 2 }, values)).toBe(true);
      expect(holds('#n BETWEEN :low AND :high', { n: 3 }, values)).toBe(true);
      expect(holds('#n BETWEEN :low AND :high', { n: 4 }, values)).toBe(true);
      expect(holds('#n BETWEEN :low AND :high', { n: 1 }, values)).toBe(false);
      expect(holds('#n BETWEEN :low AND :high', { n: 5 }, values)).toBe(false);
    });

    it('works on ISO timestamps and combines with a following AND', () => {
      const values = { ':low': EARLY, ':high': LATE, ':s': 'PENDING' };
      expect(
        holds('#at BETWEEN :low AND :high AND #status = :s', { at: LATE, status: 'PENDING' }, values),
      ).toBe(true);
      expect(holds('#at BETWEEN :low AND :high AND #status = :s', { at: LATE, status: 'SENT' }, values)).toBe(
        false,
      );
    });
  });

  describe('begins_with', () => {
    it('matches a string prefix only', () => {
      const values = { ':p': 'order.' };
      expect(holds('begins_with(#topic, :p)', { topic: 'order.created' }, values)).toBe(true);
      expect(holds('begins_with(#topic, :p)', { topic: 'stock.order.created' }, values)).toBe(false);
      expect(holds('begins_with(#topic, :p)', { topic: 42 }, values)).toBe(false);
    });
  });

  describe('size', () => {
    it('measures strings in bytes, lists and maps by their entries', () => {
      expect(holds('size(#s) = :n', { s: 'é' }, { ':n': 2 })).toBe(true);
      expect(holds('size(#l) > :n', { l: [1, 2, 3] }, { ':n': 2 })).toBe(true);
      expect(holds('size(#m) = :n', { m: { a: 1 } }, { ':n': 1 })).toBe(true);
    });
  });

  describe('AND / OR / NOT and parentheses', () => {
    const values = { ':t': true };
    const item = { a: true, b: false, c: false };

    it('binds AND tighter than OR', () => {
      // a OR (b AND c) = true; (a OR b) AND c = false.
      expect(holds('#a = :t OR #b = :t AND #c = :t', item, values)).toBe(true);
    });

    it('lets parentheses override precedence', () => {
      expect(holds('(#a = :t OR #b = :t) AND #c = :t', item, values)).toBe(false);
    });

    it('binds NOT tighter than AND', () => {
      // (NOT b) AND a = true; NOT (b AND a) would also be true, so use c: (NOT a) AND c = false.
      expect(holds('NOT #b = :t AND #a = :t', item, values)).toBe(true);
      expect(holds('NOT #a = :t AND #c = :t', item, values)).toBe(false);
      expect(holds('NOT (#a = :t AND #c = :t)', item, values)).toBe(true);
    });

    it('reads the keywords in any case, as DynamoDB does for AND / OR / NOT', () => {
      expect(holds('#a = :t and not #b = :t or #c = :t', item, values)).toBe(true);
    });

    it('evaluates the outbox conditions as written by the library', () => {
      const condition =
        'attribute_exists(#messageId) AND #status IN (:from0) AND (#attempts = :seen OR attribute_not_exists(#attempts))';
      const context: ExpressionContext = {
        names: { '#messageId': 'messageId', '#status': 'status', '#attempts': 'attempts' },
        values: { ':from0': 'PENDING', ':seen': 2 },
      };
      const predicate = compileCondition(condition, context);
      expect(predicate({ messageId: 'm', status: 'PENDING', attempts: 2 })).toBe(true);
      expect(predicate({ messageId: 'm', status: 'PENDING' })).toBe(true);
      expect(predicate({ messageId: 'm', status: 'PENDING', attempts: 3 })).toBe(false);
      expect(predicate({ messageId: 'm', status: 'SENT', attempts: 2 })).toBe(false);
      expect(predicate({})).toBe(false);
    });
  });

  describe('outside the supported subset', () => {
    it('refuses an unknown value placeholder when compiling', () => {
      expect(() => compileCondition('#a = :missing', { names: { '#a': 'a' }, values: {} })).toThrow(
        UnsupportedExpressionError,
      );
      expect(() => compileCondition('#a = :missing', { names: { '#a': 'a' } })).toThrow(/:missing/);
    });

    it('refuses an unknown name placeholder when compiling', () => {
      expect(() => compileCondition('#nope = :v', { values: { ':v': 1 } })).toThrow(
        UnsupportedExpressionError,
      );
    });

    it('refuses functions it does not implement instead of guessing', () => {
      expect(() =>
        compileCondition('contains(#a, :v)', { names: { '#a': 'a' }, values: { ':v': 'x' } }),
      ).toThrow(UnsupportedExpressionError);
    });

    it('refuses trailing tokens and unbalanced parentheses', () => {
      const context = { names: { '#a': 'a' }, values: { ':v': 1 } };
      expect(() => compileCondition('#a = :v :v', context)).toThrow(UnsupportedExpressionError);
      expect(() => compileCondition('(#a = :v', context)).toThrow(UnsupportedExpressionError);
      expect(() => compileCondition('#a = ', context)).toThrow(UnsupportedExpressionError);
    });

    it('refuses characters that are not part of the grammar', () => {
      expect(() => compileCondition('#a = :v; DROP', { names: { '#a': 'a' }, values: { ':v': 1 } })).toThrow(
        UnsupportedExpressionError,
      );
    });
  });
});

describe('applyUpdate', () => {
  it('starts a missing counter with if_not_exists(…, :zero) + :one', () => {
    const expression = 'SET #attempts = if_not_exists(#attempts, :zero) + :one';
    const values = { ':zero': 0, ':one': 1 };
    expect(updated(expression, { id: 'a' }, values)).toEqual({ id: 'a', attempts: 1 });
    expect(updated(expression, { id: 'a', attempts: 4 }, values)).toEqual({ id: 'a', attempts: 5 });
  });

  it('subtracts with `#a - :q`', () => {
    expect(updated('SET #available = #available - :q', { available: 5 }, { ':q': 2 })).toEqual({
      available: 3,
    });
  });

  it('refuses arithmetic on a missing attribute instead of inventing a zero, as DynamoDB does', () => {
    expect(() => updated('SET #available = #available - :q', {}, { ':q': 2 })).toThrow(
      expect.objectContaining({
        name: 'ValidationException',
        message: 'The provided expression refers to an attribute that does not exist in the item',
      }),
    );
  });

  it('SETs several attributes and REMOVEs others in one expression', () => {
    const item = { id: 'a', status: 'PENDING', leaseOwner: 'x', leaseUntil: EARLY, keep: 1 };
    expect(
      updated('SET #status = :to, #sentAt = :now REMOVE #leaseOwner, #leaseUntil', item, {
        ':to': 'SENT',
        ':now': LATE,
      }),
    ).toEqual({ id: 'a', status: 'SENT', sentAt: LATE, keep: 1 });
  });

  it('accepts REMOVE before SET', () => {
    expect(updated('REMOVE #a SET #b = :v', { a: 1 }, { ':v': 2 })).toEqual({ b: 2 });
  });

  it('ignores REMOVE of an attribute that is not there', () => {
    expect(updated('REMOVE #missing', { a: 1 })).toEqual({ a: 1 });
  });

  it('evaluates every right-hand side against the item as it was before the update', () => {
    expect(updated('SET #a = #b, #b = #a', { a: 1, b: 2 })).toEqual({ a: 2, b: 1 });
    expect(
      updated('SET #attempts = #attempts + :one, #previous = #attempts', { attempts: 3 }, { ':one': 1 }),
    ).toEqual({ attempts: 4, previous: 3 });
  });

  it('sets a nested map attribute', () => {
    expect(updated('SET #headers.#trace = :t', { headers: { a: '1' } }, { ':t': 'x' })).toEqual({
      headers: { a: '1', trace: 'x' },
    });
  });

  it('returns a copy and leaves the given item untouched', () => {
    const item = { id: 'a', nested: { n: 1 } };
    const result = updated('SET #nested.#n = :two REMOVE #id', item, { ':two': 2 });
    expect(item).toEqual({ id: 'a', nested: { n: 1 } });
    expect(result).toEqual({ nested: { n: 2 } });
  });

  it('refuses an unknown placeholder', () => {
    expect(() => applyUpdate({}, 'SET #a = :missing', { names: { '#a': 'a' }, values: {} })).toThrow(
      UnsupportedExpressionError,
    );
    expect(() => applyUpdate({}, 'SET #nope = :v', { values: { ':v': 1 } })).toThrow(
      UnsupportedExpressionError,
    );
  });

  it('ADDs a number (to 0 when missing) and set members, and DELETEs set members', () => {
    const before = { n: 1, tags: new Set(['a', 'b']) };
    const values = { ':one': 1, ':more': new Set(['b', 'c']), ':gone': new Set(['a', 'b', 'c']) };

    expect(updated('ADD #n :one, #tags :more', before, values)).toEqual({
      n: 2,
      tags: new Set(['a', 'b', 'c']),
    });
    expect(updated('ADD #count :one', {}, values)).toEqual({ count: 1 });
    expect(updated('DELETE #tags :gone', before, values)).toEqual({ n: 1 });
    expect(updated('SET #n = :one ADD #m :one', {}, values)).toEqual({ n: 1, m: 1 });
    const incorrectType = expect.objectContaining({
      name: 'ValidationException',
      message: 'An operand in the update expression has an incorrect data type',
    });
    expect(() => updated('ADD #tags :one', before, values)).toThrow(incorrectType);
    expect(() => updated('DELETE #n :one', before, values)).toThrow(incorrectType);
  });

  it('appends lists with list_append', () => {
    expect(updated('SET #l = list_append(#l, :more)', { l: [1] }, { ':more': [2, 3] })).toEqual({
      l: [1, 2, 3],
    });
  });
});

describe('compileKeyCondition', () => {
  const context: ExpressionContext = {
    names: { '#pk': 'shard', '#sk': 'dueAt' },
    values: { ':pk': '3', ':now': LATE, ':low': EARLY, ':prefix': '2024' },
  };

  it('reads the terms of a key condition, with the attribute, operator and values of each', () => {
    const terms = compileKeyCondition('#pk = :pk AND #sk <= :now', context);

    expect(terms.map(({ attribute, operator, values }) => ({ attribute, operator, values }))).toEqual([
      { attribute: 'shard', operator: '=', values: ['3'] },
      { attribute: 'dueAt', operator: '<=', values: [LATE] },
    ]);
    expect(terms[1]?.test({ dueAt: EARLY })).toBe(true);
    expect(terms[1]?.test({ dueAt: '2024-05-01T12:00:02.000Z' })).toBe(false);
  });

  it('reads BETWEEN and begins_with on the sort key, in parentheses too', () => {
    const [, between] = compileKeyCondition('#pk = :pk AND (#sk BETWEEN :low AND :now)', context);
    const [, prefix] = compileKeyCondition('#pk = :pk AND begins_with(#sk, :prefix)', context);

    expect([between?.operator, between?.values]).toEqual(['BETWEEN', [EARLY, LATE]]);
    expect(between?.test({ dueAt: EARLY })).toBe(true);
    expect(prefix?.operator).toBe('BEGINS_WITH');
    expect(prefix?.test({ dueAt: EARLY })).toBe(true);
  });

  it('refuses what a key condition cannot hold: OR, nested paths, attributes compared with attributes', () => {
    for (const expression of ['#pk = :pk OR #sk = :now', 'a.b = :pk', '#pk = #sk', '#pk <> :pk']) {
      expect(() => compileKeyCondition(expression, context), expression).toThrow(UnsupportedExpressionError);
    }
  });
});

describe('compileProjection', () => {
  const item = { a: 1, b: { c: 2, d: [10, 20, 30] }, e: 'x' };

  it('keeps only the named paths, nested as in the item, with picked list elements closed up', () => {
    expect(compileProjection('a, b.d[2], b.d[0], #e', { names: { '#e': 'e' } })(item)).toEqual({
      a: 1,
      b: { d: [10, 30] },
      e: 'x',
    });
    expect(compileProjection('missing, b.c', {})(item)).toEqual({ b: { c: 2 } });
  });

  it('hands out a copy', () => {
    const projected = compileProjection('b', {})(item);
    (projected.b as { c: number }).c = 99;

    expect(item.b.c).toBe(2);
  });
});

describe('placeholders and updated attributes', () => {
  it('lists the name and value placeholders an expression uses', () => {
    expect(expressionPlaceholders('SET #a = :one, b = #c + :two REMOVE #d')).toEqual({
      names: new Set(['#a', '#c', '#d']),
      values: new Set([':one', ':two']),
    });
  });

  it('names the top-level attributes an update sets or removes', () => {
    expect(
      updatedAttributeNames('SET #a = :v, nested.deep = :v REMOVE gone', {
        names: { '#a': 'a' },
        values: { ':v': 1 },
      }),
    ).toEqual(['a', 'nested', 'gone']);
  });
});

describe('value equality and order', () => {
  it('compares numbers of any kind by value, sets in any order, binaries byte by byte', () => {
    expect(sameValue(1.5, new NumberValue('1.50'))).toBe(true);
    expect(sameValue(new Set(['a', 'b']), new Set(['b', 'a']))).toBe(true);
    expect(sameValue(new Set(['a']), new Set(['b']))).toBe(false);
    expect(sameValue({ l: [1, { m: true }] }, { l: [1, { m: true }] })).toBe(true);
    expect(sameValue(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(compareValues(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBeLessThan(0);
    expect(compareValues(new NumberValue('123456789012345678901234567890'), 1e29)).toBeGreaterThan(0);
    expect(compareValues('1', 1)).toBeUndefined();
  });

  it('evaluates begins_with on binaries and conditions on exact numbers', () => {
    expect(
      holds('begins_with(#b, :p)', { b: new Uint8Array([1, 2, 3]) }, { ':p': new Uint8Array([1, 2]) }),
    ).toBe(true);
    expect(holds('#n > :v', { n: new NumberValue('9007199254740993') }, { ':v': 9007199254740992 })).toBe(
      true,
    );
  });

  it('adds exactly in an update, where doubles would round', () => {
    expect(updated('SET #n = #n + :v', { n: 0.1 }, { ':v': 0.2 })).toEqual({ n: 0.3 });
  });
});
