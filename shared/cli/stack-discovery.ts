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
  OUTBOX_NAME_METADATA,
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_TOPICS_METADATA,
  OutboxResourceRole,
} from '../observability/resource-roles.ts';
import type { OrderingByTopic } from '../ordering/ordering.ts';
import type { Subscriptions } from '../outbox/subscriptions.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { readSetting } from '../settings/setting.ts';
import { endpointProblem } from './stack-name.ts';
import { type TemplateContext, templateText } from './template-values.ts';

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
  /**
   * Who receives which topic (`SUBSCRIPTIONS` of the relay or the sweeper); `{}` when no topic has subscribers. The
   * queue URLs are what the template resolves to (a part it cannot resolve reads `?`): the operator tools use only
   * the topics and subscriber names.
   */
  readonly subscriptions: Subscriptions;
  /** The outbox's name (`serverless-outbox:outbox` on its table), when the template names it. */
  readonly outboxName?: string;
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

/**
 * A subscriber's own stack, as found by its template metadata: its queue (role `subscriber-queue`) and that queue's
 * dead-letter queue, its inbox, and the audit table that journals a redrive. It holds no outbox: the deliveries'
 * statuses, and their replay, are the producer's.
 */
export interface DiscoveredSubscriber {
  readonly stackName: string;
  /** The subscriber's name (`serverless-outbox:subscriber` of its queue). */
  readonly subscriber: string;
  /** The producers' outboxes its queues receive from (`serverless-outbox:outbox`), as named there. */
  readonly outboxes: readonly string[];
  /** Topic → URL of the subscriber's queue that receives it. */
  readonly topicQueues: Readonly<Record<string, string>>;
  /** Topic → URL of that queue's dead-letter queue. */
  readonly deadLetterQueues: Readonly<Record<string, string>>;
  /** Topic → the subscriber's inbox table. */
  readonly inboxTables: Readonly<Record<string, string>>;
  /** The stack's audit table (the redrive journal); absent when the stack has none. */
  readonly auditTable?: string;
  readonly resources: readonly StackResource[];
  readonly outputs: Readonly<Record<string, string>>;
  readonly notes: readonly string[];
}

/** What a stack is to the operator tools: a producer's, with its outbox, or a subscriber's own. */
export type DiscoveredStack =
  | { readonly kind: 'outbox'; readonly outbox: DiscoveredOutbox }
  | { readonly kind: 'subscriber'; readonly subscriber: DiscoveredSubscriber };

/** What a template shows a stack to be, from its role metadata alone (no resource is looked up). */
export type StackKind =
  | { readonly kind: 'outbox'; readonly outboxName?: string }
  | { readonly kind: 'subscriber'; readonly subscriber: string; readonly outboxes: readonly string[] }
  | { readonly kind: 'other' };

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
 * What a deployed stack holds, found by the role metadata of its template (GetTemplate) and the physical ids of its
 * resources (ListStackResources), with its outputs (DescribeStacks) — never by names, which CloudFormation
 * generates: a producer's outbox, or a subscriber's queue, dead letters and inbox. Throws a
 * {@link StackDiscoveryError} when the stack does not exist, its template is not JSON, or it holds neither.
 * @example
 * const stack = await discoverStack(new CloudFormationClient({}), 'OutboxInventory');
 */
export async function discoverStack(
  client: CloudFormationClient,
  stackName: string,
  /** The emulator's endpoint (AWS_ENDPOINT_URL), named in the error when it cannot be read. */
  endpoint?: string,
): Promise<DiscoveredStack> {
  let body: string | undefined;
  let stackId: string | undefined;
  const summaries: StackResourceSummary[] = [];
  const outputs: Record<string, string> = {};
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    Object.assign(outputs, outputsOf(Stacks?.[0]?.Outputs));
    stackId = Stacks?.[0]?.StackId;
    body = (await client.send(new GetTemplateCommand({ StackName: stackName }))).TemplateBody;
    for await (const page of paginateListStackResources({ client }, { StackName: stackName })) {
      summaries.push(...(page.StackResourceSummaries ?? []));
    }
  } catch (cause) {
    throw unreadable(stackName, cause, endpoint);
  }
  const template = parseTemplate(stackName, body);
  return stackOfTemplate({
    stackName,
    template,
    summaries,
    outputs,
    ...(stackId === undefined ? {} : { stackId }),
  });
}

/**
 * The outbox of a deployed stack (see {@link discoverStack}). Throws a {@link StackDiscoveryError} when the stack
 * does not exist, its template is not JSON, or it holds no outbox.
 * @example
 * const outbox = await discoverOutbox(new CloudFormationClient({}), 'OutboxExample');
 */
export async function discoverOutbox(
  client: CloudFormationClient,
  stackName: string,
  /** The emulator's endpoint (AWS_ENDPOINT_URL), named in the error when it cannot be read. */
  endpoint?: string,
): Promise<DiscoveredOutbox> {
  const stack = await discoverStack(client, stackName, endpoint);
  if (stack.kind === 'outbox') return stack.outbox;
  throw new StackDiscoveryError(
    stackName,
    `is subscriber ${stack.subscriber.subscriber}'s own stack: it holds no outbox`,
  );
}

/**
 * What a stack is, from its template alone (GetTemplate): what the CLI reads of each stack of an emulator to find
 * the one holding an outbox. A stack that cannot be read, or whose template is not JSON, is `other`.
 */
export async function readStackKind(client: CloudFormationClient, stackName: string): Promise<StackKind> {
  try {
    const body = (await client.send(new GetTemplateCommand({ StackName: stackName }))).TemplateBody;
    return stackKindOf(JSON.parse(body ?? '') as StackTemplate);
  } catch {
    return { kind: 'other' };
  }
}

/** What a template shows a stack to be: a producer's (an outbox table), a subscriber's (its queue), or neither. */
export function stackKindOf(template: StackTemplate): StackKind {
  const marked = Object.values(template.Resources ?? {}).flatMap((definition) => {
    const metadata = isRecord(definition) && isRecord(definition.Metadata) ? definition.Metadata : {};
    return typeof metadata[OUTBOX_ROLE_METADATA] === 'string' ? [metadata] : [];
  });
  const table = marked.find((metadata) => metadata[OUTBOX_ROLE_METADATA] === OutboxResourceRole.OUTBOX_TABLE);
  if (table !== undefined) {
    const name = table[OUTBOX_NAME_METADATA];
    return { kind: 'outbox', ...(typeof name === 'string' ? { outboxName: name } : {}) };
  }
  const queues = marked.filter(
    (metadata) => metadata[OUTBOX_ROLE_METADATA] === OutboxResourceRole.SUBSCRIBER_QUEUE,
  );
  const [queue] = queues;
  if (queue === undefined) return { kind: 'other' };
  return {
    kind: 'subscriber',
    subscriber: String(queue[OUTBOX_SUBSCRIBER_METADATA] ?? '?'),
    outboxes: [...new Set(queues.flatMap((metadata) => textOf(metadata[OUTBOX_NAME_METADATA]) ?? []))],
  };
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

/** A deployed stack as the pure discovery reads it: its template, its resources' physical ids and its outputs. */
export interface StackSnapshot {
  readonly stackName: string;
  readonly template: StackTemplate;
  readonly summaries: readonly StackResourceSummary[];
  readonly outputs?: Readonly<Record<string, string>>;
  /** The stack's ARN, which names the region and account pseudo parameters resolve to. */
  readonly stackId?: string;
}

/**
 * What a stack holds, from its template and resource summaries (pure: the part of {@link discoverStack} that reads
 * no AWS API): the outbox of a stack with an outbox table ({@link outboxOfStack}), or else the subscriber of a stack
 * with a subscriber's queue ({@link subscriberOfStack}). Throws a {@link StackDiscoveryError} for a stack with
 * neither.
 */
export function stackOfTemplate(stack: StackSnapshot): DiscoveredStack {
  const kind = stackKindOf(stack.template);
  if (kind.kind === 'subscriber') return { kind: 'subscriber', subscriber: subscriberOfStack(stack) };
  return { kind: 'outbox', outbox: outboxOfStack(stack) };
}

/**
 * The outbox of a stack from its template and resource summaries (pure). Topic queues are matched to their topics
 * by `serverless-outbox:topics`, dead-letter queues to their topic queue by `serverless-outbox:source`, inbox
 * tables to their topics; DUE_SHARDS, RETENTION_DAYS, ORDERED_TOPICS and SUBSCRIPTIONS come from the relay's or
 * sweeper's environment in the template, or their defaults (noted). A subscriber's queue in the stack is not one of
 * the outbox's topic queues.
 */
export function outboxOfStack(stack: StackSnapshot): DiscoveredOutbox {
  const { stackName } = stack;
  const { resources, withRole, deployed, single } = readResources(stack);
  const outboxTableResource = single(OutboxResourceRole.OUTBOX_TABLE);
  const outboxTable = deployed(outboxTableResource);
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
  const context: TemplateContext = {
    stackName,
    physicalIds: new Map(resources.map((resource) => [resource.logicalId, resource.physicalId])),
    types: new Map(resources.map((resource) => [resource.logicalId, resource.type])),
    ...(stack.stackId === undefined ? {} : { stackId: stack.stackId }),
  };
  const { dueShards, retentionDays, orderedTopics, subscriptions, notes } = outboxSettingsOf(
    resources,
    context,
  );
  const outboxName = textOf(outboxTableResource.metadata[OUTBOX_NAME_METADATA]);
  return {
    stackName,
    outboxTable,
    auditTable,
    topicQueues,
    deadLetterQueues,
    deliveryInboxes,
    orderedTopics,
    subscriptions,
    ...(outboxName === undefined ? {} : { outboxName }),
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

/**
 * A subscriber's own stack from its template and resource summaries (pure): its queues (role `subscriber-queue`,
 * with `serverless-outbox:topics`, `serverless-outbox:subscriber` and `serverless-outbox:outbox`), their dead-letter
 * queues (role `subscriber-dead-letter-queue`, `serverless-outbox:source` naming the queue's logical id), its inbox
 * tables (role `inbox-table`, with `serverless-outbox:topics`) and its audit table (role `audit-table`, optional).
 * Throws a {@link StackDiscoveryError} for queues of two subscribers, a topic received on two queues, or a
 * dead-letter queue of no queue of the stack.
 */
export function subscriberOfStack(stack: StackSnapshot): DiscoveredSubscriber {
  const { stackName } = stack;
  const { resources, withRole, deployed } = readResources(stack);
  const queues = withRole(OutboxResourceRole.SUBSCRIBER_QUEUE);
  const names = [...new Set(queues.map((queue) => textOf(queue.metadata[OUTBOX_SUBSCRIBER_METADATA])))];
  const [subscriber, other] = names;
  if (subscriber === undefined || other !== undefined || names.length !== 1) {
    throw new StackDiscoveryError(
      stackName,
      names.includes(undefined)
        ? `has a subscriber-queue without ${OUTBOX_SUBSCRIBER_METADATA} metadata naming its subscriber`
        : `holds the queues of several subscribers (${names.join(', ')}); the CLI works on one subscriber's stack`,
    );
  }
  const topicQueues: Record<string, string> = {};
  const topicsOfQueue = new Map<string, readonly string[]>();
  const outboxes = new Set<string>();
  const notes: string[] = [];
  for (const queue of queues) {
    const topics = topicsOf(stackName, queue);
    topicsOfQueue.set(queue.logicalId, topics);
    const outbox = textOf(queue.metadata[OUTBOX_NAME_METADATA]);
    if (outbox === undefined) {
      notes.push(
        `${queue.logicalId} has no ${OUTBOX_NAME_METADATA} metadata: the producer's outbox is not named`,
      );
    } else outboxes.add(outbox);
    for (const topic of topics) {
      if (topicQueues[topic] !== undefined) {
        throw new StackDiscoveryError(
          stackName,
          `receives ${topic} on two queues; a redrive could not tell which of them a dead letter of it goes back to`,
        );
      }
      topicQueues[topic] = deployed(queue);
    }
  }
  const deadLetterQueues: Record<string, string> = {};
  for (const queue of withRole(OutboxResourceRole.SUBSCRIBER_DEAD_LETTER_QUEUE)) {
    const source = queue.metadata[OUTBOX_SOURCE_METADATA];
    const topics = typeof source === 'string' ? topicsOfQueue.get(source) : undefined;
    if (topics === undefined) {
      throw new StackDiscoveryError(
        stackName,
        `dead-letter queue ${queue.logicalId} names no subscriber queue of the stack as its ${OUTBOX_SOURCE_METADATA} (${String(source)})`,
      );
    }
    for (const topic of topics) deadLetterQueues[topic] = deployed(queue);
  }
  const inboxTables: Record<string, string> = {};
  for (const table of withRole(OutboxResourceRole.INBOX_TABLE)) {
    for (const topic of topicsOf(stackName, table)) inboxTables[topic] = deployed(table);
  }
  const audits = withRole(OutboxResourceRole.AUDIT_TABLE);
  if (audits.length > 1) {
    throw new StackDiscoveryError(
      stackName,
      `has ${audits.length} resources with the audit-table role (${audits.map((r) => r.logicalId).join(', ')})`,
    );
  }
  const audit = audits[0];
  return {
    stackName,
    subscriber,
    outboxes: [...outboxes],
    topicQueues,
    deadLetterQueues,
    inboxTables,
    ...(audit === undefined ? {} : { auditTable: deployed(audit) }),
    resources,
    outputs: stack.outputs ?? {},
    notes,
  };
}

/** The resources of a stack with their roles and physical ids, and how to pick them by role. */
function readResources(stack: StackSnapshot) {
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
          : `has no outbox: no resource carries ${OUTBOX_ROLE_METADATA} metadata (is it a TransactionalOutbox stack, or a subscriber's, deployed with its template metadata?)`,
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
  return { resources, withRole, deployed, single };
}

/** A template body as JSON; a {@link StackDiscoveryError} when it is not. */
function parseTemplate(stackName: string, body: string | undefined): StackTemplate {
  try {
    return JSON.parse(body ?? '') as StackTemplate;
  } catch (cause) {
    throw new StackDiscoveryError(stackName, 'its template is not JSON (a CDK stack is)', { cause });
  }
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
 * DUE_SHARDS, RETENTION_DAYS, ORDERED_TOPICS and SUBSCRIPTIONS as the relay and the sweeper get them (their
 * environment in the template: literal values, and for SUBSCRIPTIONS the JSON the template builds of its queues'
 * URLs). A template without them (an emulator's copy may drop function environments) gets the defaults, and a note
 * says so: listing with another shard count than the writers' would miss messages.
 */
function outboxSettingsOf(
  resources: readonly StackResource[],
  context: TemplateContext,
): {
  dueShards: number;
  retentionDays: number;
  orderedTopics: OrderingByTopic;
  subscriptions: Subscriptions;
  notes: string[];
} {
  const functions = resources.filter(
    (resource) => resource.role === OutboxResourceRole.SWEEPER || resource.role === OutboxResourceRole.RELAY,
  );
  const variable = (name: string): unknown => {
    for (const fn of functions) {
      const environment = fn.properties.Environment;
      const variables = isRecord(environment) ? environment.Variables : undefined;
      if (isRecord(variables) && variables[name] !== undefined) return variables[name];
    }
    return undefined;
  };
  const literal = (name: string): string | undefined => {
    const value = variable(name);
    return typeof value === 'string' ? value : undefined;
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
  // SUBSCRIPTIONS is absent where no topic has subscribers; where it is, the template builds it of the queues' URLs.
  const subscribed = variable(OutboxSettings.subscriptions.name);
  const subscriptions =
    subscribed === undefined ? {} : subscriptionsOf(templateText(subscribed, context), notes);
  return {
    dueShards: readSetting(env, OutboxSettings.dueShards),
    retentionDays: readSetting(env, OutboxSettings.retentionDays),
    orderedTopics: readSetting(
      ordered === undefined ? {} : { [OutboxSettings.orderedTopics.name]: ordered },
      OutboxSettings.orderedTopics,
    ),
    subscriptions,
    notes,
  };
}

/**
 * The topic → subscriber → queue map of SUBSCRIPTIONS' text; `{}`, with a note, when it is not that JSON (then show
 * and replay find a message delivered to subscribers only by a subscriber given with it).
 */
function subscriptionsOf(text: string | undefined, notes: string[]): Subscriptions {
  const unreadable = () => {
    notes.push(
      `${OutboxSettings.subscriptions.name} in the deployed template cannot be read: name the subscriber (--subscriber) to act on a delivery`,
    );
    return {};
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    return unreadable();
  }
  if (!isRecord(parsed)) return unreadable();
  const subscriptions: Record<string, Record<string, string>> = {};
  for (const [topic, queues] of Object.entries(parsed)) {
    if (!isRecord(queues) || !Object.values(queues).every((url) => typeof url === 'string')) {
      return unreadable();
    }
    subscriptions[topic] = queues as Record<string, string>;
  }
  return subscriptions;
}

/** A metadata value that is text, or `undefined`. */
function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
