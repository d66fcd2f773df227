import { describe, expect, it } from 'vitest';
import { matchRoute } from '../../infra/dev/local/api/api-routes.ts';
import type { RouteDefinition } from '../../infra/dev/local/template/read-routes.ts';

const routes: RouteDefinition[] = [
  { method: 'POST', path: '/orders', functionName: 'CreateOrder' },
  { method: 'GET', path: '/orders/{orderId}', functionName: 'GetOrder' },
  { method: 'PUT', path: '/inventory/{sku}', functionName: 'PutStock' },
  { method: 'GET', path: '/inventory/{sku}', functionName: 'GetStock' },
];

describe('matchRoute', () => {
  it('matches a literal path to its route', () => {
    const match = matchRoute(routes, 'POST', '/orders');
    expect(match).toMatchObject({
      kind: 'matched',
      route: { functionName: 'CreateOrder' },
      pathParameters: {},
    });
  });

  it('captures and URL-decodes path parameters', () => {
    expect(matchRoute(routes, 'GET', '/orders/01J%2Fx')).toMatchObject({
      kind: 'matched',
      route: { path: '/orders/{orderId}', functionName: 'GetOrder' },
      pathParameters: { orderId: '01J/x' },
    });
  });

  it('picks the route by method among routes with the same path', () => {
    expect(matchRoute(routes, 'put', '/inventory/SKU-1')).toMatchObject({
      route: { functionName: 'PutStock' },
    });
    expect(matchRoute(routes, 'GET', '/inventory/SKU-1')).toMatchObject({
      route: { functionName: 'GetStock' },
    });
  });

  it('ignores a trailing slash', () => {
    expect(matchRoute(routes, 'GET', '/orders/abc/')).toMatchObject({ kind: 'matched' });
  });

  it('reports a known path with another method as not allowed, listing the allowed ones', () => {
    expect(matchRoute(routes, 'DELETE', '/inventory/SKU-1')).toEqual({
      kind: 'method-not-allowed',
      allowed: ['PUT', 'GET'],
    });
  });

  it('finds nothing for unknown or longer paths and for broken percent-encoding', () => {
    expect(matchRoute(routes, 'GET', '/nope')).toEqual({ kind: 'not-found' });
    expect(matchRoute(routes, 'GET', '/orders/a/b')).toEqual({ kind: 'not-found' });
    expect(matchRoute(routes, 'GET', '/orders/%E0%A4%A')).toEqual({ kind: 'not-found' });
  });

  it('lets a greedy parameter take the rest of the path', () => {
    const files: RouteDefinition[] = [{ method: 'GET', path: '/files/{path+}', functionName: 'Files' }];
    expect(matchRoute(files, 'GET', '/files/a/b/c')).toMatchObject({ pathParameters: { path: 'a/b/c' } });
    expect(matchRoute(files, 'GET', '/files')).toEqual({ kind: 'not-found' });
  });

  it('serves any method from an ANY method, unless the resource has a method of its own', () => {
    const mixed: RouteDefinition[] = [
      { method: 'ANY', path: '/items/{id}', functionName: 'Anything' },
      { method: 'GET', path: '/items/{id}', functionName: 'Reader' },
    ];
    expect(matchRoute(mixed, 'DELETE', '/items/1')).toMatchObject({ route: { functionName: 'Anything' } });
    expect(matchRoute(mixed, 'GET', '/items/1')).toMatchObject({ route: { functionName: 'Reader' } });
  });

  it('prefers a literal segment over a parameter, and a parameter over a greedy one', () => {
    const nested: RouteDefinition[] = [
      { method: 'GET', path: '/{proxy+}', functionName: 'Fallback' },
      { method: 'GET', path: '/orders/{orderId}', functionName: 'GetOrder' },
      { method: 'GET', path: '/orders/latest', functionName: 'Latest' },
    ];
    expect(matchRoute(nested, 'GET', '/orders/latest')).toMatchObject({ route: { functionName: 'Latest' } });
    expect(matchRoute(nested, 'GET', '/orders/42')).toMatchObject({ route: { functionName: 'GetOrder' } });
    expect(matchRoute(nested, 'GET', '/elsewhere/x')).toMatchObject({ route: { functionName: 'Fallback' } });
  });
});
