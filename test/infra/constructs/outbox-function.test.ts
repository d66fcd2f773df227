import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { OutboxFunction, type OutboxFunctionProps } from 'serverless-outbox/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  entryOf,
  environmentOf,
  functionId,
  idsOfType,
  propertiesOf,
  refTarget,
  resource,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';
import { WRITER_ENTRY } from './outbox-service.ts';

/** A stack with one function `CreateOrder` built from `props`, and its template. */
function functionStack(
  props: Partial<OutboxFunctionProps> = {},
  before?: (stack: Stack) => Partial<OutboxFunctionProps>,
): { json: CfnTemplate; id: string } {
  const stack = new Stack(testApp(), 'Service');
  new OutboxFunction(stack, 'CreateOrder', { entry: WRITER_ENTRY, ...props, ...before?.(stack) });
  const json = templateOf(stack);
  return { json, id: functionId(json, 'CreateOrder') };
}

/** The log group a function logs to. */
function logGroupOf(json: CfnTemplate, id: string): string {
  const config = propertiesOf(json, id).LoggingConfig as { LogGroup: unknown } | undefined;
  const logGroup = refTarget(config?.LogGroup);
  if (logGroup === undefined) throw new Error(`${id} names no log group`);
  return logGroup;
}

beforeAll(() => {
  functionStack();
}, SYNTH_TIMEOUT_MS);

describe('OutboxFunction', () => {
  it('runs on Node 24 / ARM64 with 10 s and 256 MB, logging as its id in kebab case at INFO, with no namespace', () => {
    const { json, id } = functionStack();
    expect(propertiesOf(json, id)).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 10,
      MemorySize: 256,
    });
    expect(environmentOf(json, id)).toEqual({
      POWERTOOLS_SERVICE_NAME: 'create-order',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('traces with X-Ray by default, and lets its props turn tracing off', () => {
    const { json, id } = functionStack();
    expect(propertiesOf(json, id).TracingConfig).toEqual({ Mode: 'Active' });
    const quiet = functionStack({ tracing: lambda.Tracing.DISABLED });
    expect(propertiesOf(quiet.json, quiet.id).TracingConfig).toBeUndefined();
  });

  it('sets POWERTOOLS_METRICS_NAMESPACE only when given a namespace, which its environment cannot override', () => {
    const { json, id } = functionStack({
      metricsNamespace: 'Shop/Orders',
      environment: { POWERTOOLS_METRICS_NAMESPACE: 'Elsewhere' },
    });
    expect(environmentOf(json, id).POWERTOOLS_METRICS_NAMESPACE).toBe('Shop/Orders');
  });

  it('tells the service name it logs and publishes metrics under', () => {
    const stack = new Stack(testApp(), 'Service');
    const byId = new OutboxFunction(stack, 'CreateOrder', { entry: WRITER_ENTRY });
    const named = new OutboxFunction(stack, 'Named', { entry: WRITER_ENTRY, serviceName: 'orders-api' });
    const overridden = new OutboxFunction(stack, 'Overridden', {
      entry: WRITER_ENTRY,
      serviceName: 'orders-api',
      environment: { POWERTOOLS_SERVICE_NAME: 'from-environment' },
    });
    expect([byId.serviceName, named.serviceName, overridden.serviceName]).toEqual([
      'create-order',
      'orders-api',
      'from-environment',
    ]);
    const json = templateOf(stack);
    expect(environmentOf(json, functionId(json, 'Overridden')).POWERTOOLS_SERVICE_NAME).toBe(
      'from-environment',
    );
  });

  it('records its handler module relative to the project root, where `cdk synth` runs', () => {
    const { json, id } = functionStack();
    expect(entryOf(json, id)).toBe('test/infra/constructs/fixtures/writer-handler.ts');
  });

  it('takes its service name, and lets its environment add to and override the defaults', () => {
    const { json, id } = functionStack({
      serviceName: 'orders-api',
      environment: { ORDERS_TABLE: 'orders', POWERTOOLS_LOG_LEVEL: 'DEBUG' },
    });
    expect(environmentOf(json, id)).toMatchObject({
      POWERTOOLS_SERVICE_NAME: 'orders-api',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      ORDERS_TABLE: 'orders',
    });
  });

  it('logs to its own log group, kept a month and retained, without the log-retention custom resource', () => {
    const { json, id } = functionStack();
    expect(resource(json, logGroupOf(json, id))).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
      DeletionPolicy: 'Retain',
    });
    expect(idsOfType(json, 'Custom::LogRetention')).toEqual([]);
    expect(idsOfType(json, 'AWS::Lambda::Function')).toEqual([id]);
  });

  it('takes the retention and removal policy of its log group', () => {
    const { json, id } = functionStack({
      logGroupRetention: logs.RetentionDays.ONE_WEEK,
      logGroupRemovalPolicy: RemovalPolicy.DESTROY,
    });
    expect(resource(json, logGroupOf(json, id))).toMatchObject({
      Properties: { RetentionInDays: 7 },
      DeletionPolicy: 'Delete',
    });
  });

  it('logs to a log group it is given instead of creating one', () => {
    let given: logs.LogGroup | undefined;
    const { json, id } = functionStack({}, (stack) => {
      given = new logs.LogGroup(stack, 'SharedLogs', { retention: logs.RetentionDays.ONE_DAY });
      return { logGroup: given };
    });
    expect(idsOfType(json, 'AWS::Logs::LogGroup')).toEqual([logGroupOf(json, id)]);
    expect(propertiesOf(json, logGroupOf(json, id)).RetentionInDays).toBe(1);
  });

  it('puts its own role under the IAM path it is given, and refuses a role of yours with it', () => {
    const { json, id } = functionStack({ rolePath: '/outbox/Orders-Outbox/senders/' });
    const role = refTarget(propertiesOf(json, id).Role);
    expect(propertiesOf(json, role as string).Path).toBe('/outbox/Orders-Outbox/senders/');

    expect(() =>
      functionStack({ rolePath: '/outbox/Orders-Outbox/senders/' }, (stack) => ({
        role: new iam.Role(stack, 'Mine', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') }),
      })),
    ).toThrow(
      "a role of your own (role, or an outbox's or subscription's functionProps.role) cannot be given here",
    );
  });
});
