import {
  CloudFormationClient,
  DescribeStacksCommand,
  GetTemplateCommand,
  ListStackResourcesCommand,
  ListStacksCommand,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import type { CliClients } from '../../../shared/cli/run-cli.ts';
import { runCli } from '../../../shared/cli/run-cli.ts';
import { synthSingleQueueTemplate } from '../../support/single-queue-example.ts';

/** The example stack's synthesized template, once per test file. */
let template: Record<string, unknown> | undefined;
export function exampleTemplate(): Record<string, unknown> {
  template ??= synthSingleQueueTemplate();
  return template;
}

export const STACK = 'OutboxExample';
const REGION_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012';

/** A physical id per resource as CloudFormation gives them: a queue's URL, a made-up name for the rest. */
export function summariesOf(resources: Readonly<Record<string, unknown>>): StackResourceSummary[] {
  return Object.entries(resources).map(([logicalId, resource]) => {
    const type = String((resource as { Type?: unknown }).Type);
    return {
      LogicalResourceId: logicalId,
      ResourceType: type,
      PhysicalResourceId:
        type === 'AWS::SQS::Queue' ? `${REGION_URL}/${STACK}-${logicalId}` : `${STACK}-${logicalId}-X1`,
      ResourceStatus: 'CREATE_COMPLETE',
      LastUpdatedTimestamp: new Date(0),
    };
  });
}

/** A CloudFormation mock that knows one stack, `stackName`, with `body` as its template. */
export function cloudFormationWith(
  stacks: { readonly stackName?: string; readonly template?: Record<string, unknown> } = {},
) {
  const stackName = stacks.stackName ?? STACK;
  const body = stacks.template ?? exampleTemplate();
  const mock = mockClient(CloudFormationClient);
  mock.on(DescribeStacksCommand).callsFake((input: { StackName?: string }) => {
    if (input.StackName !== stackName) throw notFound(input.StackName);
    return {
      Stacks: [
        {
          StackName: stackName,
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(0),
          Outputs: [{ OutputKey: 'inventoryTableName', OutputValue: `${stackName}-Inventory-X1` }],
        },
      ],
    };
  });
  mock.on(GetTemplateCommand).callsFake((input: { StackName?: string }) => {
    if (input.StackName !== stackName) throw notFound(input.StackName);
    return { TemplateBody: JSON.stringify(body) };
  });
  mock.on(ListStackResourcesCommand).callsFake((input: { StackName?: string }) => {
    if (input.StackName !== stackName) throw notFound(input.StackName);
    return { StackResourceSummaries: summariesOf(body.Resources as Record<string, unknown>) };
  });
  mock.on(ListStacksCommand).resolves({
    StackSummaries: [
      { StackName: stackName, StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(0) },
      { StackName: 'Old-local', StackStatus: 'DELETE_COMPLETE', CreationTime: new Date(0) },
    ],
  });
  return { mock, client: new CloudFormationClient({ region: 'us-east-1' }) };
}

function notFound(stackName: string | undefined): Error {
  const error = new Error(`Stack with id ${stackName} does not exist`);
  error.name = 'ValidationError';
  return error;
}

/** What a run printed and how it ended. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with captured streams. */
export async function run(
  argv: readonly string[],
  options: {
    readonly env?: Readonly<Record<string, string | undefined>>;
    readonly clients?: CliClients;
    readonly tty?: boolean;
  } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.tty === true },
    env: options.env ?? { AWS_REGION: 'us-east-1' },
    ...(options.clients === undefined ? {} : { clients: options.clients }),
  });
  return { code, stdout, stderr };
}
