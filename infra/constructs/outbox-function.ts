import { relative } from 'node:path';
import { type CfnResource, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { defaultBundling, FUNCTION_DEFAULTS } from './defaults.ts';
import { LOCAL_ENTRY_METADATA } from './local-metadata.ts';

/** Props of an {@link OutboxFunction}: NodejsFunction's, with the entry required. */
export interface OutboxFunctionProps extends nodejs.NodejsFunctionProps {
  /** Path of the handler module; it exports `handler` (or the export `handler` names). */
  readonly entry: string;
  /**
   * Name the function logs under (`POWERTOOLS_SERVICE_NAME`).
   * @default - the construct id in kebab case
   */
  readonly serviceName?: string;
  /**
   * CloudWatch namespace of the function's Powertools metrics (`POWERTOOLS_METRICS_NAMESPACE`).
   * @default - not set (Powertools' own default)
   */
  readonly metricsNamespace?: string;
  /**
   * How long the function's log group keeps its events (when no `logGroup` is given).
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logGroupRetention?: logs.RetentionDays;
  /**
   * What happens to the log group (when no `logGroup` is given) when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly logGroupRemovalPolicy?: RemovalPolicy;
  /**
   * The IAM path of the function's own role (when no `role` is given), e.g. `/outbox/Shop-Outbox/senders/`: a
   * resource policy in another stack or account can then allow exactly the roles under that path (the
   * `aws:PrincipalArn` condition) without knowing the names CloudFormation gives them.
   * @default '/'
   */
  readonly rolePath?: string;
}

/**
 * A Node.js Lambda function with the outbox's defaults — Node 24 on ARM64, an esbuild bundle with the SDK
 * inside, X-Ray active tracing, its own log group, Powertools service name and log level — that also records its handler module
 * in the template, so the local runtime can run it in-process from the synthesized template alone.
 * @example
 * const createOrder = new OutboxFunction(this, 'CreateOrder', {
 *   entry: 'functions/orders/create-order/handler.ts',
 *   environment: { ORDERS_TABLE: orders.tableName },
 * });
 */
export class OutboxFunction extends nodejs.NodejsFunction {
  /** The name the function logs and publishes metrics under (its `POWERTOOLS_SERVICE_NAME`). */
  public readonly serviceName: string;

  constructor(scope: Construct, id: string, props: OutboxFunctionProps) {
    const {
      serviceName,
      metricsNamespace,
      logGroupRetention,
      logGroupRemovalPolicy,
      rolePath,
      ...functionProps
    } = props;
    // An explicit log group rather than the `logRetention` prop: that prop adds a custom-resource Lambda to set
    // the retention, which emulators cannot run.
    const logGroup =
      functionProps.logGroup ??
      new logs.LogGroup(scope, `${id}Logs`, {
        retention: logGroupRetention ?? FUNCTION_DEFAULTS.logRetention,
        removalPolicy: logGroupRemovalPolicy ?? RemovalPolicy.RETAIN,
      });
    // A role of its own without AWSLambdaBasicExecutionRole, whose logs grant covers every log group of the
    // account: this function writes to its own log group only (granted below). A role you give is left alone.
    const role =
      functionProps.role ??
      new iam.Role(scope, `${id}ServiceRole`, {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        ...(rolePath === undefined ? {} : { path: rolePath }),
      });
    super(scope, id, {
      runtime: FUNCTION_DEFAULTS.runtime,
      architecture: FUNCTION_DEFAULTS.architecture,
      timeout: FUNCTION_DEFAULTS.timeout,
      memorySize: FUNCTION_DEFAULTS.memorySize,
      tracing: FUNCTION_DEFAULTS.tracing,
      ...functionProps,
      logGroup,
      role,
      bundling: { ...defaultBundling(), ...functionProps.bundling },
      environment: {
        POWERTOOLS_SERVICE_NAME: serviceName ?? kebabCase(id),
        POWERTOOLS_LOG_LEVEL: FUNCTION_DEFAULTS.logLevel,
        // Stack traces point into the TypeScript sources through the bundle's source map.
        NODE_OPTIONS: '--enable-source-maps',
        ...functionProps.environment,
        ...(metricsNamespace === undefined ? {} : { POWERTOOLS_METRICS_NAMESPACE: metricsNamespace }),
      },
    });
    if (functionProps.role !== undefined && rolePath !== undefined) {
      // Another stack's resource policies allow the roles under this path (an outbox's senders, a subscriber's
      // consumer): a role given without it would be refused there, and only on AWS (emulators do not enforce IAM).
      this.node.addValidation({
        validate: () => [
          `OutboxFunction ${id}: a role of your own (role, or an outbox's or subscription's functionProps.role) ` +
            `cannot be given here: the other side's ` +
            `resource policies allow only the roles under the IAM path ${rolePath}, which this function's own role has`,
        ],
      });
    }
    if (functionProps.role === undefined) {
      // Lambda creates the function's log streams and puts its events there, with the function's role.
      iam.Grant.addToPrincipal({
        grantee: role,
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resourceArns: [logGroup.logGroupRef.logGroupArn],
      });
    }
    this.serviceName = functionProps.environment?.POWERTOOLS_SERVICE_NAME ?? serviceName ?? kebabCase(id);
    // Relative to the project root (where `cdk synth` runs), so the template holds no machine's paths.
    const entry = relative(process.cwd(), props.entry).split('\\').join('/');
    (this.node.defaultChild as CfnResource).addMetadata(LOCAL_ENTRY_METADATA, entry);
  }
}

/** `InventoryConsumer` → `inventory-consumer`: the default service name of a function. */
export function kebabCase(id: string): string {
  return id.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}
