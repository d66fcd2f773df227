import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  TransactionalOutbox,
  type TransactionalOutboxProps,
} from '../../../infra/constructs/transactional-outbox';
import {
  environmentOf,
  idsOfType,
  propertiesOf,
  references,
  refTarget,
  renderString,
  resource,
  templateJson,
} from '../template-queries';

/** A bare stack holding one outbox, bundling skipped. */
function outboxStack(props: TransactionalOutboxProps): { outbox: TransactionalOutbox; stack: Stack } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Service');
  return { outbox: new TransactionalOutbox(stack, 'Outbox', props), stack };
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
});
