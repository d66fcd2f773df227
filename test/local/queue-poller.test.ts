import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClientConfig } from '../../infra/local/emulator-config.ts';
import { type LocalHandler, localFunction } from '../../infra/local/local-function.ts';
import { type Emulator, startMotoServer } from '../../infra/local/moto-server.ts';
import type { Poller } from '../../infra/local/poll-loop.ts';
import { createQueuePoller } from '../../infra/local/queue-poller.ts';
import type { FunctionSpec } from '../../infra/topology.ts';

let moto: Emulator;
let sqs: SQSClient;
let queueUrl: string;
let deadLetterUrl: string;
let calls: SQSEvent[];

const spec: FunctionSpec = {
  entry: 'unused',
  description: 'test consumer',
  timeoutSeconds: 5,
  memoryMb: 128,
  environment: {},
  tables: {},
};

beforeAll(async () => {
  moto = await startMotoServer();
  sqs = new SQSClient(emulatorClientConfig(moto.endpoint));
});

afterAll(async () => {
  sqs?.destroy();
  await moto?.stop();
});

beforeEach(async (context) => {
  const suffix = context.task.id.replace(/[^A-Za-z0-9]/g, '');
  deadLetterUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `dlq-${suffix}` }))).QueueUrl ?? '';
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: deadLetterUrl, AttributeNames: ['QueueArn'] }),
  );
  queueUrl =
    (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `queue-${suffix}`,
          Attributes: {
            VisibilityTimeout: '30',
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: 2 }),
          },
        }),
      )
    ).QueueUrl ?? '';
  calls = [];
});

/** A poller whose handler records each event and answers with `respond`; failed messages return at once. */
function poller(respond: (event: SQSEvent, call: number) => unknown): Poller {
  const handler: LocalHandler = async (event) => {
    const sqsEvent = event as SQSEvent;
    calls.push(sqsEvent);
    return respond(sqsEvent, calls.length);
  };
  return createQueuePoller({
    fn: localFunction('inventoryConsumer', spec, {}, handler),
    source: { queue: 'orderEvents', batchSize: 10, maxBatchingWindowSeconds: 0 },
    queueUrl,
    sqs,
    region: 'us-east-1',
    retryVisibilitySeconds: 0,
  });
}

async function send(...bodies: string[]): Promise<void> {
  for (const body of bodies) {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        MessageAttributes: { traceparent: { DataType: 'String', StringValue: `tp-${body}` } },
      }),
    );
  }
}

async function visibleCount(url: string): Promise<number> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
  );
  return Messages?.length ?? 0;
}

const bodiesOf = (event: SQSEvent | undefined): string[] =>
  (event?.Records ?? []).map((record) => record.body).sort();

describe('createQueuePoller', () => {
  it('hands messages to the function as an SQS event and deletes them after a success', async () => {
    const consumer = poller(() => undefined);
    await send('one', 'two');
    await consumer.pollOnce();
    expect(bodiesOf(calls[0])).toEqual(['one', 'two']);
    expect(calls[0]?.Records[0]).toMatchObject({
      messageId: expect.any(String),
      receiptHandle: expect.any(String),
      md5OfBody: expect.any(String),
      eventSource: 'aws:sqs',
      eventSourceARN: expect.stringMatching(/^arn:aws:sqs:us-east-1:123456789012:queue-/),
      awsRegion: 'us-east-1',
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: expect.any(String) },
      messageAttributes: { traceparent: { dataType: 'String', stringValue: expect.stringMatching(/^tp-/) } },
    });
    expect(await visibleCount(queueUrl)).toBe(0);
  });

  it('deletes only the messages a partial batch response does not list', async () => {
    const consumer = poller((event, call) => {
      const two = event.Records.find((record) => record.body === 'two');
      return call === 1 ? { batchItemFailures: [{ itemIdentifier: two?.messageId }] } : undefined;
    });
    await send('one', 'two');
    await consumer.pollOnce();
    await consumer.pollOnce();
    expect(calls.map(bodiesOf)).toEqual([['one', 'two'], ['two']]);
    expect(calls[1]?.Records[0]?.attributes.ApproximateReceiveCount).toBe('2');
  });

  it('deletes nothing when the function throws, and SQS moves the message to the DLQ after maxReceiveCount', async () => {
    const consumer = poller(() => {
      throw new Error('downstream unavailable');
    });
    await send('poison');
    await consumer.pollOnce();
    await consumer.pollOnce();
    await consumer.pollOnce();
    expect(calls.map(bodiesOf)).toEqual([['poison'], ['poison']]);
    expect(await visibleCount(deadLetterUrl)).toBe(1);
    expect(consumer.stats()).toMatchObject({ invocations: 2, failedInvocations: 2 });
  });
});
