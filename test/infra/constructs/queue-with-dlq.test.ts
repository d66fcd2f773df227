import { Duration, Stack } from 'aws-cdk-lib';
import { QUEUE_DEFAULTS, QueueWithDlq, type QueueWithDlqProps } from 'serverless-outbox/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  idsOfType,
  propertiesOf,
  resolvedTarget,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';

/** A stack with one queue, its template, and the logical ids of the queue and its dead-letter queue. */
function queueStack(props?: QueueWithDlqProps): {
  queue: QueueWithDlq;
  json: CfnTemplate;
  queueId: string;
  deadLettersId: string;
} {
  const stack = new Stack(testApp(), 'Queues');
  const queue = new QueueWithDlq(stack, 'Orders', props);
  return {
    queue,
    json: templateOf(stack),
    queueId: resolvedTarget(stack, queue.queue.queueUrl),
    deadLettersId: resolvedTarget(stack, queue.deadLetterQueue.queueUrl),
  };
}

beforeAll(() => {
  queueStack();
}, SYNTH_TIMEOUT_MS);

describe('QueueWithDlq', () => {
  it('moves a message to its dead-letter queue after 5 receives, kept there for 14 days', () => {
    const { json, queueId, deadLettersId } = queueStack();
    expect(propertiesOf(json, queueId)).toMatchObject({
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLettersId, 'Arn'] }, maxReceiveCount: 5 },
      VisibilityTimeout: 180,
      MessageRetentionPeriod: 4 * 86_400,
    });
    expect(propertiesOf(json, deadLettersId).MessageRetentionPeriod).toBe(14 * 86_400);
  });

  it('exposes the settings it was built with, defaults filled in', () => {
    expect(queueStack().queue.settings).toEqual({
      maxReceiveCount: QUEUE_DEFAULTS.maxReceiveCount,
      visibilityTimeout: QUEUE_DEFAULTS.visibilityTimeout,
      retentionPeriod: QUEUE_DEFAULTS.retentionPeriod,
      deadLetterRetention: QUEUE_DEFAULTS.deadLetterRetention,
      fifo: false,
    });
  });

  it('takes the settings it is given', () => {
    const { queue, json, queueId, deadLettersId } = queueStack({
      maxReceiveCount: 2,
      visibilityTimeout: Duration.minutes(10),
      retentionPeriod: Duration.days(1),
      deadLetterRetention: Duration.days(3),
    });
    expect(propertiesOf(json, queueId)).toMatchObject({
      RedrivePolicy: { maxReceiveCount: 2 },
      VisibilityTimeout: 600,
      MessageRetentionPeriod: 86_400,
    });
    expect(propertiesOf(json, deadLettersId).MessageRetentionPeriod).toBe(3 * 86_400);
    expect(queue.settings.maxReceiveCount).toBe(2);
  });

  it('is a standard queue with a standard dead-letter queue unless fifo is set', () => {
    const { json, queueId, deadLettersId } = queueStack();
    for (const id of [queueId, deadLettersId]) expect(propertiesOf(json, id).FifoQueue, id).toBeUndefined();
  });

  it('with fifo, makes both queues FIFO, deduplicating by the sender’s id per message group', () => {
    const { queue, json, queueId, deadLettersId } = queueStack({ fifo: true });
    expect(queue.settings.fifo).toBe(true);
    expect(propertiesOf(json, queueId)).toMatchObject({
      FifoQueue: true,
      // High throughput: quota and deduplication per message group (order key), not per queue.
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLettersId, 'Arn'] } },
    });
    // A deliberate resend has the same body: only the sender's deduplication id may tell copies apart.
    expect(propertiesOf(json, queueId).ContentBasedDeduplication).toBeUndefined();
    expect(propertiesOf(json, deadLettersId).FifoQueue).toBe(true);
  });

  it('encrypts both queues and refuses plain HTTP to each', () => {
    const { json, queueId, deadLettersId } = queueStack();
    for (const id of [queueId, deadLettersId]) {
      expect(propertiesOf(json, id).SqsManagedSseEnabled, id).toBe(true);
      const statements = idsOfType(json, 'AWS::SQS::QueuePolicy')
        .map((policyId) => propertiesOf(json, policyId))
        .filter((policy) => JSON.stringify(policy.Queues) === JSON.stringify([{ Ref: id }]))
        .flatMap((policy) => (policy.PolicyDocument as { Statement: unknown[] }).Statement);
      expect(statements, id).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });
});
