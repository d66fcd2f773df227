import { describe, expect, it } from 'vitest';
import { illFormedStrings } from '../../../functions/http/ill-formed-strings.ts';

describe('illFormedStrings', () => {
  it.each([
    ['a lone high surrogate', '{"customerId":"\\ud800"}', 'customerId'],
    ['a lone low surrogate', '{"customerId":"a\\udc00b"}', 'customerId'],
    ['two high surrogates', '{"customerId":"\\ud800\\ud800"}', 'customerId'],
    ['a reversed pair', '{"customerId":"\\udc00\\ud800"}', 'customerId'],
    ['a string in an array', '{"items":[{"sku":"ok"},{"sku":"\\udfff"}]}', 'items[1].sku'],
    ['the body itself', '"\\ud800"', '(body)'],
  ])('names the field holding %s', (_, json, field) => {
    expect(illFormedStrings(JSON.parse(json))).toEqual([
      { field, problem: expect.stringContaining('lone surrogate') },
    ]);
  });

  it('names a key with a lone surrogate by the path it would have', () => {
    expect(illFormedStrings(JSON.parse('{"items":[{"\\ud800":1}]}'))).toEqual([
      { field: 'items[0]["\\ud800"]', problem: expect.stringMatching(/^the key .*lone surrogate/) },
    ]);
  });

  it('names every bad string at once', () => {
    const body = JSON.parse('{"a":"\\ud800","b":["\\udc00"],"\\ud801":"x"}');

    expect(
      illFormedStrings(body)
        .map((problem) => problem.field)
        .sort(),
    ).toEqual(['["\\ud801"]', 'a', 'b[0]']);
  });

  it('accepts surrogate pairs, other escapes and non-string values', () => {
    const body = JSON.parse(
      '{"emoji":"\\ud83d\\ude00 😀","nul":"\\u0000","ffff":"\\uffff","n":1,"z":null,"t":true}',
    );

    expect(illFormedStrings(body)).toEqual([]);
  });

  it('walks a deeply nested body without overflowing the stack', () => {
    const depth = 20_000;
    const body = JSON.parse(`${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`);

    expect(illFormedStrings(body)).toEqual([{ field: '[0]'.repeat(depth), problem: expect.any(String) }]);
  });
});
