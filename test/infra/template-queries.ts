/**
 * Queries on a synthesized template that find resources by what they are (an output's target, a function's
 * construct path, service name or handler entry, a role's policies), never by hashed logical ids.
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LOCAL_ENTRY_METADATA } from '../../infra/constructs/local-metadata.ts';
import { OUTBOX_ROLE_METADATA } from '../../infra/constructs/template-metadata.ts';

/** A resource of a CloudFormation template. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly Metadata?: Readonly<Record<string, unknown>>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
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

/**
 * How long a hook that synthesizes may take: a process's first synthesis loads most of aws-cdk-lib, which
 * takes tens of seconds on a busy machine (later ones take about a second).
 */
export const SYNTH_TIMEOUT_MS = 180_000;

/** CDK's metadata key for a resource's construct path (`Stack/Outbox/Relay/Resource`). */
export const CDK_PATH = 'aws:cdk:path';

/**
 * A new app for a test stack, with the context `cdk synth` runs with: construct paths in the template (the
 * CLI turns them on) and no esbuild bundling (NodejsFunction then only checks that the entry exists).
 */
export function testApp(): App {
  return new App({ context: { 'aws:cdk:enable-path-metadata': true, 'aws:cdk:bundling-stacks': [] } });
}

/** The template of `stack` as plain JSON; synthesizing runs the validations, so a bad config throws here. */
export function templateOf(stack: Stack): CfnTemplate {
  return Template.fromStack(stack).toJSON() as CfnTemplate;
}

/** A template given as JSON, typed. */
export function asTemplate(template: Record<string, unknown>): CfnTemplate {
  return template as unknown as CfnTemplate;
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

/** The one id of `ids`; fails the test, naming `what`, when there is none or more than one. */
export function onlyId(ids: readonly string[], what: string): string {
  const [id, ...others] = ids;
  if (id === undefined || others.length > 0) throw new Error(`expected one ${what}, found [${ids}]`);
  return id;
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

/** The logical id a token of `stack` (a table's name, a queue's URL) refers to once resolved. */
export function resolvedTarget(stack: Stack, token: string): string {
  const target = refTarget(stack.resolve(token));
  if (target === undefined) throw new Error(`${token} does not refer to a resource of ${stack.stackName}`);
  return target;
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

/**
 * A resource's name as the local runtime gives it: its `aws:cdk:path` without the stack and the trailing
 * `/Resource` (`Service/Outbox/Relay/Resource` → `Outbox/Relay`).
 */
export function constructName(template: CfnTemplate, logicalId: string): string | undefined {
  const path = resource(template, logicalId).Metadata?.[CDK_PATH];
  if (typeof path !== 'string') return undefined;
  return path
    .split('/')
    .slice(1)
    .join('/')
    .replace(/\/Resource$/, '');
}

/** The logical id of the resource of `type` whose construct name is `name` (`Outbox/Relay`). */
export function idByName(template: CfnTemplate, options: { type: string; name: string }): string {
  const ids = idsOfType(template, options.type).filter((id) => constructName(template, id) === options.name);
  return onlyId(ids, `${options.type} named ${options.name}`);
}

/** The logical id of the Lambda function whose construct name is `name` (`Outbox/Relay`, `CreateOrder`). */
export function functionId(template: CfnTemplate, name: string): string {
  return idByName(template, { type: 'AWS::Lambda::Function', name });
}

/** The logical id of the one function that logs as `serviceName` (its POWERTOOLS_SERVICE_NAME). */
export function functionIdByService(template: CfnTemplate, serviceName: string): string {
  const ids = idsOfType(template, 'AWS::Lambda::Function').filter(
    (id) => environmentOf(template, id).POWERTOOLS_SERVICE_NAME === serviceName,
  );
  return onlyId(ids, `function with service name ${serviceName}`);
}

/** The logical ids of the resources whose `serverless-outbox:role` metadata is `role`, as a tool finds them. */
export function idsByRole(template: CfnTemplate, role: string): string[] {
  return Object.entries(template.Resources)
    .filter(([, candidate]) => candidate.Metadata?.[OUTBOX_ROLE_METADATA] === role)
    .map(([id]) => id);
}

/** The X-Ray statement active tracing adds to a function's role (X-Ray has no resource-level permissions). */
export const XRAY_STATEMENT = {
  Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
  Effect: 'Allow',
  Resource: '*',
} as const;

/** The handler module a function's metadata names (relative to the project root), if any. */
export function entryOf(template: CfnTemplate, functionLogicalId: string): string | undefined {
  const entry = resource(template, functionLogicalId).Metadata?.[LOCAL_ENTRY_METADATA];
  return typeof entry === 'string' ? entry : undefined;
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

/** The one event source mapping whose source (a stream or a queue) belongs to `sourceLogicalId`. */
export function mappingFrom(
  template: CfnTemplate,
  sourceLogicalId: string,
): Readonly<Record<string, unknown>> {
  const ids = idsOfType(template, 'AWS::Lambda::EventSourceMapping').filter((id) =>
    references(propertiesOf(template, id).EventSourceArn, sourceLogicalId),
  );
  return propertiesOf(template, onlyId(ids, `event source mapping from ${sourceLogicalId}`));
}

/** The one event source mapping that feeds the function `functionLogicalId`. */
export function mappingTo(
  template: CfnTemplate,
  functionLogicalId: string,
): Readonly<Record<string, unknown>> {
  const ids = idsOfType(template, 'AWS::Lambda::EventSourceMapping').filter((id) =>
    references(propertiesOf(template, id).FunctionName, functionLogicalId),
  );
  return propertiesOf(template, onlyId(ids, `event source mapping to ${functionLogicalId}`));
}

/** The one EventBridge rule that targets `functionLogicalId`. */
export function ruleTargeting(template: CfnTemplate, functionLogicalId: string): string {
  const ids = idsOfType(template, 'AWS::Events::Rule').filter((id) =>
    references(propertiesOf(template, id).Targets, functionLogicalId),
  );
  return onlyId(ids, `rule targeting ${functionLogicalId}`);
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
  // CDK orders the actions of a statement as it merges them; sorted, a statement compares as a set of actions.
  return documents
    .flatMap((document) => (document as { Statement: PolicyStatement[] }).Statement)
    .map((statement) =>
      typeof statement.Action === 'string'
        ? statement
        : { ...statement, Action: [...statement.Action].sort() },
    );
}

/** The managed policies of a function's execution role (the basic execution role, for logs). */
export function managedPoliciesOf(template: CfnTemplate, functionLogicalId: string): unknown[] {
  const roleId = refTarget(propertiesOf(template, functionLogicalId).Role);
  if (roleId === undefined) throw new Error(`function ${functionLogicalId} has no role in the template`);
  const managed = propertiesOf(template, roleId).ManagedPolicyArns;
  return Array.isArray(managed) ? managed : [];
}

/** A statement's actions as a list. */
export function actionsOf(statement: PolicyStatement): readonly string[] {
  return typeof statement.Action === 'string' ? [statement.Action] : statement.Action;
}

/** A statement's resources as a list. */
export function resourcesOf(statement: PolicyStatement): readonly unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** The attribute of `logicalId` a resource ARN names: `Arn`, `StreamArn`, or `index/<name>` for an index ARN. */
export function arnKind(value: unknown, logicalId: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if ('Fn::GetAtt' in value && Array.isArray(value['Fn::GetAtt'])) {
    const [id, attribute] = value['Fn::GetAtt'];
    return id === logicalId && typeof attribute === 'string' ? attribute : undefined;
  }
  if ('Fn::Join' in value && Array.isArray(value['Fn::Join'])) {
    const [separator, parts] = value['Fn::Join'];
    if (separator !== '' || !Array.isArray(parts) || parts.length !== 2) return undefined;
    const [base, suffix] = parts;
    if (arnKind(base, logicalId) !== 'Arn' || typeof suffix !== 'string') return undefined;
    return suffix.startsWith('/index/') ? suffix.slice(1) : undefined;
  }
  return undefined;
}

/**
 * What a set of statements allows on the resource `logicalId`: each allowed action with the part of the
 * resource it applies to (`Arn`, `StreamArn`, `index/due`, ...), e.g. `dynamodb:Query on index/due`. An ARN
 * built any other way (a wildcard suffix, say) shows up as `on ?`.
 */
export function grantsOn(statements: readonly PolicyStatement[], logicalId: string): string[] {
  const grants = new Set<string>();
  for (const statement of statements) {
    if (statement.Effect !== 'Allow') continue;
    for (const target of resourcesOf(statement)) {
      if (!references(target, logicalId)) continue;
      const kind = arnKind(target, logicalId) ?? '?';
      for (const action of actionsOf(statement)) grants.add(`${action} on ${kind}`);
    }
  }
  return [...grants].sort();
}

/** The actions a set of statements allows on resources that refer to `logicalId` (any part of it). */
export function actionsOn(statements: readonly PolicyStatement[], logicalId: string): Set<string> {
  return new Set(
    statements
      .filter((statement) => statement.Effect === 'Allow' && references(statement.Resource, logicalId))
      .flatMap(actionsOf),
  );
}

/** Options of {@link renderString}. */
export interface RenderOptions {
  /** The text of `{Ref: id}` (and of `{Fn::GetAtt: [id, attribute]}`, given the attribute). */
  readonly ref?: (logicalId: string, attribute?: string) => string;
}

/** A string-valued template expression as text, each `{Ref: id}` written as `${id}` unless told otherwise. */
export function renderString(value: unknown, options: RenderOptions = {}): string {
  const ref = options.ref ?? ((logicalId: string) => `\${${logicalId}}`);
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    if ('Ref' in value && typeof value.Ref === 'string') return ref(value.Ref);
    if ('Fn::GetAtt' in value && Array.isArray(value['Fn::GetAtt'])) {
      const [id, attribute] = value['Fn::GetAtt'];
      if (typeof id === 'string' && typeof attribute === 'string') return ref(id, attribute);
    }
    if ('Fn::Join' in value && Array.isArray(value['Fn::Join'])) {
      const [separator, parts] = value['Fn::Join'];
      if (typeof separator === 'string' && Array.isArray(parts)) {
        return parts.map((part) => renderString(part, options)).join(separator);
      }
    }
  }
  throw new Error(`cannot render ${JSON.stringify(value)} as a string`);
}

/**
 * A function's environment as Lambda would give it once deployed: every reference replaced by a physical
 * value of the right shape for what it refers to (a table's name, a queue's URL, an ARN).
 */
export function deployedEnvironment(
  template: CfnTemplate,
  functionLogicalId: string,
): Record<string, string> {
  const ref = (logicalId: string, attribute?: string): string => {
    if (logicalId.startsWith('AWS::')) return logicalId === 'AWS::Region' ? 'eu-west-1' : '123456789012';
    const type = resource(template, logicalId).Type;
    if (attribute !== undefined) return `arn:aws:test:eu-west-1:123456789012:${logicalId}/${attribute}`;
    if (type === 'AWS::SQS::Queue') return `https://sqs.eu-west-1.amazonaws.com/123456789012/${logicalId}`;
    if (type === 'AWS::DynamoDB::Table') return `deployed-${logicalId}`;
    // S3 bucket names are lower case.
    if (type === 'AWS::S3::Bucket') return `deployed-${logicalId.toLowerCase()}`;
    return `physical-${logicalId}`;
  };
  return Object.fromEntries(
    Object.entries(environmentOf(template, functionLogicalId)).map(([name, value]) => [
      name,
      renderString(value, { ref }),
    ]),
  );
}
