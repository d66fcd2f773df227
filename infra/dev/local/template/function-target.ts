/** Finds the function a template value invokes: mappings, routes and rules point at functions in a few ways. */
import {
  type CloudFormationTemplate,
  referencedLogicalId,
  referencedLogicalIds,
} from './cloudformation-template.ts';

/** Types that stand for a function when invoked: its aliases and versions. */
const FUNCTION_POINTERS: ReadonlySet<string> = new Set(['AWS::Lambda::Alias', 'AWS::Lambda::Version']);

/**
 * The local name of the function `value` refers to (`Ref`, `Fn::GetAtt …Arn`, or an alias or version of it);
 * `undefined` when it is not a function the runtime runs. `functionIds`: logical id → local name.
 */
export function targetFunction(
  value: unknown,
  template: CloudFormationTemplate,
  functionIds: ReadonlyMap<string, string>,
): string | undefined {
  let id = referencedLogicalId(value);
  // An alias can point at a version, which points at the function: at most two hops.
  for (let hop = 0; id !== undefined && hop <= 2; hop += 1) {
    const name = functionIds.get(id);
    if (name !== undefined) return name;
    const resource = template.Resources[id];
    if (resource === undefined || !FUNCTION_POINTERS.has(resource.Type)) return undefined;
    id = referencedLogicalId(resource.Properties?.FunctionName);
  }
  return undefined;
}

/** The first function any reference inside `value` points at (an API integration's URI is a `Fn::Join`). */
export function firstTargetFunction(
  value: unknown,
  template: CloudFormationTemplate,
  functionIds: ReadonlyMap<string, string>,
): string | undefined {
  for (const id of referencedLogicalIds(value)) {
    const name = targetFunction({ Ref: id }, template, functionIds);
    if (name !== undefined) return name;
  }
  return undefined;
}
