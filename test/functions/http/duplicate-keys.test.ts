import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateKeys } from '../../../functions/http/duplicate-keys.ts';

function fieldsOf(json: string): string[] {
  // The scanner's contract: it only sees text JSON.parse has accepted.
  JSON.parse(json);
  return duplicateKeys(json).map((problem) => problem.field);
}

describe('duplicateKeys', () => {
  it('finds a repeated key at the top level, naming it', () => {
    expect(duplicateKeys('{"quantity":5000,"quantity":1}')).toEqual([
      { field: 'quantity', problem: expect.stringContaining('"quantity" appears more than once') },
    ]);
  });

  it.each([
    [
      'in an object in an array',
      '{"items":[{"sku":"A","quantity":5000,"quantity":1}]}',
      ['items[0].quantity'],
    ],
    ['in the second line', '{"items":[{"sku":"A"},{"sku":"B","sku":"C"}]}', ['items[1].sku']],
    ['deep down', '{"a":{"b":[0,[{"c":1,"c":2}]]}}', ['a.b[1][0].c']],
    ['in a top-level array', '[{"a":1},{"a":1,"a":2}]', ['[1].a']],
    ['three times', '{"a":1,"a":2,"a":3}', ['a', 'a']],
    ['in two objects', '{"a":1,"a":2,"o":{"b":1,"b":2}}', ['a', 'o.b']],
    ['spelled with an escape', '{"a":1,"\\u0061":2}', ['a']],
    ['after a nested object', '{"a":{"x":1,"y":[1,2]},"b":1,"a":2}', ['a']],
    ['with whitespace everywhere', '{ "a" : 1 ,\n\t"a" : 2 }', ['a']],
    ['with a key that needs quoting', '{"gift wrap":1,"gift wrap":2}', ['["gift wrap"]']],
    ['named __proto__', '{"__proto__":1,"__proto__":2}', ['__proto__']],
  ])('finds a repeated key %s', (_, json, fields) => {
    expect(fieldsOf(json)).toEqual(fields);
  });

  it.each([
    ['the same key in sibling objects', '[{"a":1},{"a":2}]'],
    ['the same key in a parent and a child', '{"a":{"a":{"a":1}}}'],
    ['a key repeated inside a string value', '{"a":"\\"b\\":1,\\"b\\":2","b":1}'],
    ['brackets and commas inside strings', '{"a":"{[,","b":"]}","c":"\\\\"}'],
    ['keys that differ only by an escape', '{"a\\"":1,"a":2,"a\\\\":3}'],
    ['a string value equal to a key', '{"a":"a","b":"a"}'],
    ['empty containers', '{"a":{},"b":[],"c":[{}],"d":[[]]}'],
    ['scalars', '"a"'],
    ['an array of scalars', '[1,"a",true,null]'],
  ])('reports nothing for %s', (_, json) => {
    expect(fieldsOf(json)).toEqual([]);
  });

  it('reports nothing for any JSON value JSON.stringify writes, however it is indented', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        expect(fieldsOf(JSON.stringify(value, null, indent))).toEqual([]);
      }),
    );
  });

  it('finds a key added again to any object, nested in any array', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }),
        fc.nat(),
        fc.nat({ max: 3 }),
        (object, pick, depth) => {
          const keys = Object.keys(object);
          const key = keys[pick % keys.length] ?? '';
          const doubled = `${JSON.stringify(object).slice(0, -1)},${JSON.stringify(key)}:null}`;
          const json = `${'[0,'.repeat(depth)}${doubled}${']'.repeat(depth)}`;
          const parent = '[1]'.repeat(depth);
          const plain = /^[A-Za-z_$][\w$]*$/.test(key);
          const field = plain
            ? `${parent}${parent === '' ? '' : '.'}${key}`
            : `${parent}[${JSON.stringify(key)}]`;
          expect(fieldsOf(json)).toEqual([field]);
        },
      ),
    );
  });
});
