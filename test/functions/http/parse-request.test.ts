import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { headerValue, parseJsonBody, parseValue } from '../../../functions/http/parse-request.ts';
import { apiEvent } from '../../support/factories.ts';

const schema = z.object({ name: z.string(), tags: z.array(z.string()) }).strict();

function errorBodyOf(result: ReturnType<typeof parseJsonBody>) {
  if (result.ok) throw new Error('expected a 400');
  expect(result.response.statusCode).toBe(400);
  return JSON.parse(result.response.body) as { error: string; details: { field: string; problem: string }[] };
}

describe('parseJsonBody', () => {
  it('returns the parsed value of a valid body', () => {
    expect(parseJsonBody(apiEvent({ body: { name: 'a', tags: [] } }), schema, 1_000)).toEqual({
      ok: true,
      value: { name: 'a', tags: [] },
    });
  });

  it('decodes a base64 body', () => {
    const body = Buffer.from(JSON.stringify({ name: 'é', tags: [] })).toString('base64');

    expect(parseJsonBody(apiEvent({ body, isBase64Encoded: true }), schema, 1_000)).toMatchObject({
      ok: true,
      value: { name: 'é' },
    });
  });

  it('measures the limit in UTF-8 bytes, not characters', () => {
    const body = JSON.stringify({ name: 'é'.repeat(30), tags: [] });

    expect(errorBodyOf(parseJsonBody(apiEvent({ body }), schema, body.length)).error).toBe(
      'request body too large',
    );
  });

  it('names nested fields with their path', () => {
    const details = errorBodyOf(
      parseJsonBody(apiEvent({ body: { name: 'a', tags: ['x', 2] } }), schema, 1_000),
    ).details;

    expect(details).toEqual([{ field: 'tags[1]', problem: expect.any(String) }]);
  });

  it('answers 400 for a missing body', () => {
    expect(errorBodyOf(parseJsonBody(apiEvent(), schema, 1_000)).error).toBe('request body is required');
  });

  it('answers 400 for a JSON value of the wrong type', () => {
    expect(errorBodyOf(parseJsonBody(apiEvent({ body: '[1]' }), schema, 1_000)).details[0]?.field).toBe(
      '(body)',
    );
  });
});

describe('parseValue', () => {
  it('names a bad scalar after the given field, e.g. a path parameter', () => {
    const result = parseValue(
      'bad id',
      z.string().regex(/^\w+$/, 'word characters only'),
      'invalid id',
      'orderId',
    );

    expect(errorBodyOf(result).details).toEqual([{ field: 'orderId', problem: 'word characters only' }]);
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
