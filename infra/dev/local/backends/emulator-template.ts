/**
 * Turns the app's synthesized CloudFormation template into one the emulator can create and that leaves the
 * event sources to the local runtime's pollers. Pure: the same template in, the same template out.
 *
 * Each change below answers something measured against moto 5.2.1:
 * - `AWS::Lambda::EventSourceMapping` is removed: a deployed stream mapping makes moto drain the stream and
 *   a deployed SQS mapping bumps receive counts until messages land in the DLQ. The pollers take their place.
 * - Lambda-backed custom resources (`Custom::*`, `AWS::CloudFormation::CustomResource`, e.g. CDK's
 *   `Custom::LogRetention`) are removed: moto invokes the provider function during CreateStack, which needs
 *   Docker, and CreateStack never returns (it hung for over 120 s).
 * - The CDK bootstrap-version `Rule` and `Parameter` are removed: moto resolves the SSM parameter
 *   `/cdk-bootstrap/.../version` while creating the stack and answers 500, since nothing bootstrapped it.
 * - Every function's `Code` becomes an inline placeholder `ZipFile`: the template points at the CDK asset
 *   bucket, which a fresh emulator does not have, and moto fetches the object during CreateFunction
 *   (CreateStack fails with NoSuchBucket). Uploading the staged assets would need `cdk.out`, bootstrap
 *   resources and an S3 client for code the emulator never runs (moto cannot execute Lambda without
 *   Docker; the handlers run in-process), so a placeholder that says where the code really runs is enough.
 *   moto's UpdateStack reads an updated `ZipFile` as base64 (CreateStack reads it as source), so the
 *   placeholder is also valid base64 once non-alphabet characters are dropped: no `=`, and a number of
 *   base64 letters that is a multiple of four.
 * - A function's `Environment` keeps only its literal values (settings such as DUE_SHARDS, which operator
 *   tools read from the deployed template) and the outbox's SUBSCRIPTIONS (its subscribers' queue URLs,
 *   built of pseudo parameters, by which the tools find a message's deliveries); other values built from
 *   intrinsics are dropped: the local runtime resolves them from the synthesized template, and the emulator's
 *   copy never runs. Resource `Metadata` other than the outbox's (roles, topics, a subscriber queue's subscriber
 *   and outbox names, by which the tools find a stack's outbox, or a subscriber's queue and its producer) —
 *   construct paths, asset hashes — and the `AWS::CDK::Metadata` resource are dropped too. What is left changes only when a resource does, so a
 *   restart against an emulator that already has the stack finds it unchanged and keeps it (and its data).
 *
 * - A FIFO queue without a `QueueName` gets one, `<stack>-<LogicalId>.fifo` (cut to SQS's 80 characters):
 *   CloudFormation on AWS names an unnamed FIFO queue with the `.fifo` suffix SQS requires, while moto passes
 *   no name and SQS refuses the queue ("Queue name must end in .fifo for FIFO queues"). The name is derived,
 *   not random, so a restart finds the template unchanged.
 *
 * Resources moto does not model (API Gateway Stage, CloudWatch alarms, Scheduler schedules, Lambda aliases)
 * are skipped by moto itself and need no change here.
 */

import { OutboxSettings } from '../../../../shared/index.ts';
import {
  OUTBOX_NAME_METADATA,
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_TOPICS_METADATA,
} from '../../../../shared/memory/index.ts';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import {
  type CloudFormationTemplate,
  ResourceType,
  referencedLogicalIds,
  type TemplateResource,
} from '../template/cloudformation-template.ts';

/** The template types, also from here, where the backend interface imports them. */
export type { CloudFormationTemplate, TemplateResource };

/** Source of the placeholder every function gets on the emulator; invoking it there says why it fails. */
export const PLACEHOLDER_FUNCTION_CODE =
  "Object.assign(exports, { handler: async function () { throw new Error('this function runs in-process in the local runtime (infra/dev/local), not in an emulator'); } });";

/** What CDK names the bootstrap-version check in every stack it synthesizes. */
const CDK_BOOTSTRAP_VERSION = { rule: 'CheckBootstrapVersion', parameter: 'BootstrapVersion' } as const;

/** Resource types the emulator must not get (see the module comment for why each one). */
export function isRemovedOnEmulator(type: string): boolean {
  return (
    type === 'AWS::Lambda::EventSourceMapping' ||
    type === 'AWS::CDK::Metadata' ||
    type === 'AWS::CloudFormation::CustomResource' ||
    type.startsWith('Custom::')
  );
}

/** SQS's longest queue name, the `.fifo` suffix included. */
const MAX_QUEUE_NAME_LENGTH = 80;
const FIFO_SUFFIX = '.fifo';

/**
 * The template to deploy on the emulator as stack `stackName`: no event source mappings or custom resources, no
 * bootstrap-version check, placeholder function code without environment, no metadata, a name for each unnamed
 * FIFO queue. Throws a {@link LocalRuntimeError} (`UNSUPPORTED_TEMPLATE`) when a kept resource or output refers
 * to a removed resource.
 * @example
 * const deployable = templateForEmulator(template, 'OutboxExample-local');
 */
export function templateForEmulator(
  template: CloudFormationTemplate,
  stackName: string,
): CloudFormationTemplate {
  const removed = new Set(
    Object.entries(template.Resources)
      .filter(([, resource]) => isRemovedOnEmulator(resource.Type))
      .map(([logicalId]) => logicalId),
  );
  const resources: Record<string, TemplateResource> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (removed.has(logicalId)) continue;
    const { Metadata: metadata, ...kept } = withoutDependencies(resource, removed);
    const roles = outboxRoleMetadata(metadata);
    const deployable =
      kept.Type === ResourceType.FUNCTION
        ? withPlaceholderCode(kept)
        : withFifoQueueName(kept, `${stackName}-${logicalId}`);
    resources[logicalId] = roles === undefined ? deployable : { ...deployable, Metadata: roles };
  }
  const result: Record<string, unknown> = { ...template, Resources: resources };
  const rules = withoutKey(template.Rules, CDK_BOOTSTRAP_VERSION.rule);
  const parameters = withoutKey(template.Parameters, CDK_BOOTSTRAP_VERSION.parameter);
  setOrDelete(result, 'Rules', rules);
  setOrDelete(result, 'Parameters', parameters);
  assertNoReferences(result, removed);
  return result as unknown as CloudFormationTemplate;
}

/**
 * The outbox role metadata of a resource (`serverless-outbox:role`, `:topics`, `:source`), kept on the emulator:
 * the `outbox` CLI finds the outbox's tables and queues by it in the deployed template. It changes only when the
 * resource does.
 */
function outboxRoleMetadata(metadata: unknown): Record<string, unknown> | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const kept = Object.entries(metadata).filter(([key]) => OUTBOX_ROLE_KEYS.has(key));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

const OUTBOX_ROLE_KEYS: ReadonlySet<string> = new Set([
  OUTBOX_ROLE_METADATA,
  OUTBOX_TOPICS_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_NAME_METADATA,
]);

function withPlaceholderCode(resource: TemplateResource): TemplateResource {
  const { Environment: environment, ...properties } = resource.Properties ?? {};
  const literals = literalVariables(environment);
  // CloudFormation's inline code is written to index.js, so the handler must be `index.<export>`.
  return {
    ...resource,
    Properties: {
      ...properties,
      ...(literals === undefined ? {} : { Environment: { Variables: literals } }),
      Code: { ZipFile: PLACEHOLDER_FUNCTION_CODE },
      Handler: 'index.handler',
    },
  };
}

/** A FIFO queue without a name, named `name` (cut to fit) with the `.fifo` suffix; any other resource as it is. */
function withFifoQueueName(resource: TemplateResource, name: string): TemplateResource {
  const properties = resource.Properties ?? {};
  const fifo = properties.FifoQueue === true || properties.FifoQueue === 'true';
  if (resource.Type !== 'AWS::SQS::Queue' || !fifo || properties.QueueName !== undefined) return resource;
  const queueName = `${name.slice(0, MAX_QUEUE_NAME_LENGTH - FIFO_SUFFIX.length)}${FIFO_SUFFIX}`;
  return { ...resource, Properties: { ...properties, QueueName: queueName } };
}

/**
 * Environment values built from intrinsics that operator tools read from the deployed template, and so are kept:
 * the outbox's SUBSCRIPTIONS (its subscribers' queue URLs, built of pseudo parameters), by which the tools find a
 * message's deliveries. Any other intrinsic value is dropped, so that a change to it leaves the stack unchanged.
 */
const TOOL_VARIABLES: ReadonlySet<string> = new Set([OutboxSettings.subscriptions.name]);

/**
 * The variables of a function's `Environment` whose values are plain strings, and the {@link TOOL_VARIABLES};
 * undefined when there are none.
 */
function literalVariables(environment: unknown): Record<string, unknown> | undefined {
  const variables = (environment as { Variables?: unknown } | undefined)?.Variables;
  if (typeof variables !== 'object' || variables === null) return undefined;
  const literals = Object.entries(variables).filter(
    ([name, value]) => typeof value === 'string' || TOOL_VARIABLES.has(name),
  );
  return literals.length === 0 ? undefined : Object.fromEntries(literals);
}

function withoutDependencies(resource: TemplateResource, removed: ReadonlySet<string>): TemplateResource {
  if (resource.DependsOn === undefined) return resource;
  const dependsOn = (
    typeof resource.DependsOn === 'string' ? [resource.DependsOn] : resource.DependsOn
  ).filter((id) => !removed.has(id));
  const { DependsOn: _dropped, ...rest } = resource;
  return dependsOn.length === 0 ? (rest as TemplateResource) : { ...rest, DependsOn: dependsOn };
}

function withoutKey(
  section: Readonly<Record<string, unknown>> | undefined,
  key: string,
): Record<string, unknown> | undefined {
  if (section === undefined) return undefined;
  const { [key]: _dropped, ...rest } = section;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

function setOrDelete(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

/** Throws when anything left in the template still points at a removed resource. */
function assertNoReferences(template: Record<string, unknown>, removed: ReadonlySet<string>): void {
  if (removed.size === 0) return;
  for (const [section, value] of Object.entries(template)) {
    const entries = typeof value === 'object' && value !== null ? Object.entries(value) : [];
    for (const [name, body] of entries) {
      const target = referencedLogicalIds(body).find((id) => removed.has(id));
      if (target !== undefined) {
        throw new LocalRuntimeError(
          'UNSUPPORTED_TEMPLATE',
          `${section}.${name} refers to ${target}, which cannot be created on the emulator; ` +
            'the local runtime would need to emulate it',
        );
      }
    }
  }
}
