/**
 * The part of CloudFormation's API (query protocol, `Version=2010-05-15`) that reading a deployed stack
 * needs: ListStacks, DescribeStacks, GetTemplate, ListStackResources, DescribeStackResources and ListExports,
 * answered from the stacks the embedded backend deployed. It is what `outbox` (the operator's CLI) and any other tool
 * that discovers a stack through CloudFormation call, so they work on the embedded backend as on moto or AWS.
 * Creating, updating and deleting stacks stays with `npm start`, which deploys through the backend itself.
 */
import type { StackDeployer } from './stack-deployer.ts';
import { WireError } from './wire-error.ts';

/** A query-protocol service: form-encoded `Action=…&Version=…` requests in, XML out. */
export interface QueryService {
  /** The API version requests name, e.g. `2010-05-15`. */
  readonly version: string;
  /** The XML namespace of its answers. */
  readonly namespace: string;
  /** Each operation returns the inner XML of its `<Action>Result>` element. */
  readonly operations: Readonly<Record<string, (params: URLSearchParams) => string>>;
}

const STATUS = 'CREATE_COMPLETE';

/**
 * CloudFormation's read operations over the deployer's stacks.
 * @example
 * await startWireServer({ services, queryServices: [cloudFormationService(deployer)], log });
 */
export function cloudFormationService(deployer: StackDeployer): QueryService {
  const stackOf = (params: URLSearchParams) => {
    const name = params.get('StackName') ?? '';
    if (name === '' || !deployer.has(name)) {
      throw new WireError('ValidationError', `Stack with id ${name} does not exist`);
    }
    return deployer.stack(name);
  };
  return {
    version: '2010-05-15',
    namespace: 'http://cloudformation.amazonaws.com/doc/2010-05-15/',
    operations: {
      ListStacks: () =>
        element(
          'StackSummaries',
          deployer
            .stacks()
            .map((stack) =>
              member(
                field('StackId', stack.stackId) +
                  field('StackName', stack.stackName) +
                  field('CreationTime', stack.createdAt.toISOString()) +
                  field('LastUpdatedTime', stack.updatedAt.toISOString()) +
                  field('StackStatus', STATUS),
              ),
            ),
        ),
      DescribeStacks: (params) => {
        const stacks = params.get('StackName') === null ? deployer.stacks() : [stackOf(params)];
        return element(
          'Stacks',
          stacks.map((stack) =>
            member(
              field('StackId', stack.stackId) +
                field('StackName', stack.stackName) +
                field('CreationTime', stack.createdAt.toISOString()) +
                field('LastUpdatedTime', stack.updatedAt.toISOString()) +
                field('StackStatus', STATUS) +
                element(
                  'Outputs',
                  Object.entries(stack.outputs).map(([key, value]) => {
                    const exported = stack.exports[key];
                    return member(
                      field('OutputKey', key) +
                        field('OutputValue', value) +
                        (exported === undefined ? '' : field('ExportName', exported)),
                    );
                  }),
                ),
            ),
          ),
        );
      },
      ListExports: () =>
        element(
          'Exports',
          deployer
            .exportList()
            .map((exported) =>
              member(
                field('ExportingStackId', exported.stackId) +
                  field('Name', exported.name) +
                  field('Value', exported.value),
              ),
            ),
        ),
      GetTemplate: (params) =>
        field('TemplateBody', JSON.stringify(stackOf(params).template)) +
        element('StagesAvailable', [member('Original'), member('Processed')]),
      ListStackResources: (params) => {
        const stack = stackOf(params);
        return element(
          'StackResourceSummaries',
          stack.resources.map((resource) =>
            member(
              field('LogicalResourceId', resource.logicalId) +
                field('PhysicalResourceId', resource.physicalId) +
                field('ResourceType', resource.type) +
                field('LastUpdatedTimestamp', stack.updatedAt.toISOString()) +
                field('ResourceStatus', STATUS),
            ),
          ),
        );
      },
      DescribeStackResources: (params) => {
        const stack = stackOf(params);
        const wanted = params.get('LogicalResourceId');
        return element(
          'StackResources',
          stack.resources
            .filter((resource) => wanted === null || resource.logicalId === wanted)
            .map((resource) =>
              member(
                field('StackName', stack.stackName) +
                  field('StackId', stack.stackId) +
                  field('LogicalResourceId', resource.logicalId) +
                  field('PhysicalResourceId', resource.physicalId) +
                  field('ResourceType', resource.type) +
                  field('Timestamp', stack.updatedAt.toISOString()) +
                  field('ResourceStatus', STATUS),
              ),
            ),
        );
      },
    },
  };
}

/** `<name>text</name>`, the text escaped. */
function field(name: string, text: string): string {
  return `<${name}>${escapeXml(text)}</${name}>`;
}

function element(name: string, children: readonly string[]): string {
  return `<${name}>${children.join('')}</${name}>`;
}

function member(inner: string): string {
  return `<member>${inner}</member>`;
}

/** Text escaped for an XML element. */
export function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}
