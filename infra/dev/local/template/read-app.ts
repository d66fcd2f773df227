/**
 * The application as the local runtime runs it, read from the synthesized template alone (as `sam local`
 * reads one): functions with their handler entries, event source mappings, REST routes and schedules. Pure:
 * values that need the deployed stack (`Ref`, `Fn::GetAtt`) stay unresolved until the stack exists.
 */
import type { CloudFormationTemplate } from './cloudformation-template.ts';
import { type EventSourceMappingDefinition, readEventSourceMappings } from './read-event-source-mappings.ts';
import { type FunctionDefinition, readFunctions } from './read-functions.ts';
import { type RouteDefinition, readRoutes } from './read-routes.ts';
import { readSchedules, type ScheduleDefinition } from './read-schedules.ts';
import { stackNameFromPaths } from './resource-names.ts';
import type { SkippedResource } from './skipped-resource.ts';

/** Everything the local runtime runs, and what it leaves out. */
export interface AppDefinition {
  /** The stack's construct id from the path metadata; `undefined` when the template has none. */
  readonly stackName: string | undefined;
  readonly functions: readonly FunctionDefinition[];
  readonly mappings: readonly EventSourceMappingDefinition[];
  readonly routes: readonly RouteDefinition[];
  readonly schedules: readonly ScheduleDefinition[];
  /** Functions, mappings, methods and rules the runtime does not run, each with its reason. */
  readonly skipped: readonly SkippedResource[];
}

/** Resource types a local run cannot serve at all, with what to do instead. */
const UNSERVED_TYPES: Readonly<Record<string, string>> = {
  'AWS::ApiGatewayV2::Route': 'HTTP APIs (API Gateway v2) are not served locally; use a REST API',
  'AWS::Scheduler::Schedule': 'EventBridge Scheduler schedules are not run locally; use an Events rule',
};

/**
 * Reads the app from `template`.
 * @example
 * const app = readApp(template);
 * app.routes; // [{ method: 'POST', path: '/orders', functionName: 'CreateOrder' }, …]
 */
export function readApp(template: CloudFormationTemplate): AppDefinition {
  const { functions, skipped: skippedFunctions } = readFunctions(template);
  const functionIds = new Map(functions.map((fn) => [fn.logicalId, fn.name]));
  const { mappings, skipped: skippedMappings } = readEventSourceMappings(template, functionIds);
  const { routes, skipped: skippedRoutes } = readRoutes(template, functionIds);
  const { schedules, skipped: skippedSchedules } = readSchedules(template, functionIds);
  const unserved: SkippedResource[] = Object.entries(template.Resources).flatMap(([logicalId, resource]) => {
    const reason = UNSERVED_TYPES[resource.Type];
    return reason === undefined ? [] : [{ name: logicalId, type: resource.Type, reason }];
  });
  return {
    stackName: stackNameFromPaths(template.Resources),
    functions,
    mappings,
    routes,
    schedules,
    skipped: [...skippedFunctions, ...skippedMappings, ...skippedRoutes, ...skippedSchedules, ...unserved],
  };
}
