import { readFileSync } from 'node:fs';
import { type App, DefaultStackSynthesizer, type Environment } from 'aws-cdk-lib';
import type { ApiAuthorization } from './api-authorization.ts';
import type { ApiEdgeProps } from './api-edge.ts';
import { OutboxInventoryStack } from './inventory-stack.ts';
import { OutboxLoyaltyStack } from './loyalty-stack.ts';
import { ORDER_SUBSCRIBERS, OutboxOrdersStack } from './orders-stack.ts';

/** The cdk.json this app is deployed with. */
const CDK_JSON = new URL('../../cdk.json', import.meta.url);

/** Options of {@link createExampleApp}. */
export interface ExampleAppOptions {
  /**
   * Synthesize for an emulator (moto, LocalStack): no BootstrapVersion rule, which moto cannot evaluate.
   * @default false
   */
  readonly emulator?: boolean;
  /**
   * Account and region to deploy every stack to.
   * @default - environment-agnostic
   */
  readonly env?: Environment;
  /**
   * Who may call the business routes of every service (`/admin` is always AWS_IAM).
   * @default ApiAuthorization.iam()
   */
  readonly apiAuthorization?: ApiAuthorization;
  /**
   * Deliver the order events to each subscriber through a FIFO queue (see `OutboxOrdersStackProps.fifo`).
   * @default false
   */
  readonly fifo?: boolean;
  /**
   * Logging, throttling, WAF and CORS of every service's REST API.
   * @default - access and execution logs kept a month, no account CloudWatch role, 100 rps / 200 burst
   */
  readonly apiEdge?: ApiEdgeProps;
}

/** The example's stacks' names (`cdk deploy --all` deploys them, the order service first). */
export const EXAMPLE_STACK_NAMES = {
  orders: 'OutboxOrders',
  inventory: 'OutboxInventory',
  loyalty: 'OutboxLoyalty',
} as const;

/** The example's three services, each a stack of its own. */
export interface ExampleApp {
  readonly orders: OutboxOrdersStack;
  readonly inventory: OutboxInventoryStack;
  readonly loyalty: OutboxLoyaltyStack;
}

/**
 * Context keys `cdk deploy -c <key>=<value>` sets the APIs' edge with when `apiEdge` is not given:
 * `apiCloudWatchRole=true` creates the account's API Gateway CloudWatch role (once per account and region, in the
 * order service's stack; the stages' logs need it), `apiWebAclArn=<arn>` puts a regional web ACL in front of every
 * stage.
 */
export const EXAMPLE_CONTEXT = { cloudWatchRole: 'apiCloudWatchRole', webAclArn: 'apiWebAclArn' } as const;

/**
 * The example in `app`: the order service (the producer, with the outbox), then the inventory and loyalty services,
 * each subscribed to the order events from a stack of its own. The subscribers refer to no resource of the order
 * service (they derive its queue names); each is declared to depend on it only so that `cdk deploy --all` deploys
 * the producer first.
 */
export function createExampleApp(app: App, options: ExampleAppOptions = {}): ExampleApp {
  const apiEdge = options.apiEdge ?? apiEdgeFromContext(app);
  const common = {
    env: options.env,
    ...(options.apiAuthorization === undefined ? {} : { apiAuthorization: options.apiAuthorization }),
    ...(options.emulator === true
      ? { synthesizer: new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }) }
      : {}),
  };
  const orders = new OutboxOrdersStack(app, EXAMPLE_STACK_NAMES.orders, {
    ...common,
    ...(apiEdge === undefined ? {} : { apiEdge }),
    ...(options.fifo === true ? { fifo: true } : {}),
    description: 'Serverless transactional outbox example: the order service (the producer)',
  });
  // The account's CloudWatch role is one per account and region: the order service's stack holds it.
  const subscriberEdge = apiEdge === undefined ? undefined : { ...apiEdge, cloudWatchRole: false };
  const inventory = new OutboxInventoryStack(app, EXAMPLE_STACK_NAMES.inventory, {
    ...common,
    ...(subscriberEdge === undefined ? {} : { apiEdge: subscriberEdge }),
    orderEvents: orders.outbox.subscriptionSpec(ORDER_SUBSCRIBERS.inventory),
    description: 'Serverless transactional outbox example: the inventory service (a subscriber)',
  });
  const loyalty = new OutboxLoyaltyStack(app, EXAMPLE_STACK_NAMES.loyalty, {
    ...common,
    ...(subscriberEdge === undefined ? {} : { apiEdge: subscriberEdge }),
    orderEvents: orders.outbox.subscriptionSpec(ORDER_SUBSCRIBERS.loyalty),
    description: 'Serverless transactional outbox example: the loyalty service (a subscriber)',
  });
  inventory.addStackDependency(orders, 'the producer creates the receipt queue its subscribers send to');
  loyalty.addStackDependency(orders, 'the producer creates the receipt queue its subscribers send to');
  return { orders, inventory, loyalty };
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
