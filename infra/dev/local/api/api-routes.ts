/** Matches request paths against the template's API Gateway path templates (`/orders/{orderId}`). Pure. */
import type { RouteDefinition } from '../template/read-routes.ts';

/** The result of matching a request against the routes. */
export type RouteMatch<R extends RouteDefinition = RouteDefinition> =
  | {
      readonly kind: 'matched';
      readonly route: R;
      readonly pathParameters: Readonly<Record<string, string>>;
    }
  /** A route has this path but not this method. */
  | { readonly kind: 'method-not-allowed'; readonly allowed: readonly string[] }
  | { readonly kind: 'not-found' };

/**
 * The route for `method` and `path` (no query string), with its path parameters URL-decoded.
 * `{name+}` matches the rest of the path, as API Gateway's greedy parameter does; a method of the resource
 * wins over its `ANY` method, and a path without parameters over one with them, as in API Gateway.
 * @example
 * matchRoute(app.routes, 'GET', '/orders/01J')
 * // → { kind: 'matched', route: { path: '/orders/{orderId}', ... }, pathParameters: { orderId: '01J' } }
 */
export function matchRoute<R extends RouteDefinition>(
  routes: readonly R[],
  method: string,
  path: string,
): RouteMatch<R> {
  const segments = splitPath(path);
  if (segments === undefined) return { kind: 'not-found' };
  const wanted = method.toUpperCase();
  const candidates = routes
    .map((route) => ({ route, pathParameters: matchTemplate(splitPath(route.path) ?? [], segments) }))
    .filter(
      (candidate): candidate is { route: R; pathParameters: Record<string, string> } =>
        candidate.pathParameters !== undefined,
    )
    .sort((a, b) => specificity(b.route) - specificity(a.route));
  const exact = candidates.find((candidate) => candidate.route.method === wanted);
  const any = candidates.find((candidate) => candidate.route.method === 'ANY');
  const match = exact ?? any;
  if (match !== undefined) return { kind: 'matched', ...match };
  const allowed = [...new Set(candidates.map((candidate) => candidate.route.method))];
  return allowed.length === 0 ? { kind: 'not-found' } : { kind: 'method-not-allowed', allowed };
}

/** Literal segments count most, then plain parameters; a greedy parameter least. */
function specificity(route: RouteDefinition): number {
  return (splitPath(route.path) ?? []).reduce(
    (score, part) => score + (part.endsWith('+}') ? 0 : part.startsWith('{') ? 1 : 3),
    0,
  );
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
