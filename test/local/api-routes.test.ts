import { describe, expect, it } from 'vitest';
import { matchRoute } from '../../infra/local/api-routes.ts';
import type { RouteSpec } from '../../infra/topology.ts';
import { topology } from '../../infra/topology.ts';

describe('matchRoute', () => {
  it('matches a literal path to its route', () => {
    const match = matchRoute(topology.routes, 'POST', '/orders');
    expect(match).toMatchObject({ kind: 'matched', route: { function: 'createOrder' }, pathParameters: {} });
  });

  it('captures and URL-decodes path parameters', () => {
    expect(matchRoute(topology.routes, 'GET', '/orders/01J%2Fx')).toMatchObject({
      kind: 'matched',
      route: { path: '/orders/{orderId}', function: 'getOrder' },
      pathParameters: { orderId: '01J/x' },
    });
  });

  it('picks the route by method among routes with the same path', () => {
    expect(matchRoute(topology.routes, 'put', '/inventory/SKU-1')).toMatchObject({
      route: { function: 'putStock' },
    });
    expect(matchRoute(topology.routes, 'GET', '/inventory/SKU-1')).toMatchObject({
      route: { function: 'getStock' },
    });
  });

  it('ignores a trailing slash', () => {
    expect(matchRoute(topology.routes, 'GET', '/orders/abc/')).toMatchObject({ kind: 'matched' });
  });

  it('reports a known path with another method as not allowed, listing the allowed ones', () => {
    expect(matchRoute(topology.routes, 'DELETE', '/inventory/SKU-1')).toEqual({
      kind: 'method-not-allowed',
      allowed: ['PUT', 'GET'],
    });
  });

  it('finds nothing for unknown or longer paths and for broken percent-encoding', () => {
    expect(matchRoute(topology.routes, 'GET', '/nope')).toEqual({ kind: 'not-found' });
    expect(matchRoute(topology.routes, 'GET', '/orders/a/b')).toEqual({ kind: 'not-found' });
    expect(matchRoute(topology.routes, 'GET', '/orders/%E0%A4%A')).toEqual({ kind: 'not-found' });
  });

  it('lets a greedy parameter take the rest of the path', () => {
    const routes: RouteSpec[] = [{ method: 'GET', path: '/files/{path+}', function: 'getStock' }];
    expect(matchRoute(routes, 'GET', '/files/a/b/c')).toMatchObject({ pathParameters: { path: 'a/b/c' } });
    expect(matchRoute(routes, 'GET', '/files')).toEqual({ kind: 'not-found' });
  });
});
