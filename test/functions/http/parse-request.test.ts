import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { headerValue, parseJsonBody, parseValue } from '../../../functions/http/parse-request.ts';
import { apiEvent } from '../../support/factories.ts';
import { base64Body, jsonEvent } from './json-event.ts';

const schema = z.object({ name: z.string(), tags: z.array(z.string()) }).strict();

interface ErrorBody {
  error: string;
  details: { field: string; problem: string }[];
}

function errorOf(result: ReturnType<typeof parseJsonBody>, statusCode = 400): ErrorBody {
  if (result.ok) throw new Error(`expected a ${statusCode}`);
  expect(result.response.statusCode).toBe(statusCode);
  expect(result.response.headers).toMatchObject({ 'content-type': 'application/json' });
  return JSON.parse(result.response.body) as ErrorBody;
}

describe('parseJsonBody', () => {
  it('returns the parsed value of a valid body', () => {
    expect(parseJsonBody(jsonEvent({ body: { name: 'a', tags: [] } }), schema, 1_000)).toEqual({
      ok: true,
      value: { name: 'a', tags: [] },
    });
  });

  it('decodes a base64 body', () => {
    const body = base64Body(JSON.stringify({ name: 'é 😀', tags: [] }));

    expect(parseJsonBody(jsonEvent({ body, isBase64Encoded: true }), schema, 1_000)).toMatchObject({
      ok: true,
      value: { name: 'é 😀' },
    });
  });

  it('measures the limit in UTF-8 bytes, not characters', () => {
    const body = JSON.stringify({ name: 'é'.repeat(30), tags: [] });

    expect(errorOf(parseJsonBody(jsonEvent({ body }), schema, body.length)).error).toBe(
      'request body too large',
    );
  });

  it('measures the limit of a base64 body in decoded bytes', () => {
    const text = JSON.stringify({ name: 'a'.repeat(20), tags: [] });
    const event = jsonEvent({ body: base64Body(text), isBase64Encoded: true });

    expect(parseJsonBody(event, schema, text.length).ok).toBe(true);
    expect(errorOf(parseJsonBody(event, schema, text.length - 1)).error).toBe('request body too large');
  });

  it('names nested fields with their path', () => {
    const details = errorOf(
      parseJsonBody(jsonEvent({ body: { name: 'a', tags: ['x', 2] } }), schema, 1_000),
    ).details;

    expect(details).toEqual([{ field: 'tags[1]', problem: expect.any(String) }]);
  });

  it('answers 400 for a missing body', () => {
    expect(errorOf(parseJsonBody(jsonEvent(), schema, 1_000)).error).toBe('request body is required');
  });

  it('answers 400 for a JSON value of the wrong type', () => {
    expect(errorOf(parseJsonBody(jsonEvent({ body: '[1]' }), schema, 1_000)).details[0]?.field).toBe(
      '(body)',
    );
  });

  describe('content type', () => {
    it.each([
      ['no content-type header', {}, 'is missing'],
      ['text/plain', { 'content-type': 'text/plain' }, 'is "text/plain"'],
      [
        'form data',
        { 'Content-Type': 'application/x-www-form-urlencoded' },
        'is "application/x-www-form-urlencoded"',
      ],
      [
        'a latin-1 charset',
        { 'content-type': 'application/json; charset=ISO-8859-1' },
        'charset "ISO-8859-1"',
      ],
    ])('answers 415 for %s, naming the header', (_, headers, problem) => {
      const event = apiEvent({ body: { name: 'a', tags: [] }, headers });

      expect(errorOf(parseJsonBody(event, schema, 1_000), 415)).toEqual({
        error: 'unsupported media type',
        details: [{ field: 'content-type', problem: expect.stringContaining(problem) }],
      });
    });

    it.each(['Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8'])(
      'accepts %j',
      (contentType) => {
        const event = apiEvent({ body: { name: 'a', tags: [] }, headers: { 'Content-Type': contentType } });

        expect(parseJsonBody(event, schema, 1_000).ok).toBe(true);
      },
    );

    it('answers 415 before reading the body', () => {
      const event = apiEvent({ body: '{"not json', headers: { 'content-type': 'text/plain' } });

      expect(errorOf(parseJsonBody(event, schema, 1), 415).error).toBe('unsupported media type');
    });
  });

  describe('encoding', () => {
    it.each([
      ['a byte that never occurs in UTF-8', [0xff]],
      ['a Latin-1 é', [0xe9]],
      ['an overlong encoding of /', [0xc0, 0xaf]],
      ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
      ['a truncated sequence', [0xe2, 0x82]],
      ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ])('answers 400 for a base64 body with %s inside a string', (_, bytes) => {
      const body = base64Body([...Buffer.from('{"name":"'), ...bytes, ...Buffer.from('","tags":[]}')]);

      expect(errorOf(parseJsonBody(jsonEvent({ body, isBase64Encoded: true }), schema, 1_000))).toEqual({
        error: 'request body is not valid UTF-8',
        details: [{ field: '(body)', problem: expect.stringContaining('UTF-8') }],
      });
    });

    it('answers 400 for a string body holding a lone surrogate', () => {
      const body = `{"name":"a\ud800b","tags":[]}`;

      expect(errorOf(parseJsonBody(jsonEvent({ body }), schema, 1_000)).error).toBe(
        'request body is not valid UTF-8',
      );
    });

    it('refuses a byte-order mark as JSON.parse does, whether the body is base64 or not', () => {
      const text = `\ufeff${JSON.stringify({ name: 'a', tags: [] })}`;

      for (const event of [
        jsonEvent({ body: text }),
        jsonEvent({ body: base64Body(text), isBase64Encoded: true }),
      ]) {
        expect(errorOf(parseJsonBody(event, schema, 1_000)).error).toBe('request body is not valid JSON');
      }
    });

    it.each([
      ['a value', '{"name":"\\ud800","tags":[]}', 'name'],
      ['an array element', '{"name":"a","tags":["ok","\\udc00"]}', 'tags[1]'],
      ['a key', '{"name":"a","tags":[],"\\ud800":1}', '["\\ud800"]'],
    ])('answers 400 naming the field for a lone surrogate escape in %s', (_, body, field) => {
      expect(errorOf(parseJsonBody(jsonEvent({ body }), schema, 1_000))).toEqual({
        error: 'request body is not valid Unicode',
        details: [{ field, problem: expect.stringContaining('lone surrogate') }],
      });
    });

    it('accepts an escaped surrogate pair', () => {
      const result = parseJsonBody(jsonEvent({ body: '{"name":"\\ud83d\\ude00","tags":[]}' }), schema, 1_000);

      expect(result).toEqual({ ok: true, value: { name: '😀', tags: [] } });
    });
  });

  describe('duplicate keys', () => {
    it('answers 400 naming a repeated key, though the last value alone would be valid', () => {
      const body = '{"name":"a","name":"b","tags":[]}';

      expect(errorOf(parseJsonBody(jsonEvent({ body }), schema, 1_000))).toEqual({
        error: 'request body has duplicate keys',
        details: [{ field: 'name', problem: expect.stringContaining('"name" appears more than once') }],
      });
    });

    it('names a nested repeated key by its path', () => {
      const nested = z.object({ items: z.array(z.object({ sku: z.string(), quantity: z.number() })) });
      const body = '{"items":[{"sku":"A","quantity":1},{"sku":"B","quantity":5000,"quantity":1}]}';

      expect(errorOf(parseJsonBody(jsonEvent({ body }), nested, 1_000)).details).toEqual([
        { field: 'items[1].quantity', problem: expect.stringContaining('"quantity"') },
      ]);
    });
  });
});

describe('parseValue', () => {
  it('names a bad scalar after the given field, e.g. a path parameter', () => {
    const result = parseValue('bad id', z.string().regex(/^\w+$/, 'word characters only'), {
      error: 'invalid id',
      field: 'orderId',
    });

    expect(errorOf(result).details).toEqual([{ field: 'orderId', problem: 'word characters only' }]);
  });
});

describe('headerValue', () => {
  it('finds a header whatever its casing', () => {
    expect(headerValue(apiEvent({ headers: { TRACEPARENT: 'tp' } }), 'traceparent')).toBe('tp');
  });

  it('is undefined for an absent header', () => {
    expect(headerValue(apiEvent({ headers: { other: 'x' } }), 'traceparent')).toBeUndefined();
  });
});
