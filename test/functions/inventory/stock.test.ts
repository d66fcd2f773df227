import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { getStock, putStock, type StockDeps } from '../../../functions/inventory/stock.ts';
import { apiEvent, FIXED_NOW } from '../../support/factories.ts';
import { base64Body, jsonEvent } from '../http/json-event.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const deps: StockDeps = {
  client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
  inventoryTable: 'inventory',
  clock: () => FIXED_NOW,
};

function putEvent(sku: string, body: unknown, headers: Record<string, string> = {}) {
  return jsonEvent({ method: 'PUT', path: `/inventory/${sku}`, pathParameters: { sku }, body, headers });
}

function getEvent(sku: string) {
  return apiEvent({ method: 'GET', path: `/inventory/${sku}`, pathParameters: { sku } });
}

beforeEach(() => {
  ddb.reset();
  ddb.on(PutCommand).resolves({});
});

describe('putStock', () => {
  it('sets the available stock and answers 200 { sku, available }', async () => {
    const response = await putStock(putEvent('SKU-1', { available: 5 }), deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ sku: 'SKU-1', available: 5 });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'inventory',
      Item: { sku: 'SKU-1', available: 5, updatedAt: FIXED_NOW.toISOString() },
    });
  });

  it('accepts zero stock', async () => {
    const response = await putStock(putEvent('SKU-1', { available: 0 }), deps);

    expect(response.statusCode).toBe(200);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item?.available).toBe(0);
  });

  it.each([
    ['a negative amount', { available: -1 }, 'available'],
    ['a fractional amount', { available: 1.5 }, 'available'],
    ['an amount given as a string', { available: '5' }, 'available'],
    ['a missing amount', {}, 'available'],
    ['an unknown field', { available: 5, reserved: 1 }, '(body)'],
    ['malformed JSON', '{"available":', '(body)'],
    ['an empty body', '', '(body)'],
    ['an oversized body', JSON.stringify({ available: 1, pad: 'x'.repeat(2_000) }), '(body)'],
  ])('answers 400 for %s naming the field, and writes nothing', async (_, body, field) => {
    const response = await putStock(putEvent('SKU-1', body), deps);

    expect(response.statusCode).toBe(400);
    const parsed = JSON.parse(response.body) as { error: string; details: { field: string }[] };
    expect(parsed.details.map((detail) => detail.field)).toContain(field);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it.each([
    ['no content type', {}],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['a charset other than utf-8', { 'content-type': 'application/json; charset=utf-16' }],
  ])('answers 415 for a body sent with %s, and writes nothing', async (_, headers) => {
    const event = apiEvent({
      method: 'PUT',
      pathParameters: { sku: 'SKU-1' },
      body: { available: 5 },
      headers,
    });

    const response = await putStock(event, deps);

    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body)).toEqual({
      error: 'unsupported media type',
      details: [{ field: 'content-type', problem: expect.any(String) }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    {
      name: 'a repeated key',
      body: '{"available":5000,"available":1}',
      error: 'request body has duplicate keys',
      field: 'available',
    },
    {
      name: 'a lone surrogate escape in a key',
      body: '{"available":1,"\\ud800":1}',
      error: 'request body is not valid Unicode',
      field: '["\\ud800"]',
    },
  ])('answers 400 for $name naming it, and writes nothing', async ({ body, error, field }) => {
    const response = await putStock(putEvent('SKU-1', body), deps);

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ error, details: [{ field, problem: expect.any(String) }] });
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for a base64 body that is not valid UTF-8, and writes nothing', async () => {
    const event = jsonEvent({
      method: 'PUT',
      pathParameters: { sku: 'SKU-1' },
      body: base64Body([...Buffer.from('{"available":5,"note":"'), 0xff, ...Buffer.from('"}')]),
      isBase64Encoded: true,
    });

    const response = await putStock(event, deps);

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body).error).toBe('request body is not valid UTF-8');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('reads a base64 body', async () => {
    const event = jsonEvent({
      method: 'PUT',
      pathParameters: { sku: 'SKU-1' },
      body: base64Body('{"available":3}'),
      isBase64Encoded: true,
    });

    expect((await putStock(event, deps)).statusCode).toBe(200);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item?.available).toBe(3);
  });

  it('answers 400 naming the sku for a bad sku, and writes nothing', async () => {
    const response = await putStock(putEvent('bad sku!', { available: 5 }), deps);

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: 'invalid sku',
      details: [{ field: 'sku', problem: expect.stringContaining('1-64 characters') }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });
});

describe('getStock', () => {
  it('answers 200 { sku, available } from a consistent read', async () => {
    ddb.on(GetCommand).resolves({ Item: { sku: 'SKU-1', available: 7, updatedAt: FIXED_NOW.toISOString() } });

    const response = await getStock(getEvent('SKU-1'), deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ sku: 'SKU-1', available: 7 });
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'inventory',
      Key: { sku: 'SKU-1' },
      ConsistentRead: true,
    });
  });

  it('answers 404 for an unknown sku', async () => {
    ddb.on(GetCommand).resolves({});

    const response = await getStock(getEvent('SKU-404'), deps);

    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toEqual({
      error: 'sku not found',
      details: [{ field: 'sku', problem: expect.stringContaining('SKU-404') }],
    });
  });

  it.each([
    ['bad characters', 'SKU/1'],
    ['65 characters', 'S'.repeat(65)],
  ])('answers 400 naming the sku for a sku with %s, and reads nothing', async (_, sku) => {
    const response = await getStock(getEvent(sku), deps);

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body).details).toEqual([{ field: 'sku', problem: expect.any(String) }]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 when the path has no sku', async () => {
    const response = await getStock(apiEvent({ method: 'GET', path: '/inventory' }), deps);

    expect(response.statusCode).toBe(400);
    expect(ddb.calls()).toHaveLength(0);
  });
});
