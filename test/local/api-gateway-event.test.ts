import { describe, expect, it } from 'vitest';
import {
  type ApiEventContext,
  type ApiRequest,
  fromProxyResult,
  requestTime,
  toProxyEvent,
} from '../../infra/dev/local/api/api-gateway-event.ts';

function apiRequest(overrides: Partial<ApiRequest> = {}): ApiRequest {
  return {
    method: 'GET',
    path: '/orders/o-1',
    query: '',
    rawHeaders: ['Host', 'localhost:3000', 'User-Agent', 'curl/8'],
    body: Buffer.alloc(0),
    sourceIp: '127.0.0.1',
    ...overrides,
  };
}

const context: ApiEventContext = {
  resource: '/orders/{orderId}',
  pathParameters: { orderId: 'o-1' },
  requestId: 'req-1',
  stage: 'local',
  accountId: '123456789012',
  apiId: 'local',
  domainName: 'localhost:3000',
  now: new Date('2024-05-01T12:34:56.000Z'),
};

describe('toProxyEvent', () => {
  it('builds a REST API proxy event with resource, path parameters and request context', () => {
    const event = toProxyEvent(apiRequest(), context);
    expect(event).toMatchObject({
      resource: '/orders/{orderId}',
      path: '/orders/o-1',
      httpMethod: 'GET',
      pathParameters: { orderId: 'o-1' },
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: {
        requestId: 'req-1',
        stage: 'local',
        path: '/local/orders/o-1',
        resourcePath: '/orders/{orderId}',
        httpMethod: 'GET',
        requestTimeEpoch: context.now.getTime(),
        identity: { sourceIp: '127.0.0.1', userAgent: 'curl/8' },
      },
    });
  });

  it('keeps header case, all values of repeated headers, and the last one in the single-value map', () => {
    const event = toProxyEvent(
      apiRequest({ rawHeaders: ['X-Trace', 'a', 'X-Trace', 'b', 'Accept', '*/*'] }),
      context,
    );
    expect(event.multiValueHeaders).toEqual({ 'X-Trace': ['a', 'b'], Accept: ['*/*'] });
    expect(event.headers).toEqual({ 'X-Trace': 'b', Accept: '*/*' });
  });

  it('keeps query parameters and headers named __proto__, constructor or toString as plain names', () => {
    const event = toProxyEvent(
      apiRequest({
        query: '__proto__=1&constructor=2&toString=3&toString=4',
        rawHeaders: ['__proto__', 'a', 'constructor', 'b', 'toString', 'c'],
      }),
      context,
    );

    expect(Object.entries(event.queryStringParameters ?? {})).toEqual([
      ['__proto__', '1'],
      ['constructor', '2'],
      ['toString', '4'],
    ]);
    expect(event.multiValueQueryStringParameters?.toString).toEqual(['3', '4']);
    expect(Object.entries(event.headers)).toEqual([
      ['__proto__', 'a'],
      ['constructor', 'b'],
      ['toString', 'c'],
    ]);
  });

  it('hands a body that is not valid UTF-8 over base64-encoded, so the handler can refuse it', () => {
    const bytes = Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]);

    const event = toProxyEvent(apiRequest({ method: 'POST', body: bytes }), context);

    expect(event).toMatchObject({ isBase64Encoded: true, body: bytes.toString('base64') });
  });

  it('decodes the query string into single and multi-value maps', () => {
    const event = toProxyEvent(apiRequest({ query: 'a=1&a=2&b=x%20y' }), context);
    expect(event.queryStringParameters).toEqual({ a: '2', b: 'x y' });
    expect(event.multiValueQueryStringParameters).toEqual({ a: ['1', '2'], b: ['x y'] });
  });

  it('passes the body as UTF-8 text and null path parameters for a literal route', () => {
    const event = toProxyEvent(
      apiRequest({ method: 'post', path: '/orders', body: Buffer.from('{"é":1}') }),
      { ...context, resource: '/orders', pathParameters: {} },
    );
    expect(event.body).toBe('{"é":1}');
    expect(event.httpMethod).toBe('POST');
    expect(event.pathParameters).toBeNull();
  });
});

describe('fromProxyResult', () => {
  it('maps status, headers and body', () => {
    const response = fromProxyResult({
      statusCode: 201,
      headers: { 'content-type': 'application/json' },
      multiValueHeaders: { 'set-cookie': ['a=1', 'b=2'] },
      body: '{"ok":true}',
    });
    expect(response.statusCode).toBe(201);
    expect(response.headers).toEqual({ 'content-type': ['application/json'], 'set-cookie': ['a=1', 'b=2'] });
    expect(response.body.toString()).toBe('{"ok":true}');
  });

  it('decodes a base64 body', () => {
    expect(fromProxyResult({ statusCode: 200, body: 'aGk=', isBase64Encoded: true }).body.toString()).toBe(
      'hi',
    );
  });

  it('answers 502 like API Gateway for a malformed result', () => {
    for (const result of [
      undefined,
      'text',
      { body: 'x' },
      { statusCode: 42 },
      { statusCode: 200, body: {} },
    ]) {
      const response = fromProxyResult(result);
      expect(response.statusCode).toBe(502);
      expect(JSON.parse(response.body.toString())).toEqual({ message: 'Internal server error' });
    }
  });
});

describe('requestTime', () => {
  it('formats like API Gateway', () => {
    expect(requestTime(new Date('2015-04-09T02:04:05.000Z'))).toBe('09/Apr/2015:02:04:05 +0000');
  });
});
