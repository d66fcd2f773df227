/**
 * Deploys the app's template to an emulator with CloudFormation's own API (no CDK CLI, no bootstrap, no asset
 * publishing). A start never deletes a stack: it creates the stack when absent, updates it in place when the
 * emulator's template changed, and keeps it otherwise, so an emulator that outlives the runtime keeps its data.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import {
  CloudFormationClient,
  CreateStackCommand,
  DeleteStackCommand,
  DescribeStackEventsCommand,
  DescribeStacksCommand,
  GetTemplateCommand,
  paginateListStackResources,
  type Stack,
  type StackResourceSummary,
  UpdateStackCommand,
} from '@aws-sdk/client-cloudformation';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { DeployedResource, DeployedStack } from './backend.ts';
import { emulatorClientConfig } from './emulator-config.ts';
import { type CloudFormationTemplate, templateForEmulator } from './emulator-template.ts';

/** Options of {@link deployStack}. */
export interface DeployStackOptions {
  /** The emulator's endpoint. */
  readonly endpoint: string;
  /** The app's synthesized template, as CDK wrote it; transformed for the emulator here. */
  readonly template: CloudFormationTemplate;
  readonly stackName: string;
  /** Receives notes on what the deploy did or could not do. @default dropped */
  readonly log?: (line: string) => void;
  /** How long to wait for the stack to settle. @default 120_000 */
  readonly timeoutMs?: number;
}

const DEFAULTS = {
  timeoutMs: 120_000,
  pollIntervalMs: 250,
  region: 'us-east-1',
  accountId: '123456789012',
} as const;

// The CDK app creates IAM roles with generated names; CloudFormation refuses them without these.
const CAPABILITIES = ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM', 'CAPABILITY_AUTO_EXPAND'] as const;

/** States a stack can be updated from. */
const UPDATABLE = new Set([
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_ROLLBACK_COMPLETE',
  'IMPORT_COMPLETE',
]);

/**
 * Creates, updates or keeps the stack and returns what is deployed.
 * @example
 * const stack = await deployStack({ endpoint, template, stackName: 'OutboxExample-local' });
 * stack.change; // 'created' | 'updated' | 'unchanged'
 */
export async function deployStack(options: DeployStackOptions): Promise<DeployedStack> {
  const { stackName } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const log = options.log ?? (() => {});
  const template = templateForEmulator(options.template, stackName);
  // No SDK retries: CreateStack is not idempotent on moto (it ignores ClientRequestToken), and a retry of a
  // half-created stack answers AlreadyExists, hiding the real error.
  const client = new CloudFormationClient({ ...emulatorClientConfig(options.endpoint), maxAttempts: 1 });
  const settle = (): Promise<Stack> => waitForSettled(client, stackName, timeoutMs);
  try {
    let existing = await describeStack(client, stackName);
    if (existing?.StackStatus?.endsWith('_IN_PROGRESS') === true) existing = await settle();
    if (existing?.StackStatus === 'ROLLBACK_COMPLETE') {
      // A stack whose creation failed holds no resources and can only be deleted (CloudFormation's rule).
      log(
        `[deploy] ${stackName} is ROLLBACK_COMPLETE (its creation failed, it holds nothing): recreating it`,
      );
      await client.send(new DeleteStackCommand({ StackName: stackName }));
      await settle();
      existing = undefined;
    }
    if (existing === undefined || existing.StackStatus === 'DELETE_COMPLETE') {
      await send(client, new CreateStackCommand(stackInput(stackName, template)), `CreateStack ${stackName}`);
      return await deployed(client, {
        stack: await expectStatus(client, await settle(), 'CREATE_COMPLETE'),
        change: 'created',
      });
    }
    if (!UPDATABLE.has(existing.StackStatus ?? '')) {
      throw new LocalRuntimeError(
        'DEPLOY_FAILED',
        `stack ${stackName} on ${options.endpoint} is ${existing.StackStatus}, which cannot be updated; ` +
          `the runtime never deletes a stack with data: delete it yourself ` +
          `(aws cloudformation delete-stack --stack-name ${stackName} --endpoint-url ${options.endpoint}) and start again`,
      );
    }
    const before = await listResources(client, stackName);
    if (await sameTemplate(client, stackName, template)) {
      return await deployed(client, { stack: existing, change: 'unchanged' });
    }
    // moto never answers "No updates are to be performed", so the template is compared above instead.
    await send(client, new UpdateStackCommand(stackInput(stackName, template)), `UpdateStack ${stackName}`);
    const stack = await expectStatus(client, await settle(), 'UPDATE_COMPLETE');
    return await deployed(client, { stack, change: 'updated', before, template, log });
  } finally {
    client.destroy();
  }
}

function stackInput(stackName: string, template: CloudFormationTemplate) {
  // Compact JSON: AWS caps TemplateBody at 51,200 bytes; emulators do not, but keep it small anyway.
  return { StackName: stackName, TemplateBody: JSON.stringify(template), Capabilities: [...CAPABILITIES] };
}

async function send(
  client: CloudFormationClient,
  command: CreateStackCommand | UpdateStackCommand,
  what: string,
): Promise<void> {
  try {
    await client.send(command as CreateStackCommand);
  } catch (cause) {
    // moto creates the resources inside the call itself, so a resource it cannot create fails the call, often
    // with an HTML error page instead of an XML one.
    throw new LocalRuntimeError('DEPLOY_FAILED', `${what} failed: ${describeSdkError(cause)}`, { cause });
  }
}

async function sameTemplate(
  client: CloudFormationClient,
  stackName: string,
  template: CloudFormationTemplate,
): Promise<boolean> {
  const { TemplateBody } = await client.send(new GetTemplateCommand({ StackName: stackName }));
  if (TemplateBody === undefined) return false;
  try {
    return isDeepStrictEqual(JSON.parse(TemplateBody), JSON.parse(JSON.stringify(template)));
  } catch {
    // A YAML body (written by something else) is never this runtime's template.
    return false;
  }
}

interface DeployedParts {
  readonly stack: Stack;
  readonly change: NonNullable<DeployedStack['change']>;
  /** Resources before an update, to recover those the emulator lost track of. */
  readonly before?: readonly StackResourceSummary[];
  readonly template?: CloudFormationTemplate;
  readonly log?: (line: string) => void;
}

async function deployed(client: CloudFormationClient, parts: DeployedParts): Promise<DeployedStack> {
  const { stack } = parts;
  const stackName = stack.StackName ?? '';
  const summaries = await listResources(client, stackName);
  const listed = new Set(summaries.map((summary) => summary.LogicalResourceId));
  const resources = new Map<string, DeployedResource>();
  for (const summary of summaries) add(resources, summary);
  for (const summary of parts.before ?? []) {
    const id = summary.LogicalResourceId ?? '';
    if (listed.has(id) || parts.template?.Resources[id] === undefined) continue;
    // moto cannot update a DynamoDB table in place: it keeps the table (and its items) as it was but drops
    // it from the stack's resource list. The table still exists, so the runtime keeps using it.
    add(resources, summary);
    parts.log?.(
      `[deploy] the emulator did not update ${id} (${summary.ResourceType}) in place; it keeps its earlier ` +
        `definition and its data (delete the stack ${stackName} to recreate it)`,
    );
  }
  const outputs: Record<string, string> = {};
  for (const output of stack.Outputs ?? []) {
    if (output.OutputKey !== undefined && output.OutputValue !== undefined)
      outputs[output.OutputKey] = output.OutputValue;
  }
  // arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>
  const [, , , region, accountId] = (stack.StackId ?? '').split(':');
  return {
    stackName,
    region: region || DEFAULTS.region,
    accountId: accountId || DEFAULTS.accountId,
    stackId: stack.StackId,
    resources,
    outputs,
    change: parts.change,
  };
}

function add(resources: Map<string, DeployedResource>, summary: StackResourceSummary): void {
  if (summary.LogicalResourceId === undefined) return;
  resources.set(summary.LogicalResourceId, {
    logicalId: summary.LogicalResourceId,
    type: summary.ResourceType ?? '',
    physicalId: summary.PhysicalResourceId ?? '',
  });
}

async function listResources(
  client: CloudFormationClient,
  stackName: string,
): Promise<StackResourceSummary[]> {
  const summaries: StackResourceSummary[] = [];
  for await (const page of paginateListStackResources({ client }, { StackName: stackName })) {
    summaries.push(...(page.StackResourceSummaries ?? []));
  }
  return summaries;
}

async function describeStack(client: CloudFormationClient, stackName: string): Promise<Stack | undefined> {
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    return Stacks?.[0];
  } catch (error) {
    // CloudFormation answers ValidationError "Stack with id X does not exist" for an unknown stack.
    if (error instanceof Error && /does not exist/i.test(error.message)) return undefined;
    throw new LocalRuntimeError(
      'DEPLOY_FAILED',
      `DescribeStacks ${stackName} failed: ${describeSdkError(error)}`,
      {
        cause: error,
      },
    );
  }
}

async function waitForSettled(
  client: CloudFormationClient,
  stackName: string,
  timeoutMs: number,
): Promise<Stack> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stack = await describeStack(client, stackName);
    if (stack === undefined)
      return { StackName: stackName, StackStatus: 'DELETE_COMPLETE', CreationTime: new Date() };
    if (!stack.StackStatus?.endsWith('_IN_PROGRESS')) return stack;
    if (Date.now() > deadline) {
      throw new LocalRuntimeError(
        'DEPLOY_FAILED',
        `stack ${stackName} still ${stack.StackStatus} after ${timeoutMs} ms`,
      );
    }
    await sleep(DEFAULTS.pollIntervalMs);
  }
}

async function expectStatus(client: CloudFormationClient, stack: Stack, expected: string): Promise<Stack> {
  if (stack.StackStatus === expected) return stack;
  const stackName = stack.StackName ?? '';
  const { StackEvents } = await client.send(new DescribeStackEventsCommand({ StackName: stackName }));
  const reasons = (StackEvents ?? [])
    .filter((event) => event.ResourceStatus?.endsWith('_FAILED') && event.LogicalResourceId !== stackName)
    .map(
      (event) =>
        `${event.LogicalResourceId} (${event.ResourceType}): ${event.ResourceStatusReason ?? event.ResourceStatus}`,
    );
  throw new LocalRuntimeError(
    'DEPLOY_FAILED',
    `stack ${stackName} ended in ${stack.StackStatus}${stack.StackStatusReason ? ` (${stack.StackStatusReason})` : ''}` +
      (reasons.length === 0 ? '' : `:\n  ${reasons.join('\n  ')}`),
  );
}

function describeSdkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // When the body is not the XML the SDK expects, the SDK keeps the raw text here.
  const body = (error as { $responseBodyText?: unknown }).$responseBodyText;
  if (typeof body !== 'string' || body === '') return `${error.name}: ${error.message}`;
  const text = body
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return `${error.name}: ${text.slice(0, 500)}`;
}
