/**
 * The CDK app (`cdk synth`, `cdk deploy --all`): the order, inventory and loyalty services. Offline-safe: no lookups, so it synthesizes without credentials.
 * `-c emulator=true` synthesizes for moto or LocalStack (no BootstrapVersion rule).
 */
import { App } from 'aws-cdk-lib';
import { createExampleApp } from './stacks/example-app.ts';

const app = new App();
const emulator = app.node.tryGetContext('emulator');
createExampleApp(app, {
  emulator: emulator === true || emulator === 'true',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
