import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import {
  TransactionalOutbox,
  type TransactionalOutboxProps,
} from '../../../infra/constructs/transactional-outbox.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import {
  actionsOn,
  actionsOnIndexesOf,
  type CfnTemplate,
  environmentOf,
  idsOfType,
  propertiesOf,
  references,
  refTarget,
  renderString,
  resource,
  roleStatements,
  templateJson,
} from '../template-queries.ts';

/** A bare stack holding one outbox, bundling skipped. */
function outboxStack(props: TransactionalOutboxProps): { outbox: TransactionalOutbox; stack: Stack } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Service');
  return { outbox: new TransactionalOutbox(stack, 'Outbox', props), stack };
}

/** A bare stack holding a service's inbox table and an outbox whose sweeper reconciles against it. */
function outboxWithInbox(props: Partial<TransactionalOutboxProps> = {}): {
  outbox: TransactionalOutbox;
  stack: Stack;
  inbox: dynamodb.Table;
} {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Service');
  const inbox = new dynamodb.Table(stack, 'Inbox', {
    partitionKey: { name: 'messageId', type: dynamodb.AttributeType.STRING },
  });
  const outbox = new TransactionalOutbox(stack, 'Outbox', {
    topicQueues: { orders: { topics: ['order.created'] } },
    ...props,
    sweeper: { deliveryInboxes: { 'order.created': inbox }, ...props.sweeper },
  });
  return { outbox, stack, inbox };
}

/** The logical id of a construct's CloudFormation resource. */
function idOf(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

/** The rule that invokes `functionId`, with its one target. */
function ruleTargeting(
  json: CfnTemplate,
  functionId: string,
): { id: string; properties: Readonly<Record<string, unknown>>; target: Record<string, unknown> } {
  const ids = idsOfType(json, 'AWS::Events::Rule').filter((id) =>
    references(propertiesOf(json, id).Targets, functionId),
  );
  expect(ids).toHaveLength(1);
  const id = ids[0] ?? '';
  const properties = propertiesOf(json, id);
  const targets = properties.Targets as Record<string, unknown>[];
  expect(targets).toHaveLength(1);
  return { id, properties, target: targets[0] ?? {} };
}

describe('TransactionalOutbox', () => {
  it('routes each topic to its queue in the relay environment', () => {
    const { outbox, stack } = outboxStack({
      topicQueues: {
        orders: { topics: ['order.created', 'order.cancelled'] },
        payments: { topics: ['payment.captured'] },
      },
    });
    const json = templateJson(Template.fromStack(stack));
    const relayId = stack.getLogicalId(outbox.relay.node.defaultChild as never);
    const routes: unknown = JSON.parse(renderString(environmentOf(json, relayId).TOPIC_QUEUES));
    const ordersId = stack.getLogicalId(outbox.topicQueues.orders?.queue.node.defaultChild as never);
    const paymentsId = stack.getLogicalId(outbox.topicQueues.payments?.queue.node.defaultChild as never);
    expect(routes).toEqual({
      'order.created': `\${${ordersId}}`,
      'order.cancelled': `\${${ordersId}}`,
      'payment.captured': `\${${paymentsId}}`,
    });
    expect(outbox.topicRoutes.get('payment.captured')).toBe(outbox.topicQueues.payments?.queue);
  });

  it('refuses a topic routed to two queues', () => {
    expect(() =>
      outboxStack({ topicQueues: { a: { topics: ['order.created'] }, b: { topics: ['order.created'] } } }),
    ).toThrow(/order\.created/);
  });

  it('applies the documented defaults to the relay, its mapping and the table', () => {
    const { outbox, stack } = outboxStack({ topicQueues: { orders: { topics: ['order.created'] } } });
    const json = templateJson(Template.fromStack(stack));
    const relayId = stack.getLogicalId(outbox.relay.node.defaultChild as never);
    expect(propertiesOf(json, relayId)).toMatchObject({ Timeout: 30, MemorySize: 512 });
    expect(environmentOf(json, relayId)).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'outbox-relay' });
    const [mappingId] = idsOfType(json, 'AWS::Lambda::EventSourceMapping');
    expect(propertiesOf(json, mappingId ?? '')).toMatchObject({
      BatchSize: 100,
      MaximumRetryAttempts: 10,
      MaximumRecordAgeInSeconds: 3600,
      BisectBatchOnFunctionError: true,
      ParallelizationFactor: 1,
      StartingPosition: 'TRIM_HORIZON',
      FilterCriteria: { Filters: [{ Pattern: '{"eventName":["INSERT"]}' }] },
    });
    const tableId = stack.getLogicalId(outbox.table.node.defaultChild as never);
    // The outbox holds undelivered messages: by default it outlives the stack.
    expect(resource(json, tableId).DeletionPolicy).toBe('Retain');
  });

  it('takes the queue and stream settings it is given', () => {
    const { outbox, stack } = outboxStack({
      topicQueues: {
        orders: { topics: ['order.created'], maxReceiveCount: 3, visibilityTimeout: Duration.minutes(5) },
      },
      stream: { batchSize: 10, retryAttempts: 2, parallelizationFactor: 4 },
    });
    const json = templateJson(Template.fromStack(stack));
    const queueId = stack.getLogicalId(outbox.topicQueues.orders?.queue.node.defaultChild as never);
    expect(propertiesOf(json, queueId)).toMatchObject({
      VisibilityTimeout: 300,
      RedrivePolicy: { maxReceiveCount: 3 },
    });
    const [mappingId] = idsOfType(json, 'AWS::Lambda::EventSourceMapping');
    expect(propertiesOf(json, mappingId ?? '')).toMatchObject({
      BatchSize: 10,
      MaximumRetryAttempts: 2,
      ParallelizationFactor: 4,
    });
  });

  it('sends stream batches the relay gave up on to its failure queue, which has a DLQ', () => {
    const { outbox, stack } = outboxStack({ topicQueues: { orders: { topics: ['order.created'] } } });
    const json = templateJson(Template.fromStack(stack));
    const failureId = stack.getLogicalId(outbox.failureQueue.queue.node.defaultChild as never);
    const [mappingId] = idsOfType(json, 'AWS::Lambda::EventSourceMapping');
    const destination = propertiesOf(json, mappingId ?? '').DestinationConfig;
    expect(references(destination, failureId)).toBe(true);
    const redrive = propertiesOf(json, failureId).RedrivePolicy as { deadLetterTargetArn: unknown };
    const deadLetterId = stack.getLogicalId(outbox.failureQueue.deadLetterQueue.node.defaultChild as never);
    expect(refTarget(redrive.deadLetterTargetArn)).toBe(deadLetterId);
  });

  it('lets the relay only update outbox messages: no put, delete, batch write or read', () => {
    const { outbox, stack } = outboxStack({ topicQueues: { orders: { topics: ['order.created'] } } });
    const json = templateJson(Template.fromStack(stack));
    const tableId = idOf(stack, outbox.table);
    // Its stream statements name the table too (its StreamArn); those are the event source's.
    const statements = roleStatements(json, idOf(stack, outbox.relay)).filter(
      (statement) => !JSON.stringify(statement.Resource).includes('StreamArn'),
    );
    expect([...actionsOn(statements, tableId)].sort()).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:DescribeTable',
      'dynamodb:UpdateItem',
    ]);
    expect(actionsOnIndexesOf(statements, tableId).size).toBe(0);
  });

  describe('sweeper', () => {
    it('is there by default, with the documented defaults, every minute', () => {
      const { outbox, stack } = outboxStack({ topicQueues: { orders: { topics: ['order.created'] } } });
      const json = templateJson(Template.fromStack(stack));
      const sweeperId = idOf(stack, outbox.sweeper);
      expect(propertiesOf(json, sweeperId)).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Timeout: 60,
        MemorySize: 512,
        LoggingConfig: { LogGroup: { Ref: idOf(stack, outbox.sweeperLogGroup) } },
      });
      expect(environmentOf(json, sweeperId)).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'outbox-sweeper' });
      const { id, properties, target } = ruleTargeting(json, sweeperId);
      expect(id).toBe(idOf(stack, outbox.sweeperSchedule));
      expect(properties.ScheduleExpression).toBe('rate(1 minute)');
      // A failed run is superseded by the next one: a couple of retries, not EventBridge's 185.
      expect(target.RetryPolicy).toMatchObject({ MaximumRetryAttempts: 2 });
      expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(2);
    });

    it('gives the sweeper the outbox table and the same topic routes as the relay', () => {
      const { outbox, stack } = outboxStack({
        topicQueues: { orders: { topics: ['order.created'] }, payments: { topics: ['payment.captured'] } },
      });
      const json = templateJson(Template.fromStack(stack));
      const sweeper = environmentOf(json, idOf(stack, outbox.sweeper));
      const relay = environmentOf(json, idOf(stack, outbox.relay));
      expect(sweeper.OUTBOX_TABLE).toEqual({ Ref: idOf(stack, outbox.table) });
      expect(JSON.parse(renderString(sweeper.TOPIC_QUEUES))).toEqual(
        JSON.parse(renderString(relay.TOPIC_QUEUES)),
      );
      // Without inboxes, no topic has a reconciliation check: unconfirmed messages are resent.
      expect(JSON.parse(renderString(sweeper.DELIVERY_INBOXES))).toEqual({});
    });

    it('configures the relay and the sweeper with the same default retry policies and deadline', () => {
      const { outbox, stack } = outboxStack({ topicQueues: { orders: { topics: ['order.created'] } } });
      const json = templateJson(Template.fromStack(stack));
      const sweeper = environmentOf(json, idOf(stack, outbox.sweeper));
      const relay = environmentOf(json, idOf(stack, outbox.relay));
      expect(sweeper.RETRY_POLICIES).toBe('{}');
      expect(sweeper.CONFIRM_DEADLINE_MS).toBe(String(DEFAULT_CONFIRM_DEADLINE_MS));
      expect(relay.RETRY_POLICIES).toBe(sweeper.RETRY_POLICIES);
      expect(relay.CONFIRM_DEADLINE_MS).toBe(sweeper.CONFIRM_DEADLINE_MS);
    });

    it('passes the retry policies and confirmation deadline it is given to both functions', () => {
      const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };
      const { outbox, stack } = outboxStack({
        topicQueues: { orders: { topics: ['order.created'] } },
        retryPolicies: { 'order.created': policy },
        confirmDeadline: Duration.minutes(2),
      });
      const json = templateJson(Template.fromStack(stack));
      for (const fn of [outbox.relay, outbox.sweeper]) {
        const environment = environmentOf(json, idOf(stack, fn));
        expect(JSON.parse(String(environment.RETRY_POLICIES))).toEqual({ 'order.created': policy });
        expect(environment.CONFIRM_DEADLINE_MS).toBe('120000');
      }
    });

    it('takes the function, log and schedule settings it is given', () => {
      const { outbox, stack } = outboxStack({
        topicQueues: { orders: { topics: ['order.created'] } },
        sweeper: {
          serviceName: 'orders-sweeper',
          description: 'sweeps the order outbox',
          timeout: Duration.seconds(120),
          memorySize: 1024,
          logLevel: 'DEBUG',
          logRetention: logs.RetentionDays.ONE_WEEK,
          schedule: events.Schedule.rate(Duration.minutes(5)),
        },
      });
      const json = templateJson(Template.fromStack(stack));
      const sweeperId = idOf(stack, outbox.sweeper);
      expect(propertiesOf(json, sweeperId)).toMatchObject({
        Description: 'sweeps the order outbox',
        Timeout: 120,
        MemorySize: 1024,
      });
      expect(environmentOf(json, sweeperId)).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'orders-sweeper',
        POWERTOOLS_LOG_LEVEL: 'DEBUG',
      });
      expect(propertiesOf(json, idOf(stack, outbox.sweeperLogGroup)).RetentionInDays).toBe(7);
      expect(ruleTargeting(json, sweeperId).properties.ScheduleExpression).toBe('rate(5 minutes)');
    });

    it('names each topic’s delivery inbox and may only read it', () => {
      const { outbox, stack, inbox } = outboxWithInbox();
      const json = templateJson(Template.fromStack(stack));
      const sweeperId = idOf(stack, outbox.sweeper);
      const inboxId = idOf(stack, inbox);
      expect(JSON.parse(renderString(environmentOf(json, sweeperId).DELIVERY_INBOXES))).toEqual({
        'order.created': `\${${inboxId}}`,
      });
      const onInbox = actionsOn(roleStatements(json, sweeperId), inboxId);
      expect(onInbox.has('dynamodb:GetItem')).toBe(true);
      for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']) {
        expect(onInbox.has(action), action).toBe(false);
      }
    });

    it('lets the sweeper query the due index, update messages (never scan, put or delete) and send to the topic queues only', () => {
      const { outbox, stack } = outboxWithInbox();
      const json = templateJson(Template.fromStack(stack));
      const statements = roleStatements(json, idOf(stack, outbox.sweeper));
      const tableId = idOf(stack, outbox.table);
      expect(actionsOnIndexesOf(statements, tableId).has('dynamodb:Query')).toBe(true);
      expect([...actionsOnIndexesOf(statements, tableId)]).toEqual(['dynamodb:Query']);
      const onTable = actionsOn(statements, tableId);
      expect([...onTable].sort()).toEqual([
        'dynamodb:DescribeTable',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ]);
      const topicQueue = outbox.topicQueues.orders;
      if (topicQueue === undefined) throw new Error('no orders queue');
      expect(actionsOn(statements, idOf(stack, topicQueue.queue)).has('sqs:SendMessage')).toBe(true);
      for (const other of [
        topicQueue.deadLetterQueue,
        outbox.failureQueue.queue,
        outbox.failureQueue.deadLetterQueue,
      ]) {
        expect(actionsOn(statements, idOf(stack, other)).has('sqs:SendMessage')).toBe(false);
      }
      // The stream is the relay's alone.
      expect(statements.some((statement) => JSON.stringify(statement.Resource).includes('StreamArn'))).toBe(
        false,
      );
    });

    it('refuses a delivery inbox or a retry policy for a topic no queue carries', () => {
      expect(() => outboxWithInbox({ topicQueues: { payments: { topics: ['payment.captured'] } } })).toThrow(
        /deliveryInboxes.*order\.created/,
      );
      expect(() =>
        outboxStack({
          topicQueues: { orders: { topics: ['order.created'] } },
          retryPolicies: { 'order.shipped': DEFAULT_RETRY_POLICY },
        }),
      ).toThrow(/retryPolicies.*order\.shipped/);
    });

    it('refuses an invalid retry policy or confirmation deadline at synth', () => {
      expect(() =>
        outboxStack({
          topicQueues: { orders: { topics: ['order.created'] } },
          retryPolicies: { 'order.created': { ...DEFAULT_RETRY_POLICY, maxAttempts: 0 } },
        }),
      ).toThrow(/retryPolicies/);
      expect(() =>
        outboxStack({
          topicQueues: { orders: { topics: ['order.created'] } },
          confirmDeadline: Duration.millis(0),
        }),
      ).toThrow(/confirmDeadline/);
    });
  });
});
