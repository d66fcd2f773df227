/**
 * CloudFormation for the embedded backend: creates each `AWS::DynamoDB::Table` (or `GlobalTable`) and
 * `AWS::SQS::Queue` of a template on the in-memory services, in dependency order and with CloudFormation's
 * names; records every other resource with the `Ref` and attributes CloudFormation would give it; evaluates
 * the outputs. A second deploy of a stack updates it in place: tables and queues keep their data, indexes,
 * streams and queue attributes follow the template, and resources that left it go by their DeletionPolicy.
 * Stacks of one app share values as CloudFormation's exports: an output's `Export.Name` is exported (unique
 * across the backend's stacks), and `Fn::ImportValue` in a stack deployed later reads it.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { StreamViewType } from '@aws-sdk/client-dynamodb';
import { LocalRuntimeError } from '../../local-runtime-error.ts';
import {
  type CloudFormationTemplate,
  isRecord,
  referencedLogicalIds,
  type TemplateResource,
} from '../../template/cloudformation-template.ts';
import { type ResolutionContext, resolveString, resolveValue } from '../../template/intrinsics.ts';
import type { DeployedResource, DeployedStack } from '../backend.ts';
import { type ArnScope, generatedName, NAME_PROPERTIES, recordedResource } from './physical-ids.ts';
import type { QueueCatalog } from './queue-catalog.ts';
import type { IndexDefinition, TableCatalog, TableDefinition } from './table-catalog.ts';

/** Options of {@link StackDeployer}. */
export interface StackDeployerOptions extends ArnScope {
  readonly tables: TableCatalog;
  readonly queues: QueueCatalog;
  readonly log: (line: string) => void;
}

const TABLE_TYPES = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable']);
const QUEUE_TYPE = 'AWS::SQS::Queue';

/** Queue properties of `AWS::SQS::Queue` that are SQS queue attributes of the same name. */
const QUEUE_ATTRIBUTES = [
  'DelaySeconds',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'VisibilityTimeout',
  'RedrivePolicy',
  'RedriveAllowPolicy',
  'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds',
  'SqsManagedSseEnabled',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

/** What SetQueueAttributes puts back when a template no longer sets an attribute. */
const QUEUE_DEFAULTS: Readonly<Record<string, string>> = {
  DelaySeconds: '0',
  MaximumMessageSize: '1048576',
  MessageRetentionPeriod: '345600',
  ReceiveMessageWaitTimeSeconds: '0',
  VisibilityTimeout: '30',
  RedrivePolicy: '',
};

/** A resource of a deployed stack, with what an update compares. */
export interface StackResource extends DeployedResource {
  readonly attributes: Readonly<Record<string, string>>;
  /** What decides whether an update replaces the resource (its name and key schema). */
  readonly identity: string;
  readonly deletionPolicy: string | undefined;
}

/** One resource being deployed, with what deploying it needs. */
interface Deployment {
  readonly resource: TemplateResource;
  readonly before: StackResource | undefined;
  readonly context: ResolutionContext;
  readonly base: Pick<StackResource, 'logicalId' | 'type' | 'deletionPolicy'>;
  /** What happens to the old table or queue when a change replaces it. */
  readonly replacementPolicy: string;
  /** The resource's properties with every intrinsic resolved. */
  readonly properties: () => Record<string, unknown>;
  readonly generatedName: (suffix?: string) => string;
}

/** A deployed stack as the deployer keeps it (what a copy on disk holds). */
export interface StackRecord {
  readonly stackId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly template: CloudFormationTemplate;
  readonly resources: ReadonlyMap<string, StackResource>;
  readonly outputs: Readonly<Record<string, string>>;
  /**
   * Output name → the name it is exported under (its `Export.Name`). Absent from a stack kept on disk before
   * the deployer kept exports: it exports nothing until its next deploy.
   */
  readonly exports?: Readonly<Record<string, string>>;
}

/** A deployed stack as the embedded CloudFormation API reports it. */
export interface DeployedStackSummary {
  readonly stackName: string;
  readonly stackId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly template: CloudFormationTemplate;
  readonly outputs: Readonly<Record<string, string>>;
  /** Output name → its export name, for the outputs the stack exports. */
  readonly exports: Readonly<Record<string, string>>;
  readonly resources: readonly {
    readonly logicalId: string;
    readonly type: string;
    readonly physicalId: string;
  }[];
}

/** Deploys templates onto the embedded backend's tables and queues. */
export class StackDeployer {
  readonly #options: StackDeployerOptions;
  readonly #stacks = new Map<string, StackRecord>();

  constructor(options: StackDeployerOptions) {
    this.#options = options;
  }

  /**
   * Creates the stack, updates it in place, or keeps it when the template is unchanged; throws
   * `LocalRuntimeError` `DEPLOY_FAILED` naming the resource that could not be created.
   */
  deploy(template: CloudFormationTemplate, stackName: string): DeployedStack {
    const previous = this.#stacks.get(stackName);
    if (previous !== undefined && isDeepStrictEqual(previous.template, template)) {
      return this.#deployed(stackName, previous, 'unchanged');
    }
    const stackId =
      previous?.stackId ??
      `arn:aws:cloudformation:${this.#options.region}:${this.#options.accountId}:stack/${stackName}/${randomUUID()}`;
    const resources = new Map<string, StackResource>();
    const context: ResolutionContext = {
      region: this.#options.region,
      accountId: this.#options.accountId,
      stackName,
      stackId,
      resources,
      parameters: parameterValues(template),
      ...(isRecord(template.Mappings) ? { mappings: template.Mappings } : {}),
      exports: new Map([...this.#exported(stackName)].map(([name, { value }]) => [name, value])),
    };
    const conditions = conditionEvaluator(template, context);
    // Roll back as CloudFormation does: what this deploy created goes; the stack stays as it was.
    const rollBack = (): void => {
      for (const [id, created] of resources) {
        if (created.physicalId !== previous?.resources.get(id)?.physicalId) this.#remove(created, 'Delete');
      }
    };
    const included = Object.entries(template.Resources).filter(
      ([, resource]) => typeof resource.Condition !== 'string' || conditions(resource.Condition),
    );
    for (const logicalId of dependencyOrder(new Map(included))) {
      const resource = template.Resources[logicalId];
      if (resource === undefined) continue;
      const before = previous?.resources.get(logicalId);
      try {
        const deployed = this.#deployResource({
          logicalId,
          resource: { ...resource, Properties: applyConditions(resource.Properties ?? {}, conditions) },
          before,
          context,
        });
        resources.set(logicalId, deployed);
      } catch (cause) {
        rollBack();
        throw new LocalRuntimeError(
          'DEPLOY_FAILED',
          `stack ${stackName}: ${logicalId} (${resource.Type}) could not be created on the embedded backend: ${describe(cause)}`,
          { cause },
        );
      }
    }
    const outputs: Record<string, string> = {};
    const exports: Record<string, string> = {};
    for (const [name, output] of Object.entries(template.Outputs ?? {})) {
      if (!isRecord(output) || output.Value === undefined) continue;
      if (typeof output.Condition === 'string' && !conditions(output.Condition)) continue;
      try {
        outputs[name] = resolveString(applyConditions(output.Value, conditions), context, `output ${name}`);
        if (isRecord(output.Export) && output.Export.Name !== undefined) {
          exports[name] = resolveString(output.Export.Name, context, `output ${name}, export name`);
        }
      } catch (error) {
        this.#options.log(`[embedded] output ${name} of ${stackName} is left out: ${describe(error)}`);
        delete outputs[name];
      }
    }
    const taken = this.#exported(stackName);
    const clash = Object.values(exports).find((name) => taken.has(name));
    if (clash !== undefined) {
      rollBack();
      throw new LocalRuntimeError(
        'DEPLOY_FAILED',
        `stack ${stackName}: export ${clash} is already exported by stack ${taken.get(clash)?.stackName} ` +
          '(export names are unique across the stacks of a region)',
      );
    }
    for (const [logicalId, old] of previous?.resources ?? []) {
      if (!resources.has(logicalId)) this.#remove(old, old.deletionPolicy);
    }
    const now = new Date();
    const record: StackRecord = {
      stackId,
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
      template: structuredClone(template),
      resources,
      outputs,
      exports,
    };
    this.#stacks.set(stackName, record);
    return this.#deployed(stackName, record, previous === undefined ? 'created' : 'updated');
  }

  /** Every stack's record, for a copy kept on disk. */
  exportStacks(): { readonly stackName: string; readonly record: StackRecord }[] {
    return [...this.#stacks].map(([stackName, record]) => ({ stackName, record }));
  }

  /** Puts stacks back as exported (their tables and queues restored already). */
  restoreStacks(stacks: readonly { readonly stackName: string; readonly record: StackRecord }[]): void {
    for (const { stackName, record } of stacks) {
      this.#stacks.set(stackName, {
        ...record,
        createdAt: new Date(record.createdAt),
        updatedAt: new Date(record.updatedAt),
        resources: new Map(
          (record.resources instanceof Map ? [...record.resources] : Object.entries(record.resources)) as [
            string,
            StackResource,
          ][],
        ),
      });
    }
  }

  /** The stacks deployed so far, in name order, as CloudFormation's DescribeStacks reports them. */
  stacks(): DeployedStackSummary[] {
    return [...this.#stacks.keys()].sort().map((stackName) => this.stack(stackName));
  }

  /** One stack by name or stack id; throws when there is none (check with {@link has}). */
  stack(nameOrId: string): DeployedStackSummary {
    const found = [...this.#stacks].find(
      ([stackName, record]) => stackName === nameOrId || record.stackId === nameOrId,
    );
    if (found === undefined) {
      throw new LocalRuntimeError('DEPLOY_FAILED', `Stack with id ${nameOrId} does not exist`);
    }
    const [stackName, record] = found;
    return {
      stackName,
      stackId: record.stackId,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      template: record.template,
      outputs: { ...record.outputs },
      exports: { ...record.exports },
      resources: [...record.resources.values()].map(({ logicalId, type, physicalId }) => ({
        logicalId,
        type,
        physicalId,
      })),
    };
  }

  /** Every export of the deployed stacks, in stack order: name, value and the stack that exports it. */
  exportList(): {
    readonly name: string;
    readonly value: string;
    readonly stackName: string;
    readonly stackId: string;
  }[] {
    return [...this.#exported()].map(([name, { value, stackName }]) => ({
      name,
      value,
      stackName,
      stackId: this.#stacks.get(stackName)?.stackId ?? '',
    }));
  }

  /** Export name → its value and the stack exporting it, over every stack but `except` (the one being deployed). */
  #exported(except?: string): Map<string, { readonly value: string; readonly stackName: string }> {
    const exported = new Map<string, { readonly value: string; readonly stackName: string }>();
    for (const [stackName, record] of this.#stacks) {
      if (stackName === except) continue;
      for (const [output, name] of Object.entries(record.exports ?? {})) {
        const value = record.outputs[output];
        if (value !== undefined) exported.set(name, { value, stackName });
      }
    }
    return exported;
  }

  /** Whether a stack of this name (or id) is deployed. */
  has(nameOrId: string): boolean {
    return [...this.#stacks].some(
      ([stackName, record]) => stackName === nameOrId || record.stackId === nameOrId,
    );
  }

  #deployResource(request: {
    readonly logicalId: string;
    readonly resource: TemplateResource;
    readonly before: StackResource | undefined;
    readonly context: ResolutionContext;
  }): StackResource {
    const { logicalId, resource } = request;
    // A resource whose type changed is a new resource: the old one goes first.
    const before = request.before?.type === resource.Type ? request.before : undefined;
    if (request.before !== undefined && before === undefined) this.#remove(request.before, 'Delete');
    const deployment: Deployment = {
      ...request,
      before,
      base: {
        logicalId,
        type: resource.Type,
        deletionPolicy: typeof resource.DeletionPolicy === 'string' ? resource.DeletionPolicy : undefined,
      },
      replacementPolicy:
        typeof resource.UpdateReplacePolicy === 'string' ? resource.UpdateReplacePolicy : 'Delete',
      properties: () =>
        (resolveValue(resource.Properties ?? {}, request.context, `${logicalId}.Properties`) ?? {}) as Record<
          string,
          unknown
        >,
      generatedName: (suffix) =>
        generatedName({
          stackName: request.context.stackName,
          logicalId,
          type: resource.Type,
          ...(suffix === undefined ? {} : { suffix }),
        }),
    };
    if (TABLE_TYPES.has(resource.Type)) return this.#deployTable(deployment);
    if (resource.Type === QUEUE_TYPE) return this.#deployQueue(deployment);
    return this.#record(deployment);
  }

  /** Creates a table, updates it in place, or replaces it when its name or key schema changed. */
  #deployTable(deployment: Deployment): StackResource {
    const { before, base } = deployment;
    const properties = deployment.properties();
    const explicit = typeof properties.TableName === 'string' ? properties.TableName : undefined;
    const identity = JSON.stringify([explicit ?? 'generated', properties.KeySchema ?? []]);
    const kept = before !== undefined && before.identity === identity;
    if (before !== undefined && !kept && explicit !== undefined && explicit === before.physicalId) {
      throw new Error(
        `table ${explicit} needs replacing (its key schema changed), which CloudFormation refuses for a named table: rename it`,
      );
    }
    const tableName = kept ? before.physicalId : (explicit ?? deployment.generatedName());
    const definition = tableDefinition(properties, tableName);
    if (kept) {
      this.#options.tables.update(definition);
    } else {
      this.#options.tables.create(definition);
      if (before !== undefined) this.#remove(before, deployment.replacementPolicy);
    }
    return { ...base, physicalId: tableName, identity, attributes: this.#tableAttributes(tableName) };
  }

  /** Creates a queue, updates its attributes in place, or replaces it when its name or kind changed. */
  #deployQueue(deployment: Deployment): StackResource {
    const { before, base } = deployment;
    const properties = deployment.properties();
    const fifo = properties.FifoQueue === true || properties.FifoQueue === 'true';
    const explicit = typeof properties.QueueName === 'string' ? properties.QueueName : undefined;
    const identity = explicit ?? `generated:${fifo}`;
    const attributes = queueAttributes(properties, fifo);
    let url: string;
    if (before !== undefined && before.identity === identity) {
      url = before.physicalId;
      // Attributes the template no longer sets go back to SQS's defaults, as CloudFormation resets them.
      this.#options.queues.setAttributes(url, { ...QUEUE_DEFAULTS, ...attributes });
    } else {
      url = this.#options.queues.create(
        explicit ?? deployment.generatedName(fifo ? '.fifo' : undefined),
        attributes,
      );
      if (before !== undefined) this.#remove(before, deployment.replacementPolicy);
    }
    const entry = this.#options.queues.entry(url);
    return {
      ...base,
      physicalId: url,
      identity,
      attributes: { Arn: entry.arn, QueueName: entry.name, QueueUrl: url },
    };
  }

  /**
   * Records a resource the embedded backend does not create. It needs no more than the resource's name: its
   * other properties may refer to what the backend cannot tell (a custom resource's attributes), which must
   * not fail the deploy.
   */
  #record(deployment: Deployment): StackResource {
    const { before, base, resource, context } = deployment;
    const nameProperty = NAME_PROPERTIES[resource.Type];
    const name =
      nameProperty === undefined ? undefined : resolvedName(resource.Properties?.[nameProperty], context);
    const identity = String(name);
    if (before !== undefined && before.identity === identity)
      return { ...before, deletionPolicy: base.deletionPolicy };
    const recorded = recordedResource(
      {
        stackName: context.stackName,
        logicalId: base.logicalId,
        type: resource.Type,
        ...(name === undefined ? {} : { name }),
      },
      this.#options,
    );
    return { ...base, ...recorded, identity };
  }

  #tableAttributes(tableName: string): Record<string, string> {
    const description = this.#options.tables.describe(tableName);
    const stream = description.LatestStreamArn;
    const streamOn = isRecord(description.StreamSpecification);
    return {
      Arn: String(description.TableArn),
      TableId: String(description.TableId),
      ...(streamOn && typeof stream === 'string' ? { StreamArn: stream } : {}),
    };
  }

  /** Takes a resource out of the stack: its table or queue is deleted unless its policy retains it. */
  #remove(resource: StackResource, policy: string | undefined): void {
    const retained = policy === 'Retain' || policy === 'RetainExceptOnCreate' || policy === 'Snapshot';
    const data = TABLE_TYPES.has(resource.type) || resource.type === QUEUE_TYPE;
    if (!data) return;
    if (retained) {
      this.#options.log(
        `[embedded] ${resource.logicalId} left the stack; ${resource.physicalId} is kept (${policy})`,
      );
      return;
    }
    if (TABLE_TYPES.has(resource.type)) {
      if (this.#options.tables.has(resource.physicalId)) this.#options.tables.delete(resource.physicalId);
    } else {
      this.#options.queues.delete(resource.physicalId);
    }
    this.#options.log(`[embedded] ${resource.logicalId} left the stack; ${resource.physicalId} is deleted`);
  }

  #deployed(stackName: string, record: StackRecord, change: DeployedStack['change']): DeployedStack {
    return {
      stackName,
      region: this.#options.region,
      accountId: this.#options.accountId,
      stackId: record.stackId,
      resources: new Map(
        [...record.resources].map(([logicalId, { type, physicalId, attributes }]) => [
          logicalId,
          {
            logicalId,
            type,
            physicalId,
            attributes: this.#freshAttributes({ type, physicalId, attributes }),
          },
        ]),
      ),
      outputs: { ...record.outputs },
      ...(change === undefined ? {} : { change }),
    };
  }

  /** A table's attributes as they are now (its stream may have been turned on since). */
  #freshAttributes(
    resource: Pick<StackResource, 'type' | 'physicalId' | 'attributes'>,
  ): Readonly<Record<string, string>> {
    if (TABLE_TYPES.has(resource.type) && this.#options.tables.has(resource.physicalId)) {
      return this.#tableAttributes(resource.physicalId);
    }
    return resource.attributes;
  }
}

function resolvedName(value: unknown, context: ResolutionContext): string | undefined {
  if (value === undefined) return undefined;
  try {
    const name = resolveValue(value, context, 'a resource name');
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The table definition an `AWS::DynamoDB::Table` or `GlobalTable`'s properties describe. */
function tableDefinition(properties: Record<string, unknown>, tableName: string): TableDefinition {
  const stream = properties.StreamSpecification;
  const viewType =
    isRecord(stream) && typeof stream.StreamViewType === 'string' ? stream.StreamViewType : undefined;
  const ttl = properties.TimeToLiveSpecification;
  const indexes = (value: unknown): IndexDefinition[] | undefined =>
    Array.isArray(value)
      ? value.map((index) => ({
          IndexName: String(index.IndexName),
          KeySchema: index.KeySchema,
          ...(isRecord(index.Projection) ? { Projection: index.Projection } : {}),
        }))
      : undefined;
  const sse = properties.SSESpecification;
  const kmsKey =
    isRecord(sse) &&
    (sse.SSEEnabled === true || sse.SSEEnabled === 'true') &&
    typeof sse.KMSMasterKeyId === 'string'
      ? sse.KMSMasterKeyId
      : undefined;
  const globals = indexes(properties.GlobalSecondaryIndexes);
  const locals = indexes(properties.LocalSecondaryIndexes);
  return {
    TableName: tableName,
    AttributeDefinitions: (properties.AttributeDefinitions ?? []) as TableDefinition['AttributeDefinitions'],
    KeySchema: (properties.KeySchema ?? []) as TableDefinition['KeySchema'],
    ...(globals === undefined ? {} : { GlobalSecondaryIndexes: globals }),
    ...(locals === undefined ? {} : { LocalSecondaryIndexes: locals }),
    // CloudFormation has no StreamEnabled: a StreamSpecification turns the stream on.
    ...(viewType === undefined ? {} : { StreamViewType: viewType as StreamViewType }),
    ...(isRecord(ttl) && typeof ttl.AttributeName === 'string'
      ? {
          TimeToLive: {
            AttributeName: ttl.AttributeName,
            Enabled: ttl.Enabled === true || ttl.Enabled === 'true',
          },
        }
      : {}),
    ...(typeof properties.BillingMode === 'string' ? { BillingMode: properties.BillingMode } : {}),
    ...(properties.DeletionProtectionEnabled === true ? { DeletionProtectionEnabled: true } : {}),
    ...(kmsKey === undefined ? {} : { KmsMasterKeyId: kmsKey }),
  };
}

/** The SQS attributes an `AWS::SQS::Queue`'s properties set, as the strings SQS takes. */
function queueAttributes(properties: Record<string, unknown>, fifo: boolean): Record<string, string> {
  const attributes: Record<string, string> = fifo ? { FifoQueue: 'true' } : {};
  for (const name of QUEUE_ATTRIBUTES) {
    const value = properties[name];
    if (value === undefined || value === null) continue;
    attributes[name] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return attributes;
}

/** Parameter values: each parameter's default (a local run passes none). */
function parameterValues(template: CloudFormationTemplate): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, parameter] of Object.entries(template.Parameters ?? {})) {
    const value = isRecord(parameter) ? parameter.Default : undefined;
    if (typeof value === 'string' || typeof value === 'number') values[name] = String(value);
  }
  return values;
}

/** Evaluates the template's `Conditions` (Fn::Equals, Fn::Not, Fn::And, Fn::Or, Condition). */
function conditionEvaluator(
  template: CloudFormationTemplate,
  context: ResolutionContext,
): (name: string) => boolean {
  const definitions = isRecord(template.Conditions) ? template.Conditions : {};
  const cache = new Map<string, boolean>();
  const evaluate = (node: unknown): boolean => {
    if (!isRecord(node)) return node === true || node === 'true';
    if (typeof node.Condition === 'string') return byName(node.Condition);
    const [operator, argument] = Object.entries(node)[0] ?? [];
    const operands = Array.isArray(argument) ? argument : [];
    switch (operator) {
      case 'Fn::Equals':
        return isDeepStrictEqual(
          resolveValue(operands[0], context, 'a condition'),
          resolveValue(operands[1], context, 'a condition'),
        );
      case 'Fn::Not':
        return !evaluate(operands[0]);
      case 'Fn::And':
        return operands.every(evaluate);
      case 'Fn::Or':
        return operands.some(evaluate);
      default:
        throw new LocalRuntimeError(
          'UNSUPPORTED_TEMPLATE',
          `condition function ${String(operator)} is not supported`,
        );
    }
  };
  const byName = (name: string): boolean => {
    const known = cache.get(name);
    if (known !== undefined) return known;
    if (!(name in definitions))
      throw new LocalRuntimeError('UNSUPPORTED_TEMPLATE', `no condition named ${name}`);
    const value = evaluate(definitions[name]);
    cache.set(name, value);
    return value;
  };
  return byName;
}

/** `node` with each `Fn::If` replaced by the branch its condition picks. */
function applyConditions<T>(node: T, conditions: (name: string) => boolean): T {
  if (Array.isArray(node)) return node.map((item) => applyConditions(item, conditions)) as T;
  if (!isRecord(node)) return node;
  const branch = node['Fn::If'];
  if (Array.isArray(branch) && Object.keys(node).length === 1) {
    const [name, whenTrue, whenFalse] = branch;
    return applyConditions((conditions(String(name)) ? whenTrue : whenFalse) as T, conditions);
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, applyConditions(value, conditions)]),
  ) as T;
}

/** Logical ids in an order where each resource comes after the resources it refers to or depends on. */
function dependencyOrder(resources: ReadonlyMap<string, TemplateResource>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (logicalId: string, path: readonly string[]): void => {
    const seen = state.get(logicalId);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      throw new LocalRuntimeError(
        'DEPLOY_FAILED',
        `circular dependency between resources: ${[...path, logicalId].join(' → ')}`,
      );
    }
    const resource = resources.get(logicalId);
    if (resource === undefined) return;
    state.set(logicalId, 'visiting');
    const dependsOn = resource.DependsOn === undefined ? [] : [resource.DependsOn].flat();
    for (const dependency of [...dependsOn, ...referencedLogicalIds(resource.Properties ?? {})]) {
      if (dependency !== logicalId) visit(dependency, [...path, logicalId]);
    }
    state.set(logicalId, 'done');
    order.push(logicalId);
  };
  for (const logicalId of resources.keys()) visit(logicalId, []);
  return order;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
