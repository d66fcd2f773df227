/**
 * Deploys the app's synthesized template to the emulator with CloudFormation's own API (no CDK CLI, no
 * bootstrap, no asset publishing) and returns the stack's outputs.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  CloudFormationClient,
  CreateStackCommand,
  DeleteStackCommand,
  DescribeStackEventsCommand,
  DescribeStacksCommand,
  type Stack,
} from '@aws-sdk/client-cloudformation';
import { topology } from '../topology.ts';
import { emulatorClientConfig } from './emulator-config.ts';
import { type CloudFormationTemplate, templateForEmulator } from './emulator-template.ts';

/** Options of {@link deployToEmulator}. */
export interface DeployOptions {
  /** The emulator's endpoint. */
  readonly endpoint: string;
  /** The app's synthesized template, as CDK wrote it; transformed for the emulator here. */
  readonly template: CloudFormationTemplate;
  /**
   * @default `${topology.stackName}-local`: never the name `cdk deploy` uses, so a local run against
   * LocalStack cannot replace a stack deployed there with real functions and mappings.
   */
  readonly stackName?: string;
  /** How long to wait for the stack to settle. @default 120_000 */
  readonly timeoutMs?: number;
}

/** A stack created on the emulator. */
export interface DeployedStack {
  readonly stackName: string;
  /** Output name → value (table names, queue URLs). */
  readonly outputs: Readonly<Record<string, string>>;
}

/** The stack could not be created; the message lists each failing resource with its reason. */
export class DeployError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

const DEFAULTS = { timeoutMs: 120_000, pollIntervalMs: 250 } as const;

// The CDK app creates IAM roles with generated names; CloudFormation refuses them without these.
const CAPABILITIES = ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM', 'CAPABILITY_AUTO_EXPAND'] as const;

/**
 * Creates the app's stack on the emulator (replacing a stack of the same name left by an earlier run on an
 * external emulator), waits for CREATE_COMPLETE and returns its outputs.
 * @example
 * const { outputs } = await deployToEmulator({ endpoint, template: synthExampleTemplate() });
 */
export async function deployToEmulator(options: DeployOptions): Promise<DeployedStack> {
  const stackName = options.stackName ?? `${topology.stackName}-local`;
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  // No SDK retries: CreateStack is not idempotent on moto (it ignores ClientRequestToken), and a retry of a
  // half-created stack answers AlreadyExists, hiding the real error.
  const cloudFormation = new CloudFormationClient({
    ...emulatorClientConfig(options.endpoint),
    maxAttempts: 1,
  });
  try {
    const template = templateForEmulator(options.template);
    // moto is a fresh process per run, but LocalStack (AWS_ENDPOINT_URL) keeps the previous run's stack.
    await deleteIfPresent(cloudFormation, stackName, timeoutMs);
    try {
      await cloudFormation.send(
        new CreateStackCommand({
          StackName: stackName,
          // Compact JSON: AWS caps TemplateBody at 51,200 bytes; emulators do not, but keep it small anyway.
          TemplateBody: JSON.stringify(template),
          Capabilities: [...CAPABILITIES],
        }),
      );
    } catch (cause) {
      // moto creates the resources inside CreateStack, so a resource it cannot create fails the call itself,
      // often with an HTML error page instead of an XML one.
      throw new DeployError(
        `CreateStack ${stackName} failed on ${options.endpoint}: ${describeSdkError(cause)}`,
        {
          cause,
        },
      );
    }
    const stack = await waitForSettled(cloudFormation, stackName, timeoutMs);
    if (stack.StackStatus !== 'CREATE_COMPLETE') {
      const reasons = await failedResourceReasons(cloudFormation, stackName);
      throw new DeployError(
        `stack ${stackName} ended in ${stack.StackStatus}${stack.StackStatusReason ? ` (${stack.StackStatusReason})` : ''}` +
          (reasons.length === 0 ? '' : `:\n  ${reasons.join('\n  ')}`),
      );
    }
    const outputs: Record<string, string> = {};
    for (const output of stack.Outputs ?? []) {
      if (output.OutputKey !== undefined && output.OutputValue !== undefined) {
        outputs[output.OutputKey] = output.OutputValue;
      }
    }
    return { stackName, outputs };
  } finally {
    cloudFormation.destroy();
  }
}

async function deleteIfPresent(
  client: CloudFormationClient,
  stackName: string,
  timeoutMs: number,
): Promise<void> {
  const existing = await describeStack(client, stackName);
  if (existing === undefined || existing.StackStatus === 'DELETE_COMPLETE') return;
  await client.send(new DeleteStackCommand({ StackName: stackName }));
  await waitForSettled(client, stackName, timeoutMs);
}

async function describeStack(client: CloudFormationClient, stackName: string): Promise<Stack | undefined> {
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    return Stacks?.[0];
  } catch (error) {
    // CloudFormation answers ValidationError "Stack with id X does not exist" for an unknown stack.
    if (error instanceof Error && /does not exist/i.test(error.message)) return undefined;
    throw error;
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
      throw new DeployError(`stack ${stackName} still ${stack.StackStatus} after ${timeoutMs} ms`);
    }
    await sleep(DEFAULTS.pollIntervalMs);
  }
}

async function failedResourceReasons(client: CloudFormationClient, stackName: string): Promise<string[]> {
  const { StackEvents } = await client.send(new DescribeStackEventsCommand({ StackName: stackName }));
  return (StackEvents ?? [])
    .filter((event) => event.ResourceStatus?.endsWith('_FAILED') && event.LogicalResourceId !== stackName)
    .map(
      (event) =>
        `${event.LogicalResourceId} (${event.ResourceType}): ${event.ResourceStatusReason ?? event.ResourceStatus}`,
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
