/**
 * The apps the security checks (cfn-lint, cdk-nag) run on: the example app, and two service stacks that use
 * the `TransactionalOutbox` construct as a user of `serverless-outbox/cdk` writes them.
 */
import { App, Stack, Stage } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as kms from 'aws-cdk-lib/aws-kms';
import { OutboxSubscription, TransactionalOutbox } from 'serverless-outbox/cdk';
import { buildExampleApp } from '../../../infra/synth-template.ts';
import { CONSUMER_ENTRY, ORDER_EVENTS } from '../constructs/outbox-service.ts';

/** A synthesized app and the stacks in it the checks read. */
export interface CheckedApp {
  readonly app: Stage;
  readonly stacks: readonly Stack[];
}

/** Options of {@link exampleApp}. */
export interface ExampleAppOptions {
  /** Where the app writes its cloud assembly. */
  readonly outdir: string;
  /** The variant the local runtime deploys to an emulator. */
  readonly emulator?: boolean;
}

/** The example app (`cdk synth`'s: the order, inventory and loyalty stacks), synthesized. */
export function exampleApp(options: ExampleAppOptions): CheckedApp {
  const example = buildExampleApp({ emulator: options.emulator === true }, options.outdir);
  const app = Stage.of(example.orders);
  if (app === undefined) throw new Error('the example stacks are in no app');
  app.synth();
  return { app, stacks: [example.orders, example.inventory, example.loyalty] };
}

/** An outbox with every default and one consumer: the least a user writes. */
export function minimalOutboxStack(app: App): TransactionalOutbox {
  const stack = new Stack(app, 'MinimalOutbox');
  const outbox = new TransactionalOutbox(stack, 'Outbox', { queues: ORDER_EVENTS });
  outbox.addConsumer('Consumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
  return outbox;
}

/** The path of the REST API in {@link fullOutboxStack}: the user's, only its `/admin` routes are the outbox's. */
export const USER_API_ID = 'Api';

/**
 * An outbox with every option that adds resources: a customer-managed key, the S3 archive, the admin API (on a
 * REST API of the user's) and a subscriber (so the receipts), with one consumer confirming in the outbox.
 */
export function fullOutboxStack(app: App): TransactionalOutbox {
  const stack = new Stack(app, 'FullOutbox');
  const encryptionKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const outbox = new TransactionalOutbox(stack, 'Outbox', {
    queues: ORDER_EVENTS,
    subscribers: { shipping: { topics: ['order.shipped'] } },
    archive: true,
    encryptionKey,
  });
  outbox.addConsumer('Consumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
  const api = new apigateway.RestApi(stack, USER_API_ID, { cloudWatchRole: false });
  outbox.addAdminApi(api);
  return outbox;
}

/**
 * The subscriber `shipping` of {@link fullOutboxStack}'s outbox in a stack of its own, with a key of its own for its
 * queues and inbox: what a subscribing service writes.
 */
export function subscriberStack(app: App, producer: TransactionalOutbox): OutboxSubscription {
  const stack = new Stack(app, 'ShippingSubscriber');
  const encryptionKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  return new OutboxSubscription(stack, 'OrderEvents', {
    spec: producer.subscriptionSpec('shipping'),
    entry: CONSUMER_ENTRY,
    encryptionKey,
  });
}

/**
 * A test app holding {@link minimalOutboxStack}, {@link fullOutboxStack} and its {@link subscriberStack}, synthesized
 * into `outdir`.
 */
export function constructApp(outdir: string): CheckedApp & {
  readonly minimal: TransactionalOutbox;
  readonly full: TransactionalOutbox;
  readonly subscriber: OutboxSubscription;
} {
  // The context of the other construct tests' apps: path metadata, and no bundling.
  const app = new App({
    outdir,
    context: { 'aws:cdk:enable-path-metadata': true, 'aws:cdk:bundling-stacks': [] },
  });
  const minimal = minimalOutboxStack(app);
  const full = fullOutboxStack(app);
  const subscriber = subscriberStack(app, full);
  app.synth();
  return {
    app,
    stacks: [Stack.of(minimal), Stack.of(full), Stack.of(subscriber)],
    minimal,
    full,
    subscriber,
  };
}
