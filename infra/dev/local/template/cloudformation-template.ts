/** The parts of a synthesized CloudFormation template the local runtime reads, and small readers for them. */
import { LocalRuntimeError } from '../local-runtime-error.ts';

/** One resource of a CloudFormation template. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly Metadata?: Readonly<Record<string, unknown>>;
  readonly DependsOn?: string | readonly string[];
  readonly [key: string]: unknown;
}

/** A CloudFormation template, as far as the local runtime reads it. */
export interface CloudFormationTemplate {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
  readonly Parameters?: Readonly<Record<string, unknown>>;
  readonly Rules?: Readonly<Record<string, unknown>>;
  readonly Outputs?: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** CloudFormation resource types the runtime reads. */
export const ResourceType = {
  FUNCTION: 'AWS::Lambda::Function',
  EVENT_SOURCE_MAPPING: 'AWS::Lambda::EventSourceMapping',
  TABLE: 'AWS::DynamoDB::Table',
  QUEUE: 'AWS::SQS::Queue',
  REST_API: 'AWS::ApiGateway::RestApi',
  API_RESOURCE: 'AWS::ApiGateway::Resource',
  API_METHOD: 'AWS::ApiGateway::Method',
  EVENT_RULE: 'AWS::Events::Rule',
} as const;

/** Checks that `value` looks like a CloudFormation template (an object with a `Resources` object). */
export function asTemplate(value: unknown): CloudFormationTemplate {
  const resources = isRecord(value) ? value.Resources : undefined;
  if (!isRecord(resources)) {
    throw new LocalRuntimeError(
      'UNSUPPORTED_TEMPLATE',
      'not a CloudFormation template: it has no Resources object',
    );
  }
  return value as CloudFormationTemplate;
}

/** The resources of `type`, as `[logicalId, resource]` pairs in template order. */
export function resourcesOfType(
  template: CloudFormationTemplate,
  type: string,
): [string, TemplateResource][] {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}

/**
 * The logical id a value points at when it is `{ Ref: id }` or `{ 'Fn::GetAtt': [id, attribute] }`
 * (optionally only for that attribute); `undefined` for anything else.
 */
export function referencedLogicalId(value: unknown, attribute?: string): string | undefined {
  if (!isRecord(value)) return undefined;
  if (attribute === undefined && typeof value.Ref === 'string') return value.Ref;
  const getAtt = value['Fn::GetAtt'];
  const [id, name] = Array.isArray(getAtt)
    ? getAtt
    : typeof getAtt === 'string'
      ? getAtt.split(/\.(.*)/s)
      : [];
  if (typeof id !== 'string' || typeof name !== 'string') return undefined;
  return attribute === undefined || attribute === name ? id : undefined;
}

/** Every logical id `node` refers to (through `Ref`, `Fn::GetAtt` or `${Name}` in `Fn::Sub`), in order. */
export function referencedLogicalIds(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(referencedLogicalIds);
  if (!isRecord(node)) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'Ref' && typeof value === 'string') found.push(value);
    else if (key === 'Fn::GetAtt') found.push(...[referencedLogicalId({ [key]: value }) ?? []].flat());
    else if (key === 'Fn::Sub') {
      const text = Array.isArray(value) ? value[0] : value;
      // `${Name}` and `${Name.Attr}` refer to resources; `${!Literal}` is an escape.
      if (typeof text === 'string') {
        found.push(...[...text.matchAll(/\$\{([^!}.][^}.]*)/g)].map((match) => match[1] ?? ''));
      }
    }
    found.push(...referencedLogicalIds(value));
  }
  return found;
}

/** Whether `value` is a plain object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
