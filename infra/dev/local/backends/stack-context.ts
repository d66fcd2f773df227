/**
 * What template values resolve against once the stack is deployed: each resource's physical id, the one
 * attribute a physical id does not tell — a table's `StreamArn`, which holds the stream's creation time —
 * asked of the backend's own DynamoDB API, so that every backend is treated alike, and the exports of the
 * stacks deployed before (for `Fn::ImportValue`).
 */
import { CloudFormationClient, paginateListExports } from '@aws-sdk/client-cloudformation';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { type CloudFormationTemplate, isRecord, ResourceType } from '../template/cloudformation-template.ts';
import { type ResolutionContext, type ResolvableResource, resolveString } from '../template/intrinsics.ts';
import type { DeployedResource, DeployedStack } from './backend.ts';
import { emulatorClientConfig } from './emulator-config.ts';

/** Clients on the backend. */
export interface BackendClients {
  readonly dynamodb: DynamoDBClient;
}

/**
 * The resolution context of a deployed stack.
 * @example
 * const context = await stackContext(stack, { template, clients });
 * resolveString({ Ref: 'OrdersTable' }, context, 'ORDERS_TABLE'); // 'OutboxExample-local-OrdersTable-X1'
 */
export async function stackContext(
  stack: DeployedStack,
  sources: {
    readonly template: CloudFormationTemplate;
    readonly clients: BackendClients;
    /** Export name → value, of the stacks deployed before. @default none */
    readonly exports?: ReadonlyMap<string, string>;
  },
): Promise<ResolutionContext> {
  const resources = new Map<string, ResolvableResource>();
  await Promise.all(
    [...stack.resources.values()].map(async (resource) => {
      resources.set(resource.logicalId, {
        type: resource.type,
        physicalId: resource.physicalId,
        attributes: {
          ...(await describedAttributes(resource, {
            ...sources,
            streamed: hasStream(sources.template, resource),
          })),
          ...resource.attributes,
        },
      });
    }),
  );
  return {
    region: stack.region,
    accountId: stack.accountId,
    stackName: stack.stackName,
    ...(stack.stackId === undefined ? {} : { stackId: stack.stackId }),
    resources,
    parameters: parameterDefaults(sources.template),
    ...(isRecord(sources.template.Mappings) ? { mappings: sources.template.Mappings } : {}),
    ...(sources.exports === undefined ? {} : { exports: sources.exports }),
  };
}

/**
 * What the stack exports (`Outputs.*.Export.Name` → the output's value), resolved from the template against
 * `context` as {@link stackOutputs} resolves outputs; an export the runtime cannot resolve is left out.
 */
export function stackExports(
  template: CloudFormationTemplate,
  context: ResolutionContext,
): ReadonlyMap<string, string> {
  const exports = new Map<string, string>();
  for (const [name, output] of Object.entries(template.Outputs ?? {})) {
    if (!isRecord(output) || output.Value === undefined || !isRecord(output.Export)) continue;
    try {
      exports.set(
        resolveString(output.Export.Name, context, `output ${name}, export name`),
        resolveString(output.Value, context, `output ${name}`),
      );
    } catch {
      // Left out: a stack that imports it then names the export it cannot find.
    }
  }
  return exports;
}

/**
 * Every export the backend's CloudFormation lists (stacks a run before this one deployed: `--stack` deploys
 * one stack, whose imports another run's stacks may export). A backend that cannot list them has none.
 */
export async function backendExports(endpoint: string): Promise<ReadonlyMap<string, string>> {
  const client = new CloudFormationClient({ ...emulatorClientConfig(endpoint), maxAttempts: 1 });
  const exports = new Map<string, string>();
  try {
    for await (const page of paginateListExports({ client }, {})) {
      for (const { Name, Value } of page.Exports ?? []) {
        if (Name !== undefined && Value !== undefined) exports.set(Name, Value);
      }
    }
  } catch {
    // An emulator without ListExports: the imports then fail, naming the export.
  } finally {
    client.destroy();
  }
  return exports;
}

/**
 * The stack's outputs, resolved from the template's `Outputs` against `context`; an output the runtime cannot
 * resolve keeps the value the backend reported. (moto, for one, loses outputs that refer to a table it could
 * not update in place.)
 */
export function stackOutputs(
  stack: DeployedStack,
  template: CloudFormationTemplate,
  context: ResolutionContext,
): Readonly<Record<string, string>> {
  const outputs: Record<string, string> = { ...stack.outputs };
  for (const [name, output] of Object.entries(template.Outputs ?? {})) {
    if (!isRecord(output) || output.Value === undefined) continue;
    try {
      outputs[name] = resolveString(output.Value, context, `output ${name}`);
    } catch {
      // Keep the backend's value (or none): an output the runtime cannot resolve is not one it needs.
    }
  }
  return outputs;
}

/** Whether the template gives the table a stream (only then is its `StreamArn` worth a DescribeTable). */
function hasStream(template: CloudFormationTemplate, resource: DeployedResource): boolean {
  const definition = template.Resources[resource.logicalId];
  return definition?.Type === ResourceType.TABLE && isRecord(definition.Properties?.StreamSpecification);
}

async function describedAttributes(
  resource: DeployedResource,
  sources: { readonly clients: BackendClients; readonly streamed: boolean },
): Promise<Readonly<Record<string, string>>> {
  if (resource.physicalId === '' || !sources.streamed || resource.attributes?.StreamArn !== undefined)
    return {};
  try {
    const { Table } = await sources.clients.dynamodb.send(
      new DescribeTableCommand({ TableName: resource.physicalId }),
    );
    return definedOnly({ Arn: Table?.TableArn, StreamArn: Table?.LatestStreamArn });
  } catch (cause) {
    throw new LocalRuntimeError(
      'DEPLOY_FAILED',
      `${resource.logicalId} (${resource.type}) is in the stack but the backend cannot describe ${resource.physicalId}`,
      { cause },
    );
  }
}

function parameterDefaults(template: CloudFormationTemplate): Record<string, string> {
  const defaults: Record<string, string> = {};
  for (const [name, parameter] of Object.entries(template.Parameters ?? {})) {
    const value = isRecord(parameter) ? parameter.Default : undefined;
    if (typeof value === 'string' || typeof value === 'number') defaults[name] = String(value);
  }
  return defaults;
}

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
}
