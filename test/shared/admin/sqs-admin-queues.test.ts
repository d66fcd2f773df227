import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { MoveTaskUnavailableError } from '../../../shared/admin/admin-errors.ts';
import { queueNameOf } from '../../../shared/admin/admin-queues.ts';
import { startDeadLetterMoveTasks } from '../../../shared/admin/move-task.ts';
import { SqsAdminQueues } from '../../../shared/aws/sqs-admin-queues.ts';
import {
  adminFixture,
  auditRows,
  ORDER_DLQ,
  ORDER_QUEUE,
  PAYMENT_DLQ,
  PAYMENT_QUEUE,
} from './admin-fixture.ts';

const sqs = mockClient(SQSClient);
const queues = new SqsAdminQueues(new SQSClient({ region: 'eu-west-1' }));
const arnOf = (url: string) => `arn:aws:sqs:eu-west-1:123456789012:${queueNameOf(url)}`;

beforeEach(() => {
  sqs.reset();
});

describe('SqsAdminQueues', () => {
  it('receives with every message attribute, the group, the receive count, a visibility timeout and a long poll', async () => {
    sqs.on(ReceiveMessageCommand).resolves({
      Messages: [
        {
          MessageId: 'm-1',
          ReceiptHandle: 'r-1',
          Body: '{"a":1}',
          Attributes: { MessageGroupId: 'order-1', ApproximateReceiveCount: '6' },
          MessageAttributes: {
            topic: { DataType: 'String', StringValue: 'order.created' },
            blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2]) },
          },
        },
        { Body: 'no id: skipped' },
      ],
    });

    const received = await queues.receive(ORDER_DLQ, { maxMessages: 10, visibilityTimeoutSeconds: 300 });

    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: ORDER_DLQ,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 300,
      WaitTimeSeconds: 1,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
    });
    expect(received).toEqual([
      {
        sqsMessageId: 'm-1',
        receiptHandle: 'r-1',
        body: '{"a":1}',
        groupId: 'order-1',
        receiveCount: 6,
        attributes: {
          topic: { dataType: 'String', stringValue: 'order.created' },
          blob: { dataType: 'Binary', binaryValue: new Uint8Array([1, 2]) },
        },
      },
    ]);
  });

  it('sends the body and attributes as given, with the FIFO fields only when given', async () => {
    sqs.on(SendMessageCommand).resolves({});

    await queues.send(ORDER_QUEUE, {
      body: 'b',
      attributes: { topic: { dataType: 'String', stringValue: 't' } },
    });
    await queues.send('https://q/orders.fifo', {
      body: 'b',
      attributes: {},
      groupId: 'g',
      deduplicationId: 'd',
    });

    expect(sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input)).toEqual([
      {
        QueueUrl: ORDER_QUEUE,
        MessageBody: 'b',
        MessageAttributes: { topic: { DataType: 'String', StringValue: 't' } },
      },
      {
        QueueUrl: 'https://q/orders.fifo',
        MessageBody: 'b',
        MessageAttributes: {},
        MessageGroupId: 'g',
        MessageDeduplicationId: 'd',
      },
    ]);
  });

  it('deletes, changes visibility and reads the depth', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({
      Attributes: { ApproximateNumberOfMessages: '7', ApproximateNumberOfMessagesNotVisible: '2' },
    });

    await queues.delete(ORDER_DLQ, 'r-1');
    await queues.changeVisibility(ORDER_DLQ, 'r-2', 0);

    await expect(queues.depth(ORDER_DLQ)).resolves.toEqual({ visible: 7, inFlight: 2 });
    expect(sqs.commandCalls(DeleteMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: ORDER_DLQ,
      ReceiptHandle: 'r-1',
    });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input).toEqual({
      QueueUrl: ORDER_DLQ,
      ReceiptHandle: 'r-2',
      VisibilityTimeout: 0,
    });
  });

  it('starts a message move task from the DLQ to its source queue by their ARNs', async () => {
    sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string }) => ({
      Attributes: { QueueArn: arnOf(input.QueueUrl) },
    }));
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'task-1' });

    const handle = await queues.startMoveTask({
      deadLetterQueueUrl: ORDER_DLQ,
      destinationQueueUrl: ORDER_QUEUE,
      maxPerSecond: 50,
    });

    expect(handle).toBe('task-1');
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input).toEqual({
      SourceArn: arnOf(ORDER_DLQ),
      DestinationArn: arnOf(ORDER_QUEUE),
      MaxNumberOfMessagesPerSecond: 50,
    });
  });
});

describe('startDeadLetterMoveTasks', () => {
  beforeEach(() => {
    sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string }) => ({
      Attributes: { QueueArn: arnOf(input.QueueUrl) },
    }));
    sqs.on(StartMessageMoveTaskCommand).callsFake((input: { SourceArn: string }) => ({
      TaskHandle: `task-for-${input.SourceArn.split(':').at(-1)}`,
    }));
  });

  it('starts one task per DLQ of the outbox and audits each with its handle', async () => {
    const fixture = adminFixture({ queues });

    const started = await startDeadLetterMoveTasks(fixture.deps, { actor: 'local:ana', reason: 'all clear' });

    expect(started).toEqual([
      { deadLetterQueueUrl: ORDER_DLQ, sourceQueueUrl: ORDER_QUEUE, taskHandle: 'task-for-order-events-dlq' },
      {
        deadLetterQueueUrl: PAYMENT_DLQ,
        sourceQueueUrl: PAYMENT_QUEUE,
        taskHandle: 'task-for-payment-events-dlq',
      },
    ]);
    expect(await auditRows(fixture, 'dlq:order-events-dlq')).toEqual([
      expect.objectContaining({
        action: 'REDRIVE',
        actor: 'local:ana',
        details: { sourceQueue: ORDER_QUEUE, moveTask: 'task-for-order-events-dlq' },
      }),
    ]);
  });

  it('starts only the task of the queue asked for, at the rate asked for', async () => {
    const fixture = adminFixture({ queues });

    await startDeadLetterMoveTasks(fixture.deps, {
      actor: 'local:ana',
      queue: 'payment-events-dlq',
      ratePerSecond: 5,
    });

    expect(sqs.commandCalls(StartMessageMoveTaskCommand).map((call) => call.args[0].input)).toEqual([
      {
        SourceArn: arnOf(PAYMENT_DLQ),
        DestinationArn: arnOf(PAYMENT_QUEUE),
        MaxNumberOfMessagesPerSecond: 5,
      },
    ]);
  });

  it('refuses with a named error on a backend without move tasks (an emulator)', async () => {
    const fixture = adminFixture();

    const error = await startDeadLetterMoveTasks(fixture.deps, { actor: 'local:ana' }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(MoveTaskUnavailableError);
    expect(error).toMatchObject({ httpStatus: 501 });
  });

  it('refuses a rate SQS would refuse', async () => {
    const fixture = adminFixture({ queues });

    await expect(
      startDeadLetterMoveTasks(fixture.deps, { actor: 'local:ana', ratePerSecond: 501 }),
    ).rejects.toThrow(/ratePerSecond must be an integer from 1 to 500/);
  });
});
