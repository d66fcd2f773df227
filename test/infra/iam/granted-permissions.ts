/**
 * The permissions a function's role grants, and the ones its event source mappings, tracing and logs need, read
 * from a synthesized template in the vocabulary of the SDK-call mapping, with resources named by logical id.
 */
import type { Permission, PermissionTarget } from '../../support/sdk-calls-iam.ts';
import {
  actionsOf,
  arnKind,
  type CfnTemplate,
  idsOfType,
  type PolicyStatement,
  propertiesOf,
  references,
  refTarget,
  resource,
  resourcesOf,
  roleStatements,
} from '../template-queries.ts';

const TARGET_KINDS: Readonly<Record<string, PermissionTarget['kind']>> = {
  'AWS::DynamoDB::Table': 'table',
  'AWS::SQS::Queue': 'queue',
  'AWS::Logs::LogGroup': 'logGroup',
  'AWS::KMS::Key': 'key',
};

/** The target a statement's resource names, by logical id; `undefined` for one this reading does not know. */
export function targetOf(template: CfnTemplate, value: unknown): PermissionTarget | undefined {
  if (value === '*') return { kind: 'any' };
  const id = logicalIdIn(template, value);
  if (id === undefined) return undefined;
  const prefix = objectPrefix(template, { value, id });
  if (prefix !== undefined) return { kind: 'objects', name: id, prefix };
  const part = arnKind(value, id);
  if (part === 'StreamArn') return { kind: 'stream', name: id };
  if (part?.startsWith('index/')) return { kind: 'index', name: id, index: part.slice('index/'.length) };
  if (part !== 'Arn') return undefined;
  const kind = TARGET_KINDS[resource(template, id).Type];
  if (kind === undefined || kind === 'index' || kind === 'objects' || kind === 'any') return undefined;
  return { kind, name: id };
}

/** `{Fn::Join: ['', [{Fn::GetAtt: [bucket, 'Arn']}, '/claim-check/*']]}` → `claim-check/`. */
function objectPrefix(
  template: CfnTemplate,
  { value, id }: { value: unknown; id: string },
): string | undefined {
  if (resource(template, id).Type !== 'AWS::S3::Bucket') return undefined;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  const [base, suffix] = join?.[1] ?? [];
  if (arnKind(base, id) !== 'Arn' || typeof suffix !== 'string' || !suffix.endsWith('*')) return undefined;
  return suffix.slice(1, -1);
}

function logicalIdIn(template: CfnTemplate, value: unknown): string | undefined {
  return Object.keys(template.Resources).find((id) => references(value, id));
}

/** A granted permission and the statement's condition, if it has one. */
export interface Grant extends Permission {
  readonly condition?: unknown;
}

/** Everything a function's role allows, one action on one target at a time. */
export function grantedPermissions(template: CfnTemplate, functionLogicalId: string): Grant[] {
  const grants: Grant[] = [];
  for (const statement of roleStatements(template, functionLogicalId) as PolicyStatement[]) {
    if (statement.Effect !== 'Allow') continue;
    for (const value of resourcesOf(statement)) {
      const target = targetOf(template, value);
      if (target === undefined) throw new Error(`unreadable resource ${JSON.stringify(value)}`);
      for (const action of actionsOf(statement)) {
        grants.push({
          action,
          target,
          ...(statement.Condition === undefined ? {} : { condition: statement.Condition }),
        });
      }
    }
  }
  return grants;
}

/** The function's event source mappings, as the mapping module describes their needs (by logical id). */
export function eventSourcesOf(
  template: CfnTemplate,
  functionLogicalId: string,
): ({ kind: 'stream'; table: string; onFailureQueue?: string } | { kind: 'queue'; queue: string })[] {
  return idsOfType(template, 'AWS::Lambda::EventSourceMapping')
    .map((id) => propertiesOf(template, id))
    .filter((mapping) => references(mapping.FunctionName, functionLogicalId))
    .map((mapping) => {
      const target = targetOf(template, mapping.EventSourceArn);
      if (target?.kind === 'queue') return { kind: 'queue' as const, queue: target.name };
      if (target?.kind !== 'stream') throw new Error(`unknown event source ${JSON.stringify(mapping)}`);
      const destination = (mapping.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)
        ?.OnFailure?.Destination;
      const failure = destination === undefined ? undefined : targetOf(template, destination);
      return {
        kind: 'stream' as const,
        table: target.name,
        ...(failure?.kind === 'queue' ? { onFailureQueue: failure.name } : {}),
      };
    });
}

/** The logical id of the function's own log group. */
export function logGroupOf(template: CfnTemplate, functionLogicalId: string): string {
  const config = propertiesOf(template, functionLogicalId).LoggingConfig as
    | { LogGroup?: unknown }
    | undefined;
  const id = refTarget(config?.LogGroup);
  if (id === undefined) throw new Error(`function ${functionLogicalId} names no log group`);
  return id;
}
