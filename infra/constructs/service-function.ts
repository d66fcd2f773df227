import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { defaultBundling, FUNCTION_DEFAULTS } from './defaults.ts';

/** Props of a {@link ServiceFunction}. */
export interface ServiceFunctionProps {
  /** Absolute path of the handler module; it exports `handler`. */
  readonly entry: string;
  /** Name the function logs under (`POWERTOOLS_SERVICE_NAME`). */
  readonly serviceName: string;
  /**
   * What the function does, shown in the console.
   * @default - no description
   */
  readonly description?: string;
  /**
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
  /**
   * @default 256
   */
  readonly memorySize?: number;
  /**
   * Environment variables besides the Powertools ones.
   * @default - none
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Powertools log level (`POWERTOOLS_LOG_LEVEL`).
   * @default 'INFO'
   */
  readonly logLevel?: string;
  /**
   * How long the function's log group keeps its events.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * What happens to the log group when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * Directory esbuild resolves dependencies from.
   * @default - the directory of the lock file
   */
  readonly projectRoot?: string;
  /**
   * Lock file that pins the bundled dependencies.
   * @default - the nearest lock file above the working directory
   */
  readonly depsLockFilePath?: string;
}

/**
 * A Node.js Lambda function bundled with esbuild, with its own log group and the outbox's runtime defaults
 * (Node 22 on ARM64, Powertools service name and log level).
 * @example
 * const fn = new ServiceFunction(this, 'CreateOrder', { entry: '/repo/functions/orders/create-order/handler.ts', serviceName: 'createOrder' });
 */
export class ServiceFunction extends Construct {
  /** The Lambda function. */
  public readonly function: nodejs.NodejsFunction;
  /** The function's log group. */
  public readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    // An explicit log group rather than the `logRetention` prop: that prop adds a custom-resource Lambda
    // to set the retention, which emulators cannot run.
    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? FUNCTION_DEFAULTS.logRetention,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.function = new nodejs.NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: FUNCTION_DEFAULTS.runtime,
      architecture: FUNCTION_DEFAULTS.architecture,
      timeout: props.timeout ?? FUNCTION_DEFAULTS.timeout,
      memorySize: props.memorySize ?? FUNCTION_DEFAULTS.memorySize,
      logGroup: this.logGroup,
      environment: {
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_LOG_LEVEL: props.logLevel ?? FUNCTION_DEFAULTS.logLevel,
        // Stack traces point into the TypeScript sources through the bundle's source map.
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: defaultBundling(),
      projectRoot: props.projectRoot,
      depsLockFilePath: props.depsLockFilePath,
    });
  }
}
