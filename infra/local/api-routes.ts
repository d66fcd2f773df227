/** Matches request paths against the topology's API Gateway path templates (`/orders/{orderId}`). Pure. */
import type { RouteSpec } from '../topology.ts';

/** The result of matching a request against the routes. */
export type RouteMatch =
  | {
      readonly kind: 'matched';
      readonly route: RouteSpec;
      readonly pathParameters: Readonly<Record<string, string>>;
    }
  /** A route has this path but not this method. */
  | { readonly kind: 'method-not-allowed'; readonly allowed: readonly string[] }
  | { readonly kind: 'not-found' };

/**
 * The route for `method` and `path` (no query string), with its path parameters URL-decoded.
 * `{name+}` matches the rest of the path, as API Gateway's greedy parameter does.
 * @example
 * matchRoute(topology.routes, 'GET', '/orders/01J')
 * // → { kind: 'matched', route: { path: '/orders/{orderId}', ... }, pathParameters: { orderId: '01J' } }
 */
export function matchRoute(routes: readonly RouteSpec[], method: string, path: string): RouteMatch {
  const segments = splitPath(path);
  if (segments === undefined) return { kind: 'not-found' };
  const allowed: string[] = [];
  for (const route of routes) {
    const pathParameters = matchTemplate(splitPath(route.path) ?? [], segments);
    if (pathParameters === undefined) continue;
    if (route.method === method.toUpperCase()) return { kind: 'matched', route, pathParameters };
    allowed.push(route.method);
  }
  return allowed.length === 0 ? { kind: 'not-found' } : { kind: 'method-not-allowed', allowed };
}

/** Path segments, a trailing slash ignored; `undefined` when a segment is not valid percent-encoding. */
function splitPath(path: string): string[] | undefined {
  try {
    return path
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

function matchTemplate(
  template: readonly string[],
  segments: readonly string[],
): Record<string, string> | undefined {
  const parameters: Record<string, string> = {};
  for (const [index, part] of template.entries()) {
    const parameter = /^\{([^}]+)\}$/.exec(part)?.[1];
    if (parameter?.endsWith('+')) {
      if (index >= segments.length) return undefined;
      parameters[parameter.slice(0, -1)] = segments.slice(index).join('/');
      return parameters;
    }
    const segment = segments[index];
    if (segment === undefined) return undefined;
    if (parameter !== undefined) parameters[parameter] = segment;
    else if (part !== segment) return undefined;
  }
  return template.length === segments.length ? parameters : undefined;
}
