/**
 * Resolves template values — `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split`,
 * `Fn::FindInMap`, `Fn::ImportValue` and the pseudo parameters — against the resources of the deployed stack
 * (and the exports of the stacks deployed before it), as CloudFormation does when it creates a function's
 * environment. Pure: what the stack holds is given in a {@link ResolutionContext}.
 */
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { isRecord, ResourceType } from './cloudformation-template.ts';

/** A deployed resource as the resolver sees it. */
export interface ResolvableResource {
  readonly type: string;
  /** What `Ref` returns: a table's name, a queue's URL, a function's name… */
  readonly physicalId: string;
  /** Attributes `Fn::GetAtt` returns that cannot be derived from the physical id (a table's `StreamArn`). */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** What template values are resolved against. */
export interface ResolutionContext {
  readonly region: string;
  readonly accountId: string;
  readonly stackName: string;
  readonly stackId?: string;
  /** @default 'aws' */
  readonly partition?: string;
  /** @default 'amazonaws.com' */
  readonly urlSuffix?: string;
  /** Logical id → deployed resource. */
  readonly resources: ReadonlyMap<string, ResolvableResource>;
  /** Parameter name → value (the parameters' defaults: the runtime passes none). */
  readonly parameters?: Readonly<Record<string, string>>;
  /** The template's `Mappings`, for `Fn::FindInMap`. */
  readonly mappings?: Readonly<Record<string, unknown>>;
  /**
   * Export name → value: what the stacks deployed before export (`Outputs.*.Export.Name`), for
   * `Fn::ImportValue`. @default none
   */
  readonly exports?: ReadonlyMap<string, string>;
}

/** `Ref: AWS::NoValue` — the property is left out. */
const NO_VALUE = Symbol('AWS::NoValue');

type Resolved = string | number | boolean | null | typeof NO_VALUE | Resolved[] | { [key: string]: Resolved };

/**
 * `value` with every intrinsic function resolved; `where` names the value in errors
 * (`function Outbox/Relay, variable TOPIC_QUEUES`).
 * @example
 * resolveValue({ 'Fn::Sub': 'arn:${AWS::Partition}:sqs:${AWS::Region}' }, context, 'QUEUE_ARN');
 * // → 'arn:aws:sqs:us-east-1'
 */
export function resolveValue(value: unknown, context: ResolutionContext, where: string): unknown {
  const resolved = resolve(value, context, where);
  return resolved === NO_VALUE ? undefined : resolved;
}

/** {@link resolveValue} for a value that must end up a string (an environment variable); numbers are written out. */
export function resolveString(value: unknown, context: ResolutionContext, where: string): string {
  const resolved = resolveValue(value, context, where);
  if (typeof resolved === 'string') return resolved;
  if (typeof resolved === 'number' || typeof resolved === 'boolean') return String(resolved);
  throw unresolvable(where, `resolves to ${JSON.stringify(resolved)}, not a string`);
}

function resolve(value: unknown, context: ResolutionContext, where: string): Resolved {
  if (Array.isArray(value)) {
    return value.map((item) => resolve(item, context, where)).filter((item) => item !== NO_VALUE);
  }
  if (!isRecord(value)) return value as Resolved;
  const keys = Object.keys(value);
  const [only] = keys;
  if (keys.length === 1 && only !== undefined && (only === 'Ref' || only.startsWith('Fn::'))) {
    return resolveIntrinsic(only, value[only], { context, where });
  }
  const result: Record<string, Resolved> = {};
  for (const [key, item] of Object.entries(value)) {
    const resolved = resolve(item, context, where);
    if (resolved !== NO_VALUE) result[key] = resolved;
  }
  return result;
}

interface Scope {
  readonly context: ResolutionContext;
  readonly where: string;
}

function resolveIntrinsic(name: string, argument: unknown, scope: Scope): Resolved {
  const { context, where } = scope;
  switch (name) {
    case 'Ref':
      return typeof argument === 'string' ? ref(argument, scope) : malformed(scope, name, argument);
    case 'Fn::GetAtt':
      return getAtt(argument, scope);
    case 'Fn::Join': {
      const [delimiter, list] = Array.isArray(argument) ? argument : [];
      const items = resolve(list, context, where);
      if (typeof delimiter !== 'string' || !Array.isArray(items)) return malformed(scope, name, argument);
      return items.map((item) => text(item, scope)).join(delimiter);
    }
    case 'Fn::Sub':
      return sub(argument, scope);
    case 'Fn::Select': {
      const [index, list] = Array.isArray(argument) ? argument : [];
      const items = resolve(list, context, where);
      const position = Number(resolve(index, context, where));
      const item = Array.isArray(items) ? items[position] : undefined;
      return item === undefined ? malformed(scope, name, argument) : item;
    }
    case 'Fn::Split': {
      const [delimiter, source] = Array.isArray(argument) ? argument : [];
      const whole = resolve(source, context, where);
      if (typeof delimiter !== 'string' || typeof whole !== 'string') return malformed(scope, name, argument);
      return whole.split(delimiter);
    }
    case 'Fn::FindInMap':
      return findInMap(argument, scope);
    case 'Fn::ImportValue':
      return importValue(argument, scope);
    default:
      throw unresolvable(where, `${name} is not supported by the local runtime`);
  }
}

function ref(name: string, { context, where }: Scope): Resolved {
  const pseudo: Readonly<Record<string, string | typeof NO_VALUE | undefined>> = {
    'AWS::Region': context.region,
    'AWS::AccountId': context.accountId,
    'AWS::Partition': context.partition ?? 'aws',
    'AWS::URLSuffix': context.urlSuffix ?? 'amazonaws.com',
    'AWS::StackName': context.stackName,
    'AWS::StackId': context.stackId,
    'AWS::NoValue': NO_VALUE,
  };
  if (name in pseudo) {
    const value = pseudo[name];
    if (value === undefined) throw unresolvable(where, `${name} is not known for this stack`);
    return value;
  }
  const parameter = context.parameters?.[name];
  if (parameter !== undefined) return parameter;
  const resource = context.resources.get(name);
  if (resource === undefined)
    throw unresolvable(where, `Ref ${name}: no such resource or parameter in the stack`);
  if (resource.physicalId === '') {
    throw unresolvable(where, `Ref ${name}: the backend did not create this ${resource.type}`);
  }
  return resource.physicalId;
}

function getAtt(argument: unknown, scope: Scope): Resolved {
  const [id, attribute] = Array.isArray(argument)
    ? argument
    : typeof argument === 'string'
      ? argument.split(/\.(.*)/s)
      : [];
  if (typeof id !== 'string' || typeof attribute !== 'string')
    return malformed(scope, 'Fn::GetAtt', argument);
  const resource = scope.context.resources.get(id);
  if (resource === undefined)
    throw unresolvable(scope.where, `Fn::GetAtt ${id}.${attribute}: no such resource`);
  const value = resource.attributes?.[attribute] ?? derivedAttribute(resource, attribute, scope.context);
  if (value === undefined || value === '') {
    throw unresolvable(
      scope.where,
      `Fn::GetAtt ${id}.${attribute}: the local runtime cannot tell this attribute of a ${resource.type}`,
    );
  }
  return value;
}

/** Attributes that follow from a resource's physical id, as AWS builds them. */
function derivedAttribute(
  resource: ResolvableResource,
  attribute: string,
  context: ResolutionContext,
): string | undefined {
  const { physicalId } = resource;
  if (physicalId === '') return undefined;
  const partition = context.partition ?? 'aws';
  const prefix = (service: string): string =>
    `arn:${partition}:${service}:${context.region}:${context.accountId}`;
  switch (`${resource.type}.${attribute}`) {
    case `${ResourceType.TABLE}.Arn`:
      return `${prefix('dynamodb')}:table/${physicalId}`;
    case `${ResourceType.QUEUE}.Arn`:
      return `${prefix('sqs')}:${queueNameOf(physicalId)}`;
    case `${ResourceType.QUEUE}.QueueName`:
      return queueNameOf(physicalId);
    case `${ResourceType.QUEUE}.QueueUrl`:
      return physicalId;
    case `${ResourceType.FUNCTION}.Arn`:
      return `${prefix('lambda')}:function:${physicalId}`;
    case 'AWS::IAM::Role.Arn':
      return `arn:${partition}:iam::${context.accountId}:role/${physicalId}`;
    default:
      return undefined;
  }
}

/** The queue name at the end of a queue URL. */
export function queueNameOf(queueUrl: string): string {
  return queueUrl.replace(/\/+$/, '').split('/').pop() ?? queueUrl;
}

function sub(argument: unknown, scope: Scope): Resolved {
  const [template, variables] = Array.isArray(argument) ? argument : [argument, {}];
  if (typeof template !== 'string' || !isRecord(variables)) return malformed(scope, 'Fn::Sub', argument);
  return template.replace(/\$\{([^}]*)\}/g, (_match, name: string) => {
    // `${!Literal}` writes `${Literal}`.
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    if (name in variables) return text(resolve(variables[name], scope.context, scope.where), scope);
    const [id, attribute] = name.split(/\.(.*)/s);
    if (attribute !== undefined && id !== undefined && !id.startsWith('AWS::')) {
      return text(getAtt([id, attribute], scope), scope);
    }
    return text(ref(name, scope), scope);
  });
}

function findInMap(argument: unknown, scope: Scope): Resolved {
  const path = Array.isArray(argument) ? argument.map((key) => resolve(key, scope.context, scope.where)) : [];
  let node: unknown = scope.context.mappings;
  for (const key of path) node = isRecord(node) && typeof key === 'string' ? node[key] : undefined;
  return path.length === 3 && node !== undefined
    ? (node as Resolved)
    : malformed(scope, 'Fn::FindInMap', argument);
}

function importValue(argument: unknown, scope: Scope): Resolved {
  const name = resolve(argument, scope.context, scope.where);
  if (typeof name !== 'string') return malformed(scope, 'Fn::ImportValue', argument);
  const value = scope.context.exports?.get(name);
  if (value === undefined) {
    // CloudFormation's own words for it, and what to look at: the exporting stack must be deployed first.
    throw unresolvable(
      scope.where,
      `Fn::ImportValue ${name}: no export named ${name} found (no stack deployed before this one exports it)`,
    );
  }
  return value;
}

function text(value: Resolved, scope: Scope): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw unresolvable(scope.where, `expected text, got ${JSON.stringify(value)}`);
}

function malformed(scope: Scope, name: string, argument: unknown): never {
  throw unresolvable(scope.where, `malformed ${name}: ${JSON.stringify(argument)}`);
}

function unresolvable(where: string, problem: string): LocalRuntimeError {
  return new LocalRuntimeError('UNRESOLVABLE_VALUE', `${where}: ${problem}`);
}
