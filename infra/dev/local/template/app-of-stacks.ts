/**
 * An app of several stacks read as one: each stack's names qualified by the stack's display name
 * (`OutboxOrders/Outbox/Relay`), so that two stacks may hold the same construct path, and the stacks' functions,
 * mappings, routes and schedules put together in deployment order. Two stacks must not claim the same route or
 * output name: one port serves every route, and tools read `outputs[name]`. Pure.
 */
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { CloudFormationTemplate } from './cloudformation-template.ts';
import type { AppDefinition } from './read-app.ts';
import type { RouteDefinition } from './read-routes.ts';

/** A stack's part of the app. */
export interface StackApp {
  /** The stack's display name (its construct path). */
  readonly displayName: string;
  readonly template: CloudFormationTemplate;
  readonly app: AppDefinition;
}

/** The name of construct path `path` of the stack displayed as `displayName`, in an app of several stacks. */
export function qualifiedName(displayName: string, path: string): string {
  return `${displayName}/${path}`;
}

/**
 * `app` with every local name (functions, mappings, rules, skipped resources, the functions routes and
 * schedules invoke) qualified by the stack's display name.
 * @example
 * qualifyApp(readApp(template), 'OutboxOrders').functions[0].name; // 'OutboxOrders/Outbox/Relay'
 */
export function qualifyApp(app: AppDefinition, displayName: string): AppDefinition {
  const name = (path: string): string => qualifiedName(displayName, path);
  return {
    stackName: app.stackName,
    functions: app.functions.map((fn) => ({ ...fn, name: name(fn.name) })),
    mappings: app.mappings.map((mapping) => ({
      ...mapping,
      name: name(mapping.name),
      functionName: name(mapping.functionName),
    })),
    routes: app.routes.map((route) => ({ ...route, functionName: name(route.functionName) })),
    schedules: app.schedules.map((schedule) => ({
      ...schedule,
      name: name(schedule.name),
      functionName: name(schedule.functionName),
    })),
    skipped: app.skipped.map((skipped) => ({ ...skipped, name: name(skipped.name) })),
  };
}

/**
 * The stacks' apps as one, in the order given; `stackName` is undefined, as no one stack is the app. Throws
 * `STACK_CONFLICT` when two stacks declare the same route (method and path) or output name.
 * @example
 * const app = mergeApps(stacks); // app.routes: every stack's routes
 */
export function mergeApps(stacks: readonly StackApp[]): AppDefinition {
  assertNoRouteConflict(stacks);
  assertNoOutputConflict(stacks);
  return {
    stackName: undefined,
    functions: stacks.flatMap((stack) => stack.app.functions),
    mappings: stacks.flatMap((stack) => stack.app.mappings),
    routes: stacks.flatMap((stack) => stack.app.routes),
    schedules: stacks.flatMap((stack) => stack.app.schedules),
    skipped: stacks.flatMap((stack) => stack.app.skipped),
  };
}

/** A route as API Gateway tells routes apart: its method, and its path with parameter names left out. */
function routeKey(route: RouteDefinition): string {
  const path = route.path
    .split('/')
    .map((part) => (/^\{.+\+\}$/.test(part) ? '{+}' : /^\{.+\}$/.test(part) ? '{}' : part))
    .join('/');
  return `${route.method} ${path}`;
}

function assertNoRouteConflict(stacks: readonly StackApp[]): void {
  const owners = new Map<string, { readonly stack: string; readonly route: RouteDefinition }>();
  for (const stack of stacks) {
    for (const route of stack.app.routes) {
      const key = routeKey(route);
      const owner = owners.get(key);
      if (owner !== undefined && owner.stack !== stack.displayName) {
        throw new LocalRuntimeError(
          'STACK_CONFLICT',
          `stacks ${owner.stack} and ${stack.displayName} both declare ${route.method} ${route.path} ` +
            `(→ ${owner.route.functionName}, → ${route.functionName}); one port serves every stack's routes, ` +
            'so each method and path may belong to one stack only',
        );
      }
      owners.set(key, { stack: stack.displayName, route });
    }
  }
}

function assertNoOutputConflict(stacks: readonly StackApp[]): void {
  const owners = new Map<string, string>();
  for (const stack of stacks) {
    for (const name of Object.keys(stack.template.Outputs ?? {})) {
      const owner = owners.get(name);
      if (owner !== undefined && owner !== stack.displayName) {
        throw new LocalRuntimeError(
          'STACK_CONFLICT',
          `stacks ${owner} and ${stack.displayName} both have an output named ${name}; the runtime's outputs ` +
            "are every stack's outputs by name, so each name may belong to one stack only",
        );
      }
      owners.set(name, stack.displayName);
    }
  }
}
