import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { type HttpApi, MAX_BODY_BYTES, startHttpApi } from '../../infra/dev/local/api/http-api.ts';
import type { Invocation } from '../../infra/dev/local/host/local-function.ts';
import type { RouteDefinition } from '../../infra/dev/local/template/read-routes.ts';

const routes: RouteDefinition[] = [
  { method: 'POST', path: '/orders', functionName: 'CreateOrder' },
  { method: 'GET', path: '/orders/{orderId}', functionName: 'GetOrder' },
  { method: 'GET', path: '/inventory/{sku}', functionName: 'GetStock' },
];

let api: HttpApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Starts the API on a free port with `invoke` standing in for the functions. */
async function serve(
  invoke: (key: string, event: APIGatewayProxyEvent) => Promise<Invocation>,
): Promise<HttpApi> {
  api = await startHttpApi({
    routes,
    port: 0,
    invoke: (key, event) => invoke(key, event as APIGatewayProxyEvent),
  });
  return api;
}

const ok = (result: unknown): Invocation => ({ ok: true, requestId: 'r', result });

describe('startHttpApi', () => {
  it('invokes the route’s function with a proxy event and returns its result', async () => {
    const calls: [string, APIGatewayProxyEvent][] = [];
    const { url } = await serve(async (key, event) => {
      calls.push([key, event]);
      return ok({
        statusCode: 201,
        headers: { 'content-type': 'application/json', 'x-id': '7' },
        body: '{"id":7}',
      });
    });
    const response = await fetch(`${url}/orders?dry=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"customerId":"c"}',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-id')).toBe('7');
    expect(await response.json()).toEqual({ id: 7 });
    const [key, event] = calls[0] ?? [];
    expect(key).toBe('CreateOrder');
    expect(event).toMatchObject({
      resource: '/orders',
      httpMethod: 'POST',
      path: '/orders',
      body: '{"customerId":"c"}',
      queryStringParameters: { dry: '1' },
      requestContext: { stage: 'local', identity: { sourceIp: '127.0.0.1' } },
    });
  });

  it('passes path parameters of templated routes', async () => {
    let seen: APIGatewayProxyEvent | undefined;
    const { url } = await serve(async (_key, event) => {
      seen = event;
      return ok({ statusCode: 200, body: '{}' });
    });
    await fetch(`${url}/inventory/SKU-APPLE`);
    expect(seen?.pathParameters).toEqual({ sku: 'SKU-APPLE' });
    expect(seen?.resource).toBe('/inventory/{sku}');
  });

  it('answers 404 with a JSON error for an unknown route and 405 for a wrong method', async () => {
    const { url } = await serve(async () => ok({ statusCode: 200 }));
    const missing = await fetch(`${url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'no route for GET /nowhere' });
    const wrong = await fetch(`${url}/orders`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  it('answers 502 like API Gateway when the handler throws', async () => {
    const { url } = await serve(async () => ({ ok: false, requestId: 'r', error: new Error('boom') }));
    const response = await fetch(`${url}/orders/o-1`);
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({ message: 'Internal server error' });
  });

  it('refuses a body over 10 MB with 413 without invoking the function', async () => {
    let invoked = false;
    const { url } = await serve(async () => {
      invoked = true;
      return ok({ statusCode: 200 });
    });
    const response = await fetch(`${url}/orders`, {
      method: 'POST',
      body: Buffer.alloc(MAX_BODY_BYTES + 1, 'a'),
    });
    expect(response.status).toBe(413);
    expect(invoked).toBe(false);
  });

  it('reports a taken port clearly', async () => {
    const first = await serve(async () => ok({ statusCode: 200 }));
    await expect(startHttpApi({ routes: [], port: first.port, invoke: async () => ok({}) })).rejects.toThrow(
      /cannot listen on 127\.0\.0\.1:\d+/,
    );
  });
});

describe('startHttpApi with the routes of several stacks', () => {
  it('names in each event the account of the stack its route belongs to', async () => {
    const accounts: Record<string, string | undefined> = {};
    api = await startHttpApi({
      routes: [
        {
          method: 'GET',
          path: '/orders/{orderId}',
          functionName: 'Orders/GetOrder',
          accountId: '111111111111',
        },
        {
          method: 'GET',
          path: '/inventory/{sku}',
          functionName: 'Inventory/GetStock',
          accountId: '222222222222',
        },
        { method: 'GET', path: '/health', functionName: 'Health' },
      ],
      port: 0,
      accountId: '333333333333',
      invoke: async (key, event) => {
        accounts[key] = (event as APIGatewayProxyEvent).requestContext.accountId;
        return ok({ statusCode: 204, body: '' });
      },
    });
    for (const path of ['/orders/o-1', '/inventory/SKU-1', '/health']) {
      expect((await fetch(`${api.url}${path}`)).status).toBe(204);
    }
    expect(accounts).toEqual({
      'Orders/GetOrder': '111111111111',
      'Inventory/GetStock': '222222222222',
      Health: '333333333333',
    });
  });
});
