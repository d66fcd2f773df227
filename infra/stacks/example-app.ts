import { readFileSync } from 'node:fs';
import { type App, DefaultStackSynthesizer, type Environment } from 'aws-cdk-lib';
import type { ApiAuthorization } from './api-authorization.ts';
import type { ApiEdgeProps } from './api-edge.ts';
import { OutboxExampleStack } from './outbox-example-stack.ts';

/** The cdk.json this app is deployed with. */
const CDK_JSON = new URL('../../cdk.json', import.meta.url);

/** Options of {@link createExampleStack}. */
export interface ExampleStackOptions {
  /**
   * Synthesize for an emulator (moto, LocalStack): no BootstrapVersion rule, which moto cannot evaluate.
   * @default false
   */
  readonly emulator?: boolean;
  /**
   * Account and region to deploy to.
   * @default - environment-agnostic
   */
  readonly env?: Environment;
  /**
   * Who may call the orders and inventory routes (`/admin` is always AWS_IAM).
   * @default ApiAuthorization.iam()
   */
  readonly apiAuthorization?: ApiAuthorization;
  /**
   * Send the order events through a FIFO queue (see `OutboxExampleStackProps.fifo`).
   * @default false
   */
  readonly fifo?: boolean;
  /**
   * Logging, throttling, WAF and CORS of the REST API.
   * @default - access and execution logs kept a month, no account CloudWatch role, 100 rps / 200 burst
   */
  readonly apiEdge?: ApiEdgeProps;
}

/** The example stack's name (`cdk deploy` deploys it under this name). */
export const EXAMPLE_STACK_NAME = 'OutboxExample';

/**
 * Context keys `cdk deploy -c <key>=<value>` sets the API's edge with when `apiEdge` is not given:
 * `apiCloudWatchRole=true` creates the account's API Gateway CloudWatch role (once per account and region; the
 * stage's logs need it), `apiWebAclArn=<arn>` puts a regional web ACL in front of the stage.
 */
export const EXAMPLE_CONTEXT = { cloudWatchRole: 'apiCloudWatchRole', webAclArn: 'apiWebAclArn' } as const;

/** The example stack in `app`. */
export function createExampleStack(app: App, options: ExampleStackOptions = {}): OutboxExampleStack {
  const apiEdge = options.apiEdge ?? apiEdgeFromContext(app);
  return new OutboxExampleStack(app, EXAMPLE_STACK_NAME, {
    env: options.env,
    ...(options.apiAuthorization === undefined ? {} : { apiAuthorization: options.apiAuthorization }),
    ...(apiEdge === undefined ? {} : { apiEdge }),
    ...(options.fifo === true ? { fifo: true } : {}),
    description: 'Serverless transactional outbox: order and inventory example',
    ...(options.emulator === true
      ? { synthesizer: new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }) }
      : {}),
  });
}

/** The edge settings given as context ({@link EXAMPLE_CONTEXT}), if any; a malformed one throws, naming it. */
function apiEdgeFromContext(app: App): ApiEdgeProps | undefined {
  const role: unknown = app.node.tryGetContext(EXAMPLE_CONTEXT.cloudWatchRole);
  const webAclArn: unknown = app.node.tryGetContext(EXAMPLE_CONTEXT.webAclArn);
  if (role === undefined && webAclArn === undefined) return undefined;
  if (role !== undefined && ![true, false, 'true', 'false'].includes(role as string | boolean)) {
    throw new Error(`context ${EXAMPLE_CONTEXT.cloudWatchRole} must be true or false, got ${String(role)}`);
  }
  if (webAclArn !== undefined && typeof webAclArn !== 'string') {
    throw new Error(`context ${EXAMPLE_CONTEXT.webAclArn} must be a web ACL ARN, got ${String(webAclArn)}`);
  }
  return {
    ...(role === undefined ? {} : { cloudWatchRole: role === true || role === 'true' }),
    ...(webAclArn === undefined ? {} : { webAclArn }),
  };
}

/**
 * The context of cdk.json (feature flags), for apps built in-process: the CDK CLI passes it to `cdk synth`,
 * so an in-process app without it would synthesize a different template.
 */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson: unknown = JSON.parse(readFileSync(CDK_JSON, 'utf8'));
  if (typeof cdkJson !== 'object' || cdkJson === null || !('context' in cdkJson)) return {};
  const context = cdkJson.context;
  return typeof context === 'object' && context !== null ? { ...context } : {};
}
