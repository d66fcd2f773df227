import {
  type CloudFormationClient,
  DescribeStacksCommand,
  GetTemplateCommand,
  type Output,
  paginateListStackResources,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { ConfigError, describeError } from '../errors.ts';
import {
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_TOPICS_METADATA,
  OutboxResourceRole,
} from '../observability/resource-roles.ts';
import type { OrderingByTopic } from '../ordering/ordering.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { readSetting } from '../settings/setting.ts';
import { endpointProblem } from './stack-name.ts';

/** One resource of a deployed stack: what its template says and what CloudFormation created. */
export interface StackResource {
  readonly logicalId: string;
  readonly type: string;
  /** What `Ref` returns: a table's name, a queue's URL, a function's name. */
  readonly physicalId: string;
  /** The `serverless-outbox:role` metadata, when the construct wrote one. */
  readonly role?: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly properties: Readonly<Record<string, unknown>>;
}

/** An outbox as found in a stack: everything the operations core works on, by physical id. */
export interface DiscoveredOutbox {
  readonly stackName: string;
  readonly outboxTable: string;
  readonly auditTable: string;
  /** Topic → URL of its queue. */
  readonly topicQueues: Readonly<Record<string, string>>;
  /** Topic → URL of the dead-letter queue of its queue. */
  readonly deadLetterQueues: Readonly<Record<string, string>>;
  /** Topic → the consumer's inbox table. */
  readonly deliveryInboxes: Readonly<Record<string, string>>;
  /** The ordered topics (`ORDERED_TOPICS` of the relay or the sweeper); `{}` when none is. */
  readonly orderedTopics: OrderingByTopic;
  /** URL of the relay's on-failure queue, when the stack has one. */
  readonly failureQueue?: string;
  readonly dueShards: number;
  readonly retentionDays: number;
  /** Every resource of the stack, for health hooks. */
  readonly resources: readonly StackResource[];
  /** The stack's outputs (health hooks find the app's own resources there). */
  readonly outputs: Readonly<Record<string, string>>;
  /** What discovery had to assume (a setting the deployed template does not show). */
  readonly notes: readonly string[];
}

/** The stack could not be read, or holds no (or more than one) outbox. A configuration error: exit code 2. */
export class StackDiscoveryError extends ConfigError {
  readonly stackName: string;

  constructor(stackName: string, message: string, options?: { cause?: unknown }) {
    super(`stack ${stackName}: ${message}`, options);
    this.stackName = stackName;
  }
}

/** A template as GetTemplate returns it, parsed. */
export interface StackTemplate {
  readonly Resources?: Readonly<Record<string, unknown>>;
}

/**
 * The outbox of a deployed stack, found by the role metadata of its template (GetTemplate) and the physical
 * ids of its resources (ListStackResources), with its outputs (DescribeStacks) — never by names, which CloudFormation generates. Throws a
 * {@link StackDiscoveryError} when the stack does not exist, its template is not JSON, or it holds no outbox.
 * @example
 * const outbox = await discoverOutbox(new CloudFormationClient({}), 'OutboxExample');
 */
export async function discoverOutbox(
  client: CloudFormationClient,
  stackName: string,
  /** The emulator's endpoint (AWS_ENDPOINT_URL), named in the error when it cannot be read. */
  endpoint?: string,
): Promise<DiscoveredOutbox> {
  let body: string | undefined;
  const summaries: StackResourceSummary[] = [];
  const outputs: Record<string, string> = {};
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    Object.assign(outputs, outputsOf(Stacks?.[0]?.Outputs));
    body = (await client.send(new GetTemplateCommand({ StackName: stackName }))).TemplateBody;
    for await (const page of paginateListStackResources({ client }, { StackName: stackName })) {
      summaries.push(...(page.StackResourceSummaries ?? []));
    }
  } catch (cause) {
    throw unreadable(stackName, cause, endpoint);
  }
  let template: StackTemplate;
  try {
    template = JSON.parse(body ?? '') as StackTemplate;
  } catch (cause) {
    throw new StackDiscoveryError(stackName, 'its template is not JSON (a CDK stack is)', { cause });
  }
  return outboxOfStack({ stackName, template, summaries, outputs });
}

/**
 * The outputs of a deployed stack (DescribeStacks), by name. Throws a {@link StackDiscoveryError} when the
 * stack does not exist or cannot be read.
 * @example
 * const { apiUrl } = await readStackOutputs(new CloudFormationClient({}), 'OutboxExample');
 */
export async function readStackOutputs(
  client: CloudFormationClient,
  stackName: string,
): Promise<Readonly<Record<string, string>>> {
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    return outputsOf(Stacks?.[0]?.Outputs);
  } catch (cause) {
    throw unreadable(stackName, cause);
  }
}

/**
 * The outbox of a stack from its template and resource summaries (pure: the part of {@link discoverOutbox} that
 * reads no AWS API). Topic queues are matched to their topics by `serverless-outbox:topics`, dead-letter queues
 * to their topic queue by `serverless-outbox:source`, inbox tables to their topics; DUE_SHARDS and
 * RETENTION_DAYS come from the relay's or sweeper's environment in the template, or their defaults (noted).
 */
export function outboxOfStack(stack: {
  readonly stackName: string;
  readonly template: StackTemplate;
  readonly summaries: readonly StackResourceSummary[];
  readonly outputs?: Readonly<Record<string, string>>;
}): DiscoveredOutbox {
  const { stackName } = stack;
  const physical = new Map(
    stack.summaries.map((summary) => [summary.LogicalResourceId ?? '', summary.PhysicalResourceId ?? '']),
  );
  const resources: StackResource[] = Object.entries(stack.template.Resources ?? {}).map(
    ([logicalId, definition]) => {
      const resource = isRecord(definition) ? definition : {};
      const metadata = isRecord(resource.Metadata) ? resource.Metadata : {};
      const role = metadata[OUTBOX_ROLE_METADATA];
      return {
        logicalId,
        type: typeof resource.Type === 'string' ? resource.Type : '',
        physicalId: physical.get(logicalId) ?? '',
        ...(typeof role === 'string' ? { role } : {}),
        metadata,
        properties: isRecord(resource.Properties) ? resource.Properties : {},
      };
    },
  );
  const withRole = (role: OutboxResourceRole) => resources.filter((resource) => resource.role === role);
  const deployed = (resource: StackResource): string => {
    if (resource.physicalId === '') {
      throw new StackDiscoveryError(
        stackName,
        `${resource.logicalId} (${resource.role}) is in the template but not deployed (no physical id)`,
      );
    }
    return resource.physicalId;
  };
  const single = (role: OutboxResourceRole): StackResource => {
    const found = withRole(role);
    if (found.length === 0) {
      throw new StackDiscoveryError(
        stackName,
        resources.some((resource) => resource.role !== undefined)
          ? `has no resource with the ${role} role`
          : `has no outbox: no resource carries ${OUTBOX_ROLE_METADATA} metadata (is it a TransactionalOutbox stack, deployed with its template metadata?)`,
      );
    }
    const [first, second] = found;
    if (first === undefined || second !== undefined) {
      throw new StackDiscoveryError(
        stackName,
        `has ${found.length} resources with the ${role} role (${found.map((r) => r.logicalId).join(', ')}); the CLI works on a stack with one outbox`,
      );
    }
    return first;
  };

  const outboxTable = deployed(single(OutboxResourceRole.OUTBOX_TABLE));
  const auditTable = deployed(single(OutboxResourceRole.AUDIT_TABLE));
  const topicQueues: Record<string, string> = {};
  const topicsOfQueue = new Map<string, readonly string[]>();
  for (const queue of withRole(OutboxResourceRole.TOPIC_QUEUE)) {
    const topics = topicsOf(stackName, queue);
    topicsOfQueue.set(queue.logicalId, topics);
    for (const topic of topics) topicQueues[topic] = deployed(queue);
  }
  const deadLetterQueues: Record<string, string> = {};
  for (const queue of withRole(OutboxResourceRole.DEAD_LETTER_QUEUE)) {
    const source = queue.metadata[OUTBOX_SOURCE_METADATA];
    const topics = typeof source === 'string' ? topicsOfQueue.get(source) : undefined;
    if (topics === undefined) {
      throw new StackDiscoveryError(
        stackName,
        `dead-letter queue ${queue.logicalId} names no topic queue of the stack as its ${OUTBOX_SOURCE_METADATA} (${String(source)})`,
      );
    }
    for (const topic of topics) deadLetterQueues[topic] = deployed(queue);
  }
  const deliveryInboxes: Record<string, string> = {};
  for (const table of withRole(OutboxResourceRole.INBOX_TABLE)) {
    for (const topic of topicsOf(stackName, table)) deliveryInboxes[topic] = deployed(table);
  }
  const failureQueue = withRole(OutboxResourceRole.FAILURE_QUEUE)[0];
  const { dueShards, retentionDays, orderedTopics, notes } = outboxSettingsOf(resources);
  return {
    stackName,
    outboxTable,
    auditTable,
    topicQueues,
    deadLetterQueues,
    deliveryInboxes,
    orderedTopics,
    ...(failureQueue === undefined || failureQueue.physicalId === ''
      ? {}
      : { failureQueue: failureQueue.physicalId }),
    dueShards,
    retentionDays,
    resources,
    outputs: stack.outputs ?? {},
    notes,
  };
}

/** A stack's outputs by name. */
function outputsOf(outputs: readonly Output[] | undefined): Record<string, string> {
  const byName: Record<string, string> = {};
  for (const output of outputs ?? []) {
    if (output.OutputKey !== undefined && output.OutputValue !== undefined)
      byName[output.OutputKey] = output.OutputValue;
  }
  return byName;
}

/** The error for a stack CloudFormation would not describe: not found, unreachable, or another failure. */
function unreadable(stackName: string, cause: unknown, endpoint?: string): StackDiscoveryError {
  const missing = /does not exist/i.test(describeError(cause));
  return new StackDiscoveryError(
    stackName,
    missing
      ? 'not found (check --stack, the region and AWS_ENDPOINT_URL)'
      : `cannot be read: ${endpoint === undefined ? describeError(cause) : endpointProblem(endpoint, cause)}`,
    { cause },
  );
}

function topicsOf(stackName: string, resource: StackResource): string[] {
  const topics = resource.metadata[OUTBOX_TOPICS_METADATA];
  if (!Array.isArray(topics) || !topics.every((topic) => typeof topic === 'string')) {
    throw new StackDiscoveryError(
      stackName,
      `${resource.logicalId} (${resource.role}) has no ${OUTBOX_TOPICS_METADATA} metadata listing its topics`,
    );
  }
  return topics;
}

/**
 * DUE_SHARDS, RETENTION_DAYS and ORDERED_TOPICS as the relay and the sweeper get them (literal values of their
 * environment in the template). A template without them (an emulator's copy may drop function environments) gets the defaults,
 * and a note says so: listing with another shard count than the writers' would miss messages.
 */
function outboxSettingsOf(resources: readonly StackResource[]): {
  dueShards: number;
  retentionDays: number;
  orderedTopics: OrderingByTopic;
  notes: string[];
} {
  const functions = resources.filter(
    (resource) => resource.role === OutboxResourceRole.SWEEPER || resource.role === OutboxResourceRole.RELAY,
  );
  const literal = (name: string): string | undefined => {
    for (const fn of functions) {
      const environment = fn.properties.Environment;
      const variables = isRecord(environment) ? environment.Variables : undefined;
      const value = isRecord(variables) ? variables[name] : undefined;
      if (typeof value === 'string') return value;
    }
    return undefined;
  };
  const env = {
    [OutboxSettings.dueShards.name]: literal(OutboxSettings.dueShards.name),
    [OutboxSettings.retentionDays.name]: literal(OutboxSettings.retentionDays.name),
  };
  const notes = Object.entries(env)
    .filter(([, value]) => value === undefined)
    .map(([name]) => `${name} is not in the deployed template: assuming the default`);
  // ORDERED_TOPICS is absent where no topic is ordered: its default, none, is then right.
  const ordered = literal(OutboxSettings.orderedTopics.name);
  return {
    dueShards: readSetting(env, OutboxSettings.dueShards),
    retentionDays: readSetting(env, OutboxSettings.retentionDays),
    orderedTopics: readSetting(
      ordered === undefined ? {} : { [OutboxSettings.orderedTopics.name]: ordered },
      OutboxSettings.orderedTopics,
    ),
    notes,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
