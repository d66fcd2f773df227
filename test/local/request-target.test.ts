import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { requestTarget } from '../../infra/dev/local/api/api-gateway-event.ts';
import { type HttpApi, startHttpApi } from '../../infra/dev/local/api/http-api.ts';
import type { RouteDefinition } from '../../infra/dev/local/template/read-routes.ts';

describe('requestTarget', () => {
  it('splits an origin-form target as sent', () => {
    expect(requestTarget('/orders/o-1?dry=1&a=%zz')).toEqual({ path: '/orders/o-1', query: 'dry=1&a=%zz' });
    expect(requestTarget('/orders')).toEqual({ path: '/orders', query: '' });
  });

  it('keeps a path that starts with // as a path instead of reading a host from it', () => {
    expect(requestTarget('//[/orders')).toEqual({ path: '//[/orders', query: '' });
    expect(requestTarget('//inventory/SKU-1?x=1')).toEqual({ path: '//inventory/SKU-1', query: 'x=1' });
  });

  it('reads the path of an absolute-form target', () => {
    expect(requestTarget('http://127.0.0.1:3000/orders?x=1')).toEqual({ path: '/orders', query: 'x=1' });
  });

  it.each(['*', 'http://[::1/orders', 'ftp://host/orders', 'orders', ''])('refuses %j', (target) => {
    expect(requestTarget(target)).toBeUndefined();
  });
});

describe('startHttpApi, request targets found by the fuzz suite', () => {
  const routes: RouteDefinition[] = [{ method: 'GET', path: '/orders/{orderId}', functionName: 'GetOrder' }];
  let api: HttpApi | undefined;

  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  /** The status line of the answer to raw request bytes. */
  function statusLine(port: number, request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1').split('\r\n')[0] ?? ''));
      socket.end(request);
    });
  }

  it.each([
    ['GET //[/orders HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 'HTTP/1.1 404 Not Found'],
    [
      'GET http://[::1/orders HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 400 Bad Request',
    ],
  ])('answers %j with a 4xx, not a 502', async (request, expected) => {
    let invoked = false;
    api = await startHttpApi({
      routes,
      port: 0,
      invoke: async () => {
        invoked = true;
        return { ok: true, requestId: 'r', result: { statusCode: 200, body: '{}' } };
      },
    });

    expect(await statusLine(api.port, request)).toBe(expected);
    expect(invoked).toBe(false);
  });

  it('routes a path that starts with // by its segments, not as a host name', async () => {
    const seen: unknown[] = [];
    api = await startHttpApi({
      routes,
      port: 0,
      invoke: async (_name, event) => {
        seen.push((event as { pathParameters: unknown }).pathParameters);
        return { ok: true, requestId: 'r', result: { statusCode: 200, body: '{}' } };
      },
    });

    const answer = await statusLine(
      api.port,
      'GET //orders/o-1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );

    expect(answer).toBe('HTTP/1.1 200 OK');
    expect(seen).toEqual([{ orderId: 'o-1' }]);
  });
});
