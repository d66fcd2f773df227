import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClientConfig } from '../../infra/dev/local/backends/emulator-config.ts';
import type { Poller } from '../../infra/dev/local/events/poll-loop.ts';
import { memoryPollerState, type PollerStateStore } from '../../infra/dev/local/events/poller-state.ts';
import { createQueuePoller } from '../../infra/dev/local/events/queue-poller.ts';
import { type LocalHandler, localFunction } from '../../infra/dev/local/host/local-function.ts';
import type { EventSourceMappingDefinition } from '../../infra/dev/local/template/read-event-source-mappings.ts';
import type { FunctionDefinition } from '../../infra/dev/local/template/read-functions.ts';
import { startTestEmulator, type TestEmulator } from '../integration/support/backend.ts';

let emulator: TestEmulator;
let sqs: SQSClient;
let queueUrl: string;
let queueArn: string;
let deadLetterUrl: string;
let calls: SQSEvent[];

const consumer: FunctionDefinition = {
  name: 'Inventory/Consumer',
  logicalId: 'InventoryConsumer1234',
  entry: 'unused',
  handlerExport: 'handler',
  timeoutSeconds: 5,
  memoryMb: 128,
  environment: {},
};

const mapping: EventSourceMappingDefinition = {
  name: 'Inventory/Consumer/SqsEventSource',
  logicalId: 'InventoryConsumerSqsEventSource1234',
  functionName: consumer.name,
  source: { kind: 'queue', arn: 'unused' },
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  filterPatterns: [],
  bisectBatchOnError: false,
  maxRetryAttempts: -1,
  maxRecordAgeSeconds: -1,
  parallelizationFactor: 1,
  onFailureDestination: undefined,
  reportBatchItemFailures: true,
  startingPosition: undefined,
};

beforeAll(async () => {
  emulator = await startTestEmulator();
  sqs = new SQSClient(emulatorClientConfig(emulator.endpoint));
});

afterAll(async () => {
  sqs?.destroy();
  await emulator?.stop();
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
  queueArn = `arn:aws:sqs:us-east-1:123456789012:queue-${suffix}`;
  calls = [];
});

/** A poller whose handler records each event and answers with `respond`; failed messages return at once. */
function poller(
  respond: (event: SQSEvent, call: number) => unknown,
  options: {
    readonly mapping?: Partial<EventSourceMappingDefinition>;
    readonly store?: PollerStateStore;
  } = {},
): Poller {
  const handler: LocalHandler = async (event) => {
    const sqsEvent = event as SQSEvent;
    calls.push(sqsEvent);
    return respond(sqsEvent, calls.length);
  };
  return createQueuePoller({
    fn: localFunction({ definition: consumer, env: {}, handler }),
    mapping: { ...mapping, ...options.mapping },
    queueUrl,
    queueArn,
    sqs,
    region: 'us-east-1',
    retryVisibilitySeconds: 0,
    ...(options.store === undefined ? {} : { state: { store: options.store, key: 'consumer' } }),
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

/** Receives the queue's messages and keeps them invisible, as a run that died mid-batch leaves them. */
async function receiveAndDie(): Promise<string[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
  );
  return (Messages ?? []).map((message) => message.ReceiptHandle ?? '');
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

  it('deletes the messages the filter rejects without invoking the function, matching JSON bodies', async () => {
    const filtered = poller(() => undefined, {
      mapping: { filterPatterns: [{ body: { topic: ['order.created'] } }] },
    });
    await send('{"topic":"order.created"}', '{"topic":"order.cancelled"}', 'not json');
    await filtered.pollOnce();
    expect(calls.map(bodiesOf)).toEqual([['{"topic":"order.created"}']]);
    expect(await visibleCount(queueUrl)).toBe(0);
  });

  it('ignores what the function returns when the mapping does not report batch item failures', async () => {
    const plain = poller(
      (event) => ({ batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }] }),
      {
        mapping: { reportBatchItemFailures: false },
      },
    );
    await send('one');
    await plain.pollOnce();
    await plain.pollOnce();
    expect(calls.map(bodiesOf)).toEqual([['one']]);
    expect(plain.stats()).toMatchObject({ invocations: 1, failedInvocations: 0 });
  });

  it('keeps the receipts of the batch in flight, and forgets them once the batch is settled', async () => {
    const store = memoryPollerState();
    let duringInvocation: readonly string[] = [];
    const tracked = poller(
      (event) => {
        duringInvocation = store.inFlight('consumer');
        expect(duringInvocation).toEqual(event.Records.map((record) => record.receiptHandle));
      },
      { store },
    );
    await send('one');
    await tracked.pollOnce();
    expect(duringInvocation).toHaveLength(1);
    expect(store.inFlight('consumer')).toEqual([]);
  });

  it('hands back at once what a run that died had in flight, instead of after the visibility timeout', async () => {
    await send('in-flight');
    const store = memoryPollerState();
    store.saveInFlight('consumer', await receiveAndDie());
    expect(await visibleCount(queueUrl)).toBe(0);

    const restarted = poller(() => undefined, { store });
    await restarted.pollOnce();

    expect(calls.map(bodiesOf)).toEqual([['in-flight']]);
    expect(store.inFlight('consumer')).toEqual([]);
  });
});
