import { Duration, type Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  functionId,
  idsByRole,
  idsOfType,
  onlyId,
  propertiesOf,
  renderString,
  resolvedTarget,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, type OutboxService, outboxService } from './outbox-service.ts';

/** A service with two queues (three topics) and a consumer on `orders`, and its template. */
function monitoredService(props: Parameters<typeof outboxService>[0] = {}) {
  const service = outboxService({
    queues: {
      orders: { topics: ['order.created', 'order.cancelled'] },
      payments: { topics: ['payment.captured'] },
    },
    ...props,
  });
  service.outbox.addConsumer('InventoryConsumer', { queue: 'orders', entry: CONSUMER_ENTRY });
  return { ...service, json: templateOf(service.stack) };
}

/** The logical id of an alarm of the outbox. */
function alarmId(stack: Stack, alarm: cloudwatch.Alarm | undefined): string {
  if (alarm === undefined) throw new Error('no such alarm');
  const id: unknown = stack.resolve((alarm.node.defaultChild as cloudwatch.CfnAlarm).logicalId);
  return String(id);
}

/** The template properties of the outbox's alarm `name`. */
function alarm(
  service: OutboxService & { json: CfnTemplate },
  name: string,
): Readonly<Record<string, unknown>> {
  return propertiesOf(service.json, alarmId(service.stack, service.outbox.alarms[name]));
}

/** What every alarm of the outbox shares: one breaching 5-minute datapoint, quiet without data, the topic. */
function notifying(topicId: string) {
  return {
    ComparisonOperator: 'GreaterThanThreshold',
    EvaluationPeriods: 1,
    DatapointsToAlarm: 1,
    Period: 300,
    TreatMissingData: 'notBreaching',
    AlarmActions: [{ Ref: topicId }],
    OKActions: [{ Ref: topicId }],
  };
}

/** A name as CloudFormation gives it in a stack deployed as `stackName`. */
const asDeployedAs = (stackName: string, value: unknown) =>
  renderString(value, { ref: (id) => (id === 'AWS::StackName' ? stackName : id) });

const topicOf = (json: CfnTemplate) => onlyId(idsByRole(json, 'alarm-topic'), 'alarm topic');

/** The names the alarms of {@link monitoredService} have. */
const ALARM_NAMES = [
  'deadLetters/orders',
  'deadLetters/payments',
  'relayFailures',
  'relayIteratorAge',
  'failedMessages/order.created',
  'failedMessages/order.cancelled',
  'failedMessages/payment.captured',
  'oldestPendingAge/order.created',
  'oldestPendingAge/order.cancelled',
  'oldestPendingAge/payment.captured',
  'errors/Relay',
  'throttles/Relay',
  'errors/Sweeper',
  'throttles/Sweeper',
  'errors/InventoryConsumer',
  'throttles/InventoryConsumer',
];

let service: ReturnType<typeof monitoredService>;

beforeAll(() => {
  service = monitoredService();
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox alarms', () => {
  it('has the documented alarms, by name, and no other', () => {
    expect(Object.keys(service.outbox.alarms).sort()).toEqual([...ALARM_NAMES].sort());
    expect(idsOfType(service.json, 'AWS::CloudWatch::Alarm')).toHaveLength(ALARM_NAMES.length);
  });

  it('names each alarm after the deployed stack, the outbox and what it watches', () => {
    expect(asDeployedAs('Shop', alarm(service, 'failedMessages/order.created').AlarmName)).toBe(
      'Shop-Outbox-failedMessages-order.created',
    );
    expect(asDeployedAs('Shop', alarm(service, 'errors/InventoryConsumer').AlarmName)).toBe(
      'Shop-Outbox-errors-InventoryConsumer',
    );
  });

  it.each(ALARM_NAMES)(
    '%s notifies the alarm topic on alarm and on OK, and is quiet without data',
    (name) => {
      expect(alarm(service, name)).toMatchObject(notifying(topicOf(service.json)));
      expect(alarm(service, name).AlarmDescription).toEqual(expect.any(String));
    },
  );

  it('alarms on any message in each topic queue’s dead-letter queue', () => {
    for (const name of ['orders', 'payments']) {
      const deadLetters = service.outbox.queues[name]?.deadLetterQueue;
      if (deadLetters === undefined) throw new Error(`no queue ${name}`);
      expect(alarm(service, `deadLetters/${name}`), name).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [expect.any(String), 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: 0,
      });
      const dimension = (alarm(service, `deadLetters/${name}`).Dimensions as { Value: unknown }[])[0];
      expect(dimension?.Value).toEqual({
        'Fn::GetAtt': [resolvedTarget(service.stack, deadLetters.queueUrl), 'QueueName'],
      });
    }
  });

  it('alarms on any record in the relay’s failure queue', () => {
    expect(alarm(service, 'relayFailures')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: {
            'Fn::GetAtt': [resolvedTarget(service.stack, service.outbox.failureQueue.queueUrl), 'QueueName'],
          },
        },
      ],
      Statistic: 'Maximum',
      Threshold: 0,
    });
  });

  it('alarms on any FAILED message of each topic, from the sweeper’s FailedMessages gauge', () => {
    for (const topic of ['order.created', 'order.cancelled', 'payment.captured']) {
      expect(alarm(service, `failedMessages/${topic}`), topic).toMatchObject({
        Namespace: 'ServerlessOutbox',
        MetricName: 'FailedMessages',
        Dimensions: [
          { Name: 'service', Value: 'outbox-sweeper' },
          { Name: 'topic', Value: topic },
        ],
        Statistic: 'Maximum',
        Threshold: 0,
      });
    }
  });

  it('alarms when a topic’s oldest PENDING message is older than 900 s', () => {
    expect(alarm(service, 'oldestPendingAge/payment.captured')).toMatchObject({
      Namespace: 'ServerlessOutbox',
      MetricName: 'OldestPendingAgeSeconds',
      Dimensions: [
        { Name: 'service', Value: 'outbox-sweeper' },
        { Name: 'topic', Value: 'payment.captured' },
      ],
      Statistic: 'Maximum',
      Threshold: 900,
    });
  });

  it('alarms when the relay is more than 300 000 ms behind the outbox stream', () => {
    expect(alarm(service, 'relayIteratorAge')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(service.json, 'Outbox/Relay') } }],
      Statistic: 'Maximum',
      Threshold: 300_000,
    });
  });

  it.each(['Relay', 'Sweeper', 'InventoryConsumer'])('alarms on any error or throttle of %s', (name) => {
    const dimensions = [{ Name: 'FunctionName', Value: { Ref: functionId(service.json, `Outbox/${name}`) } }];
    expect(alarm(service, `errors/${name}`)).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: dimensions,
      Statistic: 'Sum',
      Threshold: 0,
    });
    expect(alarm(service, `throttles/${name}`)).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: dimensions,
      Statistic: 'Sum',
      Threshold: 0,
    });
  });

  it('reads the outbox metrics from the namespace it gives the functions', () => {
    const custom = monitoredService({ metricsNamespace: 'Shop/Orders' });
    expect(alarm(custom, 'failedMessages/order.created').Namespace).toBe('Shop/Orders');
    expect(alarm(custom, 'oldestPendingAge/order.created').Namespace).toBe('Shop/Orders');
  });

  it('reads the sweeper’s gauges under the service name the sweeper logs as', () => {
    const renamed = monitoredService({
      sweeperFunctionProps: { environment: { POWERTOOLS_SERVICE_NAME: 'orders-sweeper' } },
    });
    expect(alarm(renamed, 'failedMessages/order.created').Dimensions).toEqual([
      { Name: 'service', Value: 'orders-sweeper' },
      { Name: 'topic', Value: 'order.created' },
    ]);
  });

  it('takes the thresholds and the period it is given', () => {
    const custom = monitoredService({
      alarmThresholds: {
        deadLetterMessages: 5,
        failureQueueMessages: 2,
        failedMessages: 3,
        oldestPendingAge: Duration.hours(1),
        relayIteratorAge: Duration.minutes(1),
        errors: 10,
        throttles: 20,
        period: Duration.minutes(15),
      },
    });
    expect(alarm(custom, 'deadLetters/orders')).toMatchObject({ Threshold: 5, Period: 900 });
    expect(alarm(custom, 'relayFailures').Threshold).toBe(2);
    expect(alarm(custom, 'failedMessages/order.created').Threshold).toBe(3);
    expect(alarm(custom, 'oldestPendingAge/order.created').Threshold).toBe(3600);
    expect(alarm(custom, 'relayIteratorAge').Threshold).toBe(60_000);
    expect(alarm(custom, 'errors/Sweeper').Threshold).toBe(10);
    expect(alarm(custom, 'throttles/InventoryConsumer').Threshold).toBe(20);
  });

  it('keeps the defaults of the thresholds it is not given', () => {
    const custom = monitoredService({ alarmThresholds: { errors: 4, oldestPendingAge: undefined } });
    expect(alarm(custom, 'errors/Relay').Threshold).toBe(4);
    expect(alarm(custom, 'oldestPendingAge/order.created').Threshold).toBe(900);
    expect(alarm(custom, 'failedMessages/order.created').Threshold).toBe(0);
  });

  it('adds a consumer’s alarms when the consumer is added', () => {
    const later = outboxService();
    expect(Object.keys(later.outbox.alarms)).not.toContain('errors/Billing');
    later.outbox.addConsumer('Billing', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
    expect(Object.keys(later.outbox.alarms)).toEqual(
      expect.arrayContaining(['errors/Billing', 'throttles/Billing']),
    );
  });

  describe('alarm topic', () => {
    it('is a new topic, encrypted with a rotating key that CloudWatch may use, and TLS only', () => {
      const { json, outbox, stack } = service;
      const topic = topicOf(json);
      expect(resolvedTarget(stack, outbox.alarmTopic.topicArn)).toBe(topic);
      const keyId = onlyId(idsOfType(json, 'AWS::KMS::Key'), 'key');
      expect(propertiesOf(json, topic).KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      const key = propertiesOf(json, keyId);
      expect(key.EnableKeyRotation).toBe(true);
      expect((key.KeyPolicy as { Statement: unknown[] }).Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        }),
      );
      const policies = idsOfType(json, 'AWS::SNS::TopicPolicy').map((id) => propertiesOf(json, id));
      const statements = policies
        .filter((policy) => JSON.stringify(policy.Topics) === JSON.stringify([{ Ref: topic }]))
        .flatMap((policy) => (policy.PolicyDocument as { Statement: unknown[] }).Statement);
      expect(statements).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    });

    it('is the topic it is given, for every alarm, and then creates neither a topic nor a key', () => {
      let given: sns.ITopic | undefined;
      const withTopic = outboxService({}, (stack) => {
        given = sns.Topic.fromTopicArn(stack, 'OpsTopic', 'arn:aws:sns:eu-west-1:123456789012:ops');
        return { alarmTopic: given };
      });
      const json = templateOf(withTopic.stack);
      expect(withTopic.outbox.alarmTopic).toBe(given);
      expect(idsOfType(json, 'AWS::SNS::Topic')).toEqual([]);
      expect(idsOfType(json, 'AWS::KMS::Key')).toEqual([]);
      for (const id of idsOfType(json, 'AWS::CloudWatch::Alarm')) {
        expect(propertiesOf(json, id).AlarmActions, id).toEqual(['arn:aws:sns:eu-west-1:123456789012:ops']);
      }
    });
  });
});

describe('TransactionalOutbox alarms per subscriber', () => {
  /** Where the outbox's stack is: a subscriber in another account needs the producer's account named. */
  const PRODUCER_ENV = { account: '123456789012', region: 'eu-west-1' };
  /** An outbox delivering the order topics to inventory and loyalty (FIFO, in another account), payments to a queue. */
  function subscribedService(props: Parameters<typeof outboxService>[0] = {}) {
    const built = outboxService(
      {
        queues: { payments: { topics: ['payment.captured'] } },
        subscribers: {
          inventory: { topics: ['order.created', 'order.cancelled'] },
          loyalty: { topics: ['order.created'], fifo: true, account: '210987654321', region: 'eu-central-1' },
        },
        ...props,
      },
      undefined,
      PRODUCER_ENV,
    );
    return { ...built, json: templateOf(built.stack) };
  }
  const SUBSCRIBER_ALARMS = [
    'failedDeliveries/inventory',
    'unconfirmedAge/inventory',
    'failedDeliveries/loyalty',
    'unconfirmedAge/loyalty',
  ];
  let subscribed: ReturnType<typeof subscribedService>;

  beforeAll(() => {
    subscribed = subscribedService();
  }, SYNTH_TIMEOUT_MS);

  it('alarms on each subscriber, named after it, beside the alarms of every topic it receives', () => {
    const names = Object.keys(subscribed.outbox.alarms);
    expect(names.filter((name) => name.includes('/inventory') || name.includes('/loyalty')).sort()).toEqual(
      [...SUBSCRIBER_ALARMS].sort(),
    );
    expect(names).toEqual(
      expect.arrayContaining(['failedMessages/order.created', 'oldestPendingAge/order.cancelled']),
    );
    expect(asDeployedAs('Shop', alarm(subscribed, 'failedDeliveries/inventory').AlarmName)).toBe(
      'Shop-Outbox-failedDeliveries-inventory',
    );
    expect(asDeployedAs('Shop', alarm(subscribed, 'unconfirmedAge/loyalty').AlarmName)).toBe(
      'Shop-Outbox-unconfirmedAge-loyalty',
    );
  });

  it.each(SUBSCRIBER_ALARMS)(
    '%s notifies the alarm topic on alarm and on OK, and is quiet without data',
    (name) => {
      expect(alarm(subscribed, name)).toMatchObject(notifying(topicOf(subscribed.json)));
    },
  );

  it('alarms on any FAILED delivery to a subscriber, from the sweeper’s FailedMessages gauge over its topics', () => {
    for (const subscriber of ['inventory', 'loyalty']) {
      expect(alarm(subscribed, `failedDeliveries/${subscriber}`), subscriber).toMatchObject({
        Namespace: 'ServerlessOutbox',
        MetricName: 'FailedMessages',
        Dimensions: [
          { Name: 'service', Value: 'outbox-sweeper' },
          { Name: 'subscriber', Value: subscriber },
        ],
        Statistic: 'Maximum',
        Threshold: 0,
      });
    }
  });

  it('alarms when a subscriber’s oldest delivery has waited more than 900 s for its receipt', () => {
    expect(alarm(subscribed, 'unconfirmedAge/inventory')).toMatchObject({
      Namespace: 'ServerlessOutbox',
      MetricName: 'OldestUnconfirmedAgeSeconds',
      Dimensions: [
        { Name: 'service', Value: 'outbox-sweeper' },
        { Name: 'subscriber', Value: 'inventory' },
      ],
      Statistic: 'Maximum',
      Threshold: 900,
    });
  });

  it('takes the thresholds it is given, and the sweeper’s service name', () => {
    const custom = subscribedService({
      alarmThresholds: { failedMessages: 2, unconfirmedAge: Duration.minutes(30) },
      sweeperFunctionProps: { environment: { POWERTOOLS_SERVICE_NAME: 'orders-sweeper' } },
    });
    expect(alarm(custom, 'failedDeliveries/loyalty').Threshold).toBe(2);
    expect(alarm(custom, 'unconfirmedAge/loyalty')).toMatchObject({
      Threshold: 1_800,
      Dimensions: [
        { Name: 'service', Value: 'orders-sweeper' },
        { Name: 'subscriber', Value: 'loyalty' },
      ],
    });
  });

  it('tells the operator what to run for that subscriber, and where its own stack’s alarms are', () => {
    const failed = String(alarm(subscribed, 'failedDeliveries/loyalty').AlarmDescription);
    expect(failed).toContain('npx outbox stats --subscriber loyalty');
    expect(failed).toContain('npx outbox list --status FAILED --subscriber loyalty');
    expect(failed).toContain('npx outbox replay <id> --subscriber loyalty --reason <why>');
    expect(failed).toContain('npx outbox stats --stack <its stack>');
    // Its queue, as its own stack names it, and where that stack is.
    expect(failed).toContain('Service-Outbox-loyalty.fifo');
    expect(failed).toContain('account 210987654321, region eu-central-1');
    const unconfirmed = String(alarm(subscribed, 'unconfirmedAge/inventory').AlarmDescription);
    expect(unconfirmed).toContain('900 s');
    expect(unconfirmed).toContain('npx outbox stats --subscriber inventory');
    expect(unconfirmed).toContain('Service-Outbox-receipts');
    expect(unconfirmed).toContain('Service-Outbox-inventory');
  });

  it('keeps every alarm description within CloudWatch’s 1024 characters, with the longest names allowed', () => {
    const longest = 'a'.repeat(40);
    const built = outboxService(
      {
        name: 'o'.repeat(34),
        queues: { payments: { topics: ['payment.captured'] } },
        subscribers: {
          [longest]: {
            topics: ['order.created'],
            fifo: true,
            account: '210987654321',
            region: 'ap-southeast-2',
          },
        },
      },
      undefined,
      PRODUCER_ENV,
    );
    const json = templateOf(built.stack);
    for (const id of idsOfType(json, 'AWS::CloudWatch::Alarm')) {
      expect(asDeployedAs('Shop', propertiesOf(json, id).AlarmDescription).length, id).toBeLessThanOrEqual(
        1024,
      );
    }
  });
});

describe('TransactionalOutbox alarm settings at synth', () => {
  /** What `app.synth()` says about the outbox built from `props`, or `undefined` when it synthesizes. */
  function synthError(props: Parameters<typeof outboxService>[0]): string | undefined {
    try {
      outboxService(props).app.synth();
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  it.each([
    [
      'a negative threshold',
      { alarmThresholds: { errors: -1 } },
      /alarmThresholds\.errors must be 0 or more/,
    ],
    ['a threshold that is no number', { alarmThresholds: { failedMessages: Number.NaN } }, /failedMessages/],
    [
      'a period that is not whole minutes',
      { alarmThresholds: { period: Duration.seconds(90) } },
      /alarmThresholds\.period must be a whole number of minutes, got 90 s/,
    ],
    ['a namespace of AWS', { metricsNamespace: 'AWS/Outbox' }, /metricsNamespace .*AWS\//],
    ['a namespace with spaces', { metricsNamespace: 'my outbox' }, /metricsNamespace/],
    ['a dashboard name with spaces', { dashboardName: 'my outbox' }, /dashboardName/],
  ] as const)('refuses %s', (_what, props, message) => {
    expect(synthError(props)).toMatch(message);
  });

  it('accepts a namespace with the characters CloudWatch allows', () => {
    expect(synthError({ metricsNamespace: 'Shop/Orders.Outbox_1#a:b-c' })).toBeUndefined();
  });
});
