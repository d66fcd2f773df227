/**
 * Queries on a synthesized template that find resources by what they are (an output's target, a function's
 * service name, a role's policies), never by hashed logical ids.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import type { FunctionKey } from '../../infra/topology.ts';

/** A resource of a CloudFormation template. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly DeletionPolicy?: string;
}

/** The parts of a CloudFormation template the tests read. */
export interface CfnTemplate {
  readonly Resources: Readonly<Record<string, CfnResource>>;
  readonly Outputs: Readonly<Record<string, { readonly Value: unknown }>>;
  readonly Parameters?: Readonly<Record<string, unknown>>;
  readonly Rules?: Readonly<Record<string, unknown>>;
}

/** One IAM policy statement. */
export interface PolicyStatement {
  readonly Effect: string;
  readonly Action: string | readonly string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

/** The template as plain JSON. */
export function templateJson(template: Template): CfnTemplate {
  return template.toJSON() as CfnTemplate;
}

/** A resource by logical id; fails the test when it does not exist. */
export function resource(template: CfnTemplate, logicalId: string): CfnResource {
  const found = template.Resources[logicalId];
  if (found === undefined) throw new Error(`no resource ${logicalId}`);
  return found;
}

/** The properties of a resource by logical id. */
export function propertiesOf(template: CfnTemplate, logicalId: string): Readonly<Record<string, unknown>> {
  return resource(template, logicalId).Properties ?? {};
}

/** The logical ids of every resource of `type`. */
export function idsOfType(template: CfnTemplate, type: string): string[] {
  return Object.entries(template.Resources)
    .filter(([, candidate]) => candidate.Type === type)
    .map(([id]) => id);
}

/** The logical id an output points at with `Ref` or `Fn::GetAtt`. */
export function outputTarget(template: CfnTemplate, outputName: string): string {
  const value = template.Outputs[outputName]?.Value;
  const target = refTarget(value);
  if (target === undefined) throw new Error(`output ${outputName} does not point at a resource`);
  return target;
}

/** The logical id `value` refers to when it is `{Ref}` or `{Fn::GetAtt}`. */
export function refTarget(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if ('Ref' in value && typeof value.Ref === 'string') return value.Ref;
  if ('Fn::GetAtt' in value && Array.isArray(value['Fn::GetAtt'])) {
    const [id] = value['Fn::GetAtt'];
    return typeof id === 'string' ? id : undefined;
  }
  return undefined;
}

/** Whether `value` refers to `logicalId` anywhere inside it (Ref, GetAtt, inside Fn::Join, ...). */
export function references(value: unknown, logicalId: string): boolean {
  if (refTarget(value) === logicalId) return true;
  if (Array.isArray(value)) return value.some((entry) => references(entry, logicalId));
  if (typeof value === 'object' && value !== null) {
    return Object.values(value).some((entry) => references(entry, logicalId));
  }
  return false;
}

/** The logical id of a topology function, found by its Powertools service name. */
export function functionId(template: CfnTemplate, key: FunctionKey): string {
  const ids = idsOfType(template, 'AWS::Lambda::Function').filter(
    (id) => environmentOf(template, id).POWERTOOLS_SERVICE_NAME === key,
  );
  const [id, ...others] = ids;
  if (id === undefined || others.length > 0)
    throw new Error(`expected one function for ${key}, found ${ids}`);
  return id;
}

/** A function's environment variables. */
export function environmentOf(
  template: CfnTemplate,
  functionLogicalId: string,
): Readonly<Record<string, unknown>> {
  const environment = propertiesOf(template, functionLogicalId).Environment;
  if (typeof environment !== 'object' || environment === null || !('Variables' in environment)) return {};
  return environment.Variables as Record<string, unknown>;
}

/** Every policy statement attached to a function's execution role (inline policies and AWS::IAM::Policy). */
export function roleStatements(template: CfnTemplate, functionLogicalId: string): PolicyStatement[] {
  const roleId = refTarget(propertiesOf(template, functionLogicalId).Role);
  if (roleId === undefined) throw new Error(`function ${functionLogicalId} has no role in the template`);
  const documents: unknown[] = [];
  const inline = propertiesOf(template, roleId).Policies;
  if (Array.isArray(inline)) documents.push(...inline.map((policy) => policy.PolicyDocument));
  for (const policyId of idsOfType(template, 'AWS::IAM::Policy')) {
    const policy = propertiesOf(template, policyId);
    if (references(policy.Roles, roleId)) documents.push(policy.PolicyDocument);
  }
  return documents.flatMap((document) => (document as { Statement: PolicyStatement[] }).Statement);
}

/** A statement's actions as a list. */
export function actionsOf(statement: PolicyStatement): readonly string[] {
  return typeof statement.Action === 'string' ? [statement.Action] : statement.Action;
}

/** The actions a set of statements allows on resources that refer to `logicalId`. */
export function actionsOn(statements: readonly PolicyStatement[], logicalId: string): Set<string> {
  return new Set(
    statements
      .filter((statement) => statement.Effect === 'Allow' && references(statement.Resource, logicalId))
      .flatMap(actionsOf),
  );
}

/**
 * The actions a set of statements allows on the indexes of the table `tableLogicalId` (a resource written as
 * `Fn::Join` of the table's ARN and `/index/...`, as CDK's table grants write it).
 */
export function actionsOnIndexesOf(
  statements: readonly PolicyStatement[],
  tableLogicalId: string,
): Set<string> {
  const isIndexArn = (value: unknown): boolean => {
    if (typeof value !== 'object' || value === null || !('Fn::Join' in value)) return false;
    const join = value['Fn::Join'];
    if (!Array.isArray(join) || !Array.isArray(join[1])) return false;
    const parts: unknown[] = join[1];
    return (
      parts.some((part) => refTarget(part) === tableLogicalId) &&
      parts.some((part) => typeof part === 'string' && part.startsWith('/index/'))
    );
  };
  return new Set(
    statements
      .filter((statement) => {
        const resources: unknown[] = Array.isArray(statement.Resource)
          ? statement.Resource
          : [statement.Resource];
        return statement.Effect === 'Allow' && resources.some(isIndexArn);
      })
      .flatMap(actionsOf),
  );
}

/** A string-valued template expression as text, each `{Ref: id}` written as `${id}`. */
export function renderString(value: unknown): string {
  if (typeof value === 'string') return value;
  const target = refTarget(value);
  if (target !== undefined) return `\${${target}}`;
  if (
    typeof value === 'object' &&
    value !== null &&
    'Fn::Join' in value &&
    Array.isArray(value['Fn::Join'])
  ) {
    const [separator, parts] = value['Fn::Join'];
    if (typeof separator === 'string' && Array.isArray(parts)) return parts.map(renderString).join(separator);
  }
  throw new Error(`cannot render ${JSON.stringify(value)} as a string`);
}
