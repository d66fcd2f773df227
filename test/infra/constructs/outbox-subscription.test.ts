import { Duration, Stack } from 'aws-cdk-lib';
import type { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import * as kms from 'aws-cdk-lib/aws-kms';
import {
  OutboxSubscription,
  type OutboxSubscriptionProps,
  TransactionalOutbox,
  type TransactionalOutboxProps,
} from 'serverless-outbox/cdk';
import { describe, expect, it } from 'vitest';
import {
  actionsOf,
  type CfnTemplate,
  environmentOf,
  functionId,
  functionIdByService,
  idsByRole,
  idsOfType,
  mappingFrom,
  type PolicyStatement,
  propertiesOf,
  references,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';
import { CONSUMER_ENTRY } from './outbox-service.ts';

const ORDERED = {
  'order.created': { scope: 'order', sequence: 'aggregate-version' },
  'order.cancelled': { scope: 'order', sequence: 'aggregate-version' },
} as const;

interface Services {
  readonly producer: Stack;
  readonly outbox: TransactionalOutbox;
  readonly inventory: Stack;
  readonly loyalty: Stack;
  readonly subscriptions: Readonly<Record<'inventory' | 'loyalty', OutboxSubscription>>;
}

/**
 * A producer stack `Orders` delivering both order topics to `inventory` and `loyalty`, each
 * subscriber in a stack of its own, as a user of `serverless-outbox/cdk` writes them in one app.
 */
function services(
  options: {
    readonly outbox?: Partial<TransactionalOutboxProps>;
    readonly subscription?: Partial<OutboxSubscriptionProps>;
    readonly key?: boolean;
  } = {},
): Services {
  const app = testApp();
  const producer = new Stack(app, 'Orders');
  const outbox = new TransactionalOutbox(producer, 'Outbox', {
    subscribers: {
      inventory: { topics: ['order.created', 'order.cancelled'] },
      loyalty: { topics: ['order.created', 'order.cancelled'] },
    },
    ordering: ORDERED,
    ...(options.key === true
      ? { encryptionKey: new kms.Key(producer, 'Key', { enableKeyRotation: true }) }
      : {}),
    ...options.outbox,
  });
  const subscriber = (name: 'inventory' | 'loyalty', stackId: string) => {
    const stack = new Stack(app, stackId);
    const subscription = new OutboxSubscription(stack, 'OrderEvents', {
      spec: outbox.subscriptionSpec(name),
      entry: CONSUMER_ENTRY,
      ...options.subscription,
    });
    return { stack, subscription };
  };
  const inventory = subscriber('inventory', 'Inventory');
  const loyalty = subscriber('loyalty', 'Loyalty');
  return {
    producer,
    outbox,
    inventory: inventory.stack,
    loyalty: loyalty.stack,
    subscriptions: { inventory: inventory.subscription, loyalty: loyalty.subscription },
  };
}

/** A value as a template writes it, with the pseudo parameters and joins rendered as text. */
function text(stack: Stack, value: unknown): string {
  return JSON.stringify(stack.resolve(value));
}

/** The one statement of `statements` that allows `action` on a resource whose rendering contains `fragment`. */
function allows(statements: readonly PolicyStatement[], action: string, fragment: string): boolean {
  return statements.some(
    (s) => actionsOf(s).includes(action) && resourcesOf(s).some((r) => JSON.stringify(r).includes(fragment)),
  );
}

/** The statements of the resource policy (`AWS::SQS::QueuePolicy`) that names queue `queueId`. */
function queuePolicyStatements(template: CfnTemplate, queueId: string): PolicyStatement[] {
  return idsOfType(template, 'AWS::SQS::QueuePolicy')
    .map((id) => propertiesOf(template, id))
    .filter((policy) => references(policy.Queues, queueId))
    .flatMap((policy) => (policy.PolicyDocument as { Statement: PolicyStatement[] }).Statement);
}

/** The allow statements that name a principal (not the TLS-only deny every queue has). */
function grantsToPrincipals(statements: readonly PolicyStatement[]): PolicyStatement[] {
  return statements.filter((s) => s.Effect === 'Allow');
}

describe("the producer's side", () => {
  it(
    "sends each subscriber's deliveries to the queue its name derives, in the subscriber's account, from roles under the senders' path",
    () => {
      const { producer, outbox } = services();
      const template = templateOf(producer);

      expect(outbox.outboxName).toBe('Orders-Outbox');
      for (const fn of ['Outbox/Relay', 'Outbox/Sweeper']) {
        const id = functionId(template, fn);
        const subscriptions = text(producer, environmentOf(template, id).SUBSCRIPTIONS);
        expect(subscriptions).toContain('/Orders-Outbox-inventory');
        expect(subscriptions).toContain('/Orders-Outbox-loyalty');
        expect(subscriptions).toContain('https://sqs.');
        const statements = roleStatements(template, id);
        expect(allows(statements, 'sqs:SendMessage', ':Orders-Outbox-inventory')).toBe(true);
        expect(allows(statements, 'sqs:SendMessage', ':Orders-Outbox-loyalty')).toBe(true);
        const roleId = (propertiesOf(template, id).Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
        expect(propertiesOf(template, roleId).Path).toBe('/outbox/Orders-Outbox/senders/');
      }
      // The subscribers' queues are theirs: none is created here.
      expect(idsByRole(template, 'subscriber-queue')).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "names its receipt queue for the subscribers, and lets exactly their consumers' roles send to it",
    () => {
      const { producer, outbox } = services();
      const template = templateOf(producer);
      const receiptQueue = idsByRole(template, 'receipt-queue')[0] as string;

      expect(propertiesOf(template, receiptQueue).QueueName).toBe('Orders-Outbox-receipts');
      const grants = grantsToPrincipals(queuePolicyStatements(template, receiptQueue));
      expect(grants).toHaveLength(1);
      const [grant] = grants;
      expect(actionsOf(grant as PolicyStatement)).toEqual(['sqs:SendMessage']);
      const patterns = text(producer, (grant as { Condition: unknown }).Condition);
      expect(patterns).toContain('role/outbox/Orders-Outbox/subscribers/inventory/*');
      expect(patterns).toContain('role/outbox/Orders-Outbox/subscribers/loyalty/*');
      expect(patterns).toContain('ArnLike');
      expect(outbox.receipts).toBeDefined();
      expect(mappingFrom(template, receiptQueue)).toMatchObject({ BatchSize: 10 });
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "gives the subscribers' own retry policies to the relay and the sweeper",
    () => {
      const slow = { baseDelayMs: 60_000, multiplier: 2, maxDelayMs: 600_000, maxAttempts: 6 };
      const { producer, outbox } = services({
        outbox: {
          subscribers: {
            inventory: { topics: ['order.created', 'order.cancelled'] },
            loyalty: { topics: ['order.created', 'order.cancelled'], retryPolicy: slow },
          },
        },
      });
      const template = templateOf(producer);

      for (const fn of ['Outbox/Relay', 'Outbox/Sweeper']) {
        expect(
          JSON.parse(environmentOf(template, functionId(template, fn)).SUBSCRIBER_RETRY_POLICIES as string),
        ).toEqual({
          loyalty: slow,
        });
      }
      // The control topics (erase, skip) travel on the subscriber's queue too, so its
      // inbox horizon must outlast their retries as well.
      expect(outbox.subscriptionSpec('loyalty').retryPolicies).toEqual({
        'order.created': slow,
        'order.cancelled': slow,
        'outbox.erase': slow,
        'outbox.skip': slow,
      });
      expect(outbox.subscriptionSpec('inventory').retryPolicies['order.created']).not.toEqual(slow);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'gives a subscriber plain values, and refers to no resource of a subscriber: the subscribers deploy after it',
    () => {
      const { producer, outbox, inventory, loyalty } = services({ outbox: { claimCheck: false } });

      expect(outbox.subscriptionSpec('inventory')).toEqual({
        outboxName: 'Orders-Outbox',
        subscriber: 'inventory',
        topics: ['order.created', 'order.cancelled'],
        orderedTopics: {
          'order.created': { scope: 'order', sequence: 'aggregate-version', gapTimeoutMs: 300_000 },
          'order.cancelled': { scope: 'order', sequence: 'aggregate-version', gapTimeoutMs: 300_000 },
        },
        fifo: false,
        retryPolicies: expect.objectContaining({ 'order.created': expect.any(Object) }),
        confirmDeadlineMs: 300_000,
      });
      expect(() => outbox.subscriptionSpec('shipping')).toThrow("no subscriber 'shipping'");
      // No reference either way: three stacks that deploy in any order (the producer first, stated).
      for (const stack of [producer, inventory, loyalty]) {
        templateOf(stack);
        expect(stack.dependencies).toEqual([]);
      }
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "tells a subscriber the claim-check bucket, whose policy lets the subscribers' roles read payloads",
    () => {
      const { producer, outbox, inventory } = services();
      const template = templateOf(producer);
      const spec = outbox.subscriptionSpec('inventory');

      expect(spec.claimCheckBucketName).toBeDefined();
      expect(spec.claimCheckExpirationDays).toBeGreaterThan(30);
      const bucketPolicy = idsOfType(template, 'AWS::S3::BucketPolicy')
        .map((id) => text(producer, propertiesOf(template, id).PolicyDocument))
        .find((document) => document.includes('s3:GetObject'));
      expect(bucketPolicy).toContain('role/outbox/Orders-Outbox/subscribers/inventory/*');
      // Its name is derived on both sides, as the queues' are: neither stack refers to the other.
      expect(text(producer, spec.claimCheckBucketName)).toContain('orders-outbox-');
      const bucket = idsOfType(template, 'AWS::S3::Bucket')[0] as string;
      expect(text(producer, propertiesOf(template, bucket).BucketName)).toBe(
        text(producer, spec.claimCheckBucketName),
      );
      templateOf(inventory);
      expect(inventory.dependencies).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'is refused at synth with a bad name, a bad subscriber, a topic both queued and subscribed, or 11 subscribers',
    () => {
      const refused = (props: Partial<TransactionalOutboxProps>): string => {
        const stack = new Stack(testApp(), 'Refused');
        new TransactionalOutbox(stack, 'Outbox', {
          queues: { a: { topics: ['order.shipped'] } },
          ...props,
        });
        try {
          templateOf(stack);
        } catch (error) {
          return String((error as Error).message);
        }
        throw new Error('synth did not refuse it');
      };

      expect(refused({ name: 'has space', subscribers: { a: { topics: ['order.created'] } } })).toContain(
        "name must be 1–34 letters, digits, - or _, got 'has space'",
      );
      expect(refused({ subscribers: { Inventory: { topics: ['order.created'] } } })).toContain(
        "subscriber 'Inventory' must be a lowercase name",
      );
      expect(refused({ subscribers: { inventory: { topics: ['order.shipped'] } } })).toContain(
        "topic 'order.shipped' is routed to a queue and has subscribers",
      );
      expect(
        refused({
          subscribers: Object.fromEntries(
            Array.from({ length: 11 }, (_, n) => [`s${n}`, { topics: ['order.created'] }]),
          ),
        }),
      ).toContain("topic 'order.created' has 11 subscribers; at most 10");
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'keeps a drainOnly queue and its consumer for the messages written before the topics got subscribers',
    () => {
      const { producer, outbox } = services({
        outbox: {
          queues: { orderEvents: { topics: ['order.created', 'order.cancelled'], drainOnly: true } },
        },
      });
      outbox.addConsumer('InventoryConsumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
      const template = templateOf(producer);
      const relay = environmentOf(template, functionId(template, 'Outbox/Relay'));

      // A row without a subscriber (written before) goes to the old queue, a subscriber's delivery to its queue.
      expect(text(producer, relay.TOPIC_QUEUES)).toContain('order.created');
      expect(text(producer, relay.SUBSCRIPTIONS)).toContain('/Orders-Outbox-inventory');
      // The old consumer still confirms its messages in the outbox, and the sweeper reconciles them through it.
      expect(environmentOf(template, functionId(template, 'Outbox/InventoryConsumer'))).toHaveProperty(
        'OUTBOX_TABLE',
      );
      expect(
        text(producer, environmentOf(template, functionId(template, 'Outbox/Sweeper')).DELIVERY_INBOXES),
      ).toContain('order.created');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'refuses a drainOnly queue of topics without subscribers',
    () => {
      const stack = new Stack(testApp(), 'Draining');
      new TransactionalOutbox(stack, 'Outbox', {
        queues: { old: { topics: ['order.created', 'order.shipped'], drainOnly: true } },
        subscribers: { inventory: { topics: ['order.created'] } },
      });

      expect(() => templateOf(stack)).toThrow(
        "queue 'old' is drainOnly, and its topics 'order.shipped' have no subscribers",
      );
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "points addConsumer for a subscriber to the subscriber's own stack",
    () => {
      const { outbox } = services();

      expect(() => outbox.addConsumer('Inventory', { queue: 'inventory', entry: CONSUMER_ENTRY })).toThrow(
        "'inventory' is a subscriber: add its consumer in its own stack with an OutboxSubscription",
      );
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "refuses a subscriber named 'receipts', whose queue would be the receipt queue",
    () => {
      const stack = new Stack(testApp(), 'Orders');
      new TransactionalOutbox(stack, 'Outbox', { subscribers: { receipts: { topics: ['order.created'] } } });

      expect(() => templateOf(stack)).toThrow("subscriber 'receipts': the name is the receipt queue's");
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'refuses a subscriber of more topics than a receipt condition can list with the control topics',
    () => {
      const stack = new Stack(testApp(), 'Orders');
      const topics = Array.from({ length: 99 }, (_, i) => `order.event${i}`);
      new TransactionalOutbox(stack, 'Outbox', { subscribers: { inventory: { topics } } });

      expect(() => templateOf(stack)).toThrow("subscriber 'inventory' receives 99 topics; at most 98");
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'refuses a subscriber declared in an account when the producer stack names none: nothing could address it back',
    () => {
      const stack = new Stack(testApp(), 'Orders');
      new TransactionalOutbox(stack, 'Outbox', {
        subscribers: { loyalty: { topics: ['order.created'], account: '222222222222' } },
        claimCheck: false,
      });

      expect(() => templateOf(stack)).toThrow(
        "subscriber 'loyalty' is declared in account 222222222222, and the outbox's stack has no account of its own",
      );
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'gives outboxes whose names differ only in case or separators their own claim-check buckets',
    () => {
      const bucketOf = (name: string) => {
        const stack = new Stack(testApp(), 'Orders', {
          env: { account: '111111111111', region: 'eu-west-1' },
        });
        const outbox = new TransactionalOutbox(stack, 'Outbox', {
          name,
          subscribers: { inventory: { topics: ['order.created'] } },
        });
        const name_ = outbox.subscriptionSpec('inventory').claimCheckBucketName;
        return typeof name_ === 'string' ? name_ : text(stack, name_);
      };
      const names = [
        'Orders-Outbox',
        'orders-outbox',
        'orders_outbox',
        'Orders-Outbox-For-The-Shop-A',
        'Orders-Outbox-For-The-Shop-B',
      ];
      const buckets = names.map(bucketOf);

      expect(new Set(buckets).size).toBe(names.length);
      for (const bucket of buckets) {
        expect(bucket).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
        expect(bucket).toContain('-111111111111-eu-west-1');
      }
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'shortens a default name that would be too long into a unique one',
    () => {
      const stack = new Stack(testApp(), 'AVeryLongServiceStackNameForOrders');
      const outbox = new TransactionalOutbox(stack, 'TransactionalOutbox', {
        subscribers: { inventory: { topics: ['order.created'] } },
      });

      expect(outbox.outboxName.length).toBeLessThanOrEqual(34);
      expect(outbox.outboxName).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(outbox.subscriptionSpec('inventory').outboxName).toBe(outbox.outboxName);
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe("a subscriber's stack", () => {
  it(
    "creates the queue the producer sends to, which exactly the producer's senders may send to",
    () => {
      const { inventory } = services();
      const template = templateOf(inventory);
      const [queue] = idsByRole(template, 'subscriber-queue');
      const properties = propertiesOf(template, queue as string);

      expect(properties.QueueName).toBe('Orders-Outbox-inventory');
      expect(template.Resources[queue as string]?.Metadata).toMatchObject({
        'serverless-outbox:subscriber': 'inventory',
        'serverless-outbox:outbox': 'Orders-Outbox',
        'serverless-outbox:topics': ['order.created', 'order.cancelled'],
      });
      expect(idsByRole(template, 'subscriber-dead-letter-queue')).toHaveLength(1);
      // Its operators' redrives are audited in its own stack, as a producer's are in the producer's.
      expect(idsByRole(template, 'audit-table')).toHaveLength(1);
      const grants = grantsToPrincipals(queuePolicyStatements(template, queue as string));
      expect(grants).toHaveLength(1);
      expect(actionsOf(grants[0] as PolicyStatement)).toEqual(['sqs:SendMessage']);
      expect(text(inventory, grants[0])).toContain('role/outbox/Orders-Outbox/senders/*');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'runs a consumer that keys its inbox by subscriber, confirms by receipt, and knows the ordered topics',
    () => {
      const { inventory, loyalty } = services();
      const template = templateOf(inventory);
      const consumer = functionId(template, 'OrderEvents/Consumer');
      const env = environmentOf(template, consumer);

      expect(env).toMatchObject({ SUBSCRIBER: 'inventory' });
      expect(env).not.toHaveProperty('OUTBOX_TABLE');
      expect(text(inventory, env.RECEIPT_QUEUE_URL)).toContain('/Orders-Outbox-receipts');
      expect(JSON.parse(env.ORDERED_TOPICS as string)).toHaveProperty('order.cancelled');
      expect(env).toHaveProperty('CLAIM_CHECK_BUCKET');
      const roleId = (propertiesOf(template, consumer).Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      expect(propertiesOf(template, roleId).Path).toBe('/outbox/Orders-Outbox/subscribers/inventory/');
      const loyaltyEnv = environmentOf(
        templateOf(loyalty),
        functionId(templateOf(loyalty), 'OrderEvents/Consumer'),
      );
      expect(loyaltyEnv).toMatchObject({ SUBSCRIBER: 'loyalty' });
      expect(Object.keys(JSON.parse(loyaltyEnv.ORDERED_TOPICS as string))).toEqual([
        'order.created',
        'order.cancelled',
      ]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "holds SendMessage on the producer's receipt queue, and nothing on any table but its own inbox",
    () => {
      const { inventory } = services();
      const template = templateOf(inventory);
      const consumer = functionId(template, 'OrderEvents/Consumer');
      const statements = roleStatements(template, consumer);
      const [inbox] = idsByRole(template, 'inbox-table');

      expect(allows(statements, 'sqs:SendMessage', ':Orders-Outbox-receipts')).toBe(true);
      const onTables = statements.filter((s) =>
        actionsOf(s).some((action) => action.startsWith('dynamodb:')),
      );
      expect(onTables.length).toBeGreaterThan(0);
      for (const statement of onTables) {
        for (const target of resourcesOf(statement)) expect(references(target, inbox as string)).toBe(true);
      }
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'alarms on its own dead letters and its consumer, on a topic of its own',
    () => {
      const { subscriptions } = services();

      expect(Object.keys(subscriptions.inventory.alarms).sort()).toEqual([
        'deadLetters/inventory',
        'errors/Consumer',
        'queueAge/inventory',
        'throttles/Consumer',
      ]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'alarms when the oldest message of its queue is older than queueMessageAge (30 minutes unless given)',
    () => {
      const queueAgeAlarm = (subscription: OutboxSubscription) => {
        const template = templateOf(Stack.of(subscription));
        const alarm = subscription.alarms['queueAge/inventory'];
        if (alarm === undefined) throw new Error('no queueAge/inventory alarm');
        const id = String(Stack.of(subscription).resolve((alarm.node.defaultChild as CfnAlarm).logicalId));
        return { template, properties: propertiesOf(template, id) };
      };
      const { template, properties } = queueAgeAlarm(services().subscriptions.inventory);
      const [queue] = idsByRole(template, 'subscriber-queue');
      const [alarmTopic] = idsByRole(template, 'alarm-topic');

      expect(properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 300,
        Threshold: 1_800,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: alarmTopic }],
        OKActions: [{ Ref: alarmTopic }],
      });
      expect(properties.AlarmDescription).toContain('npx outbox stats --stack');
      const [dashboard] = idsOfType(template, 'AWS::CloudWatch::Dashboard');
      const body = JSON.stringify(propertiesOf(template, dashboard as string).DashboardBody);
      expect(body).toContain('inventory: age of the oldest message (s)');
      expect(body).toContain('ApproximateAgeOfOldestMessage');
      const custom = services({
        subscription: { alarmThresholds: { queueMessageAge: Duration.minutes(5) } },
      }).subscriptions.inventory;
      expect(queueAgeAlarm(custom).properties.Threshold).toBe(300);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "uses the producer's key for receipts and payloads, and the producer's key policy lets its consumer",
    () => {
      const { producer, inventory } = services({ key: true });
      const statements = roleStatements(
        templateOf(inventory),
        functionId(templateOf(inventory), 'OrderEvents/Consumer'),
      );

      expect(statements.some((s) => actionsOf(s).includes('kms:GenerateDataKey*'))).toBe(true);
      const producerTemplate = templateOf(producer);
      const keyPolicy = idsOfType(producerTemplate, 'AWS::KMS::Key')
        .map((id) => text(producer, propertiesOf(producerTemplate, id).KeyPolicy))
        .find((policy) => policy.includes('subscribers/inventory'));
      expect(keyPolicy).toContain('kms:GenerateDataKey*');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'makes a FIFO queue when the producer declares the subscriber FIFO',
    () => {
      const { inventory } = services({
        outbox: {
          subscribers: {
            inventory: { topics: ['order.created', 'order.cancelled'], fifo: true },
            loyalty: { topics: ['order.created', 'order.cancelled'] },
          },
        },
      });
      const template = templateOf(inventory);
      const [queue] = idsByRole(template, 'subscriber-queue');

      expect(propertiesOf(template, queue as string)).toMatchObject({
        QueueName: 'Orders-Outbox-inventory.fifo',
        FifoQueue: true,
      });
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "is refused at synth when its queues keep a copy longer than the producer's claim check keeps the payload",
    () => {
      const { inventory } = services({
        outbox: { retention: Duration.days(1) },
        subscription: {
          queueProps: { retentionPeriod: Duration.days(10), deadLetterRetention: Duration.days(14) },
        },
      });

      expect(() => templateOf(inventory)).toThrow('the producer keeps claim-checked payloads');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'is refused at synth when its inbox forgets a message before its last copy can come',
    () => {
      const { inventory } = services({ subscription: { inboxRetention: Duration.days(2) } });

      expect(() => templateOf(inventory)).toThrow('must be longer than the redelivery horizon');
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('a producer and a subscriber in different accounts', () => {
  it(
    "synthesize, each resource policy naming the other account's roles by their path",
    () => {
      const app = testApp();
      const producer = new Stack(app, 'Orders', { env: { account: '111111111111', region: 'eu-west-1' } });
      const outbox = new TransactionalOutbox(producer, 'Outbox', {
        subscribers: { loyalty: { topics: ['order.created'], account: '222222222222' } },
        claimCheck: false,
      });
      const subscriber = new Stack(app, 'Loyalty', { env: { account: '222222222222', region: 'eu-west-1' } });
      new OutboxSubscription(subscriber, 'OrderEvents', {
        spec: outbox.subscriptionSpec('loyalty'),
        entry: CONSUMER_ENTRY,
      });
      const producerTemplate = templateOf(producer);
      const subscriberTemplate = templateOf(subscriber);

      const senders = roleStatements(producerTemplate, functionId(producerTemplate, 'Outbox/Relay'));
      expect(allows(senders, 'sqs:SendMessage', ':222222222222:Orders-Outbox-loyalty')).toBe(true);
      const receipts = grantsToPrincipals(
        queuePolicyStatements(producerTemplate, idsByRole(producerTemplate, 'receipt-queue')[0] as string),
      );
      expect(text(producer, receipts)).toContain('arn:');
      expect(text(producer, receipts)).toContain(':iam::222222222222:root');
      expect(text(producer, receipts)).toContain(
        'iam::222222222222:role/outbox/Orders-Outbox/subscribers/loyalty/*',
      );

      const queue = idsByRole(subscriberTemplate, 'subscriber-queue')[0] as string;
      const allowed = text(subscriber, grantsToPrincipals(queuePolicyStatements(subscriberTemplate, queue)));
      expect(allowed).toContain(':iam::111111111111:root');
      expect(allowed).toContain('iam::111111111111:role/outbox/Orders-Outbox/senders/*');
      const consumer = roleStatements(
        subscriberTemplate,
        functionId(subscriberTemplate, 'OrderEvents/Consumer'),
      );
      expect(allows(consumer, 'sqs:SendMessage', 'sqs:eu-west-1:111111111111:Orders-Outbox-receipts')).toBe(
        true,
      );
      expect(
        text(
          subscriber,
          environmentOf(subscriberTemplate, functionId(subscriberTemplate, 'OrderEvents/Consumer')),
        ),
      ).toContain('sqs.eu-west-1.');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'refuses a subscription deployed to another account than the producer declared for it',
    () => {
      const app = testApp();
      const producer = new Stack(app, 'Orders', { env: { account: '111111111111', region: 'eu-west-1' } });
      const outbox = new TransactionalOutbox(producer, 'Outbox', {
        subscribers: { loyalty: { topics: ['order.created'], account: '222222222222' } },
        claimCheck: false,
      });
      const elsewhere = new Stack(app, 'Loyalty', { env: { account: '333333333333', region: 'eu-west-1' } });
      new OutboxSubscription(elsewhere, 'OrderEvents', {
        spec: outbox.subscriptionSpec('loyalty'),
        entry: CONSUMER_ENTRY,
      });

      expect(() => templateOf(elsewhere)).toThrow(
        "the producer declared subscriber 'loyalty' in account 222222222222, and this stack is in 333333333333",
      );
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('the receipts function', () => {
  it(
    'may only UpdateItem the confirmation attributes and the topic its condition reads',
    () => {
      const { producer } = services();
      const template = templateOf(producer);
      const table = idsByRole(template, 'outbox-table')[0] as string;
      const onTable = roleStatements(template, functionIdByService(template, 'outbox-receipts')).filter((s) =>
        resourcesOf(s).some((r) => references(r, table)),
      );

      expect(onTable).toHaveLength(1);
      expect(actionsOf(onTable[0] as PolicyStatement)).toEqual(['dynamodb:UpdateItem']);
      const attributes = (onTable[0] as { Condition: Record<string, Record<string, string[]>> }).Condition[
        'ForAllValues:StringEquals'
      ]?.['dynamodb:Attributes'];
      expect(attributes).toContain('topic');
      expect(attributes).toContain('status');
      expect(attributes).not.toContain('payload');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'is not created when the outbox has no subscriber',
    () => {
      const stack = new Stack(testApp(), 'Plain');
      const outbox = new TransactionalOutbox(stack, 'Outbox', {
        queues: { orderEvents: { topics: ['order.created'] } },
      });
      outbox.addConsumer('InventoryConsumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
      const template = templateOf(stack);

      expect(outbox.receipts).toBeUndefined();
      expect(() => functionIdByService(template, 'outbox-receipts')).toThrow();
      const relay = functionId(template, 'Outbox/Relay');
      const roleId = (propertiesOf(template, relay).Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      expect(propertiesOf(template, roleId).Path).toBeUndefined();
    },
    SYNTH_TIMEOUT_MS,
  );
});
