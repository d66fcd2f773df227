import { readFileSync } from 'node:fs';
import { type App, DefaultStackSynthesizer, type Environment } from 'aws-cdk-lib';
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
}

/** The example stack's name (`cdk deploy` deploys it under this name). */
export const EXAMPLE_STACK_NAME = 'OutboxExample';

/** The example stack in `app`. */
export function createExampleStack(app: App, options: ExampleStackOptions = {}): OutboxExampleStack {
  return new OutboxExampleStack(app, EXAMPLE_STACK_NAME, {
    env: options.env,
    description: 'Serverless transactional outbox: order and inventory example',
    ...(options.emulator === true
      ? { synthesizer: new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }) }
      : {}),
  });
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
