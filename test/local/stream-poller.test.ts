import {
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClientConfig } from '../../infra/dev/local/backends/emulator-config.ts';
import type { Poller } from '../../infra/dev/local/events/poll-loop.ts';
import { memoryPollerState, type PollerStateStore } from '../../infra/dev/local/events/poller-state.ts';
import { createStreamPoller } from '../../infra/dev/local/events/stream-poller.ts';
import { type LocalHandler, localFunction } from '../../infra/dev/local/host/local-function.ts';
import type { EventSourceMappingDefinition } from '../../infra/dev/local/template/read-event-source-mappings.ts';
import type { FunctionDefinition } from '../../infra/dev/local/template/read-functions.ts';
import { startTestEmulator, type TestEmulator } from '../integration/support/backend.ts';

let emulator: TestEmulator;
let dynamodb: DynamoDBClient;
let streams: DynamoDBStreamsClient;
let sqs: SQSClient;
let tableName: string;
let streamArn: string;
let failureQueueUrl: string;
let calls: DynamoDBStreamEvent[];

const mapping: EventSourceMappingDefinition = {
  name: 'Outbox/Relay/DynamoDBEventSource',
  logicalId: 'OutboxRelayDynamoDBEventSource1234',
  functionName: 'Outbox/Relay',
  source: { kind: 'stream', arn: 'unused' },
  batchSize: 4,
  maxBatchingWindowSeconds: 0,
  filterPatterns: [{ eventName: ['INSERT'] }],
  bisectBatchOnError: true,
  maxRetryAttempts: 2,
  maxRecordAgeSeconds: 3_600,
  parallelizationFactor: 1,
  onFailureDestination: 'unused',
  reportBatchItemFailures: true,
  startingPosition: 'TRIM_HORIZON',
};

const relayFunction: FunctionDefinition = {
  name: 'Outbox/Relay',
  logicalId: 'OutboxRelay1234',
  entry: 'unused',
  handlerExport: 'handler',
  timeoutSeconds: 5,
  memoryMb: 128,
  environment: {},
};

beforeAll(async () => {
  emulator = await startTestEmulator();
  const config = emulatorClientConfig(emulator.endpoint);
  dynamodb = new DynamoDBClient(config);
  streams = new DynamoDBStreamsClient(config);
  sqs = new SQSClient(config);
});

afterAll(async () => {
  for (const client of [dynamodb, streams, sqs]) client?.destroy();
  await emulator?.stop();
});

// A fresh table and failure queue per test: moto slows down as a table grows.
beforeEach(async (context) => {
  const suffix = context.task.id.replace(/[^A-Za-z0-9]/g, '');
  tableName = `stream-${suffix}`;
  await dynamodb.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  failureQueueUrl =
    (await sqs.send(new CreateQueueCommand({ QueueName: `failures-${suffix}` }))).QueueUrl ?? '';
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  streamArn = Table?.LatestStreamArn ?? '';
  calls = [];
});

/** A poller whose handler records each event and answers with `respond`. */
function poller(
  respond: (event: DynamoDBStreamEvent, call: number) => unknown,
  options: {
    readonly mapping?: Partial<EventSourceMappingDefinition>;
    readonly store?: PollerStateStore;
  } = {},
): Poller {
  const handler: LocalHandler = async (event) => {
    const streamEvent = event as DynamoDBStreamEvent;
    calls.push(streamEvent);
    return respond(streamEvent, calls.length);
  };
  return createStreamPoller({
    fn: localFunction({ definition: relayFunction, env: {}, handler }),
    mapping: { ...mapping, ...options.mapping },
    streamArn,
    failureQueueUrl,
    clients: { streams, sqs },
    ...(options.store === undefined ? {} : { state: { store: options.store, key: 'relay' } }),
  });
}

async function put(...ids: string[]): Promise<void> {
  for (const id of ids)
    await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: { id: { S: id } } }));
}

const idsOf = (event: DynamoDBStreamEvent | undefined): (string | undefined)[] =>
  (event?.Records ?? []).map((record) => record.dynamodb?.Keys?.id?.S);

describe('createStreamPoller', () => {
  it('hands INSERTs to the function as a DynamoDB stream event and skips records the filter drops', async () => {
    const relay = poller(() => undefined);
    await put('a');
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { id: { S: 'a' } },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: '1' } },
      }),
    );
    await dynamodb.send(new DeleteItemCommand({ TableName: tableName, Key: { id: { S: 'a' } } }));
    await put('b');

    await relay.pollOnce();
    await relay.pollOnce();
    expect(calls.map(idsOf)).toEqual([['a', 'b']]);
    const record = calls[0]?.Records[0];
    expect(record).toMatchObject({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      eventSourceARN: expect.stringContaining(`table/${tableName}/stream/`),
      dynamodb: {
        Keys: { id: { S: 'a' } },
        NewImage: { id: { S: 'a' } },
        StreamViewType: 'NEW_AND_OLD_IMAGES',
        SequenceNumber: expect.any(String),
        SizeBytes: expect.any(Number),
        ApproximateCreationDateTime: expect.any(Number),
      },
    });
    expect(relay.stats()).toMatchObject({ invocations: 1, records: 2, failedInvocations: 0 });
  });

  it('batches up to batchSize records per invocation', async () => {
    const relay = poller(() => undefined);
    await put('a', 'b', 'c', 'd', 'e', 'f');
    await relay.pollOnce();
    await relay.pollOnce();
    expect(calls.map(idsOf)).toEqual([
      ['a', 'b', 'c', 'd'],
      ['e', 'f'],
    ]);
  });

  it('retries from the lowest item failure a partial batch response reports', async () => {
    const relay = poller((event, call) =>
      call === 1
        ? { batchItemFailures: [{ itemIdentifier: event.Records[1]?.dynamodb?.SequenceNumber }] }
        : {},
    );
    await put('a', 'b', 'c');
    await relay.pollOnce();
    await relay.pollOnce();
    expect(calls.map(idsOf)).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c'],
    ]);
  });

  it('bisects a failing batch, gives up on the poison record after the retries and reports it to the on-failure queue', async () => {
    const relay = poller((event) => {
      if (idsOf(event).includes('poison')) throw new Error('cannot relay poison');
      return undefined;
    });
    await put('a', 'poison', 'c', 'd');
    for (let cycle = 0; cycle < 12; cycle += 1) await relay.pollOnce();

    // [a poison c d] fails → [a poison] fails → [a] ok → [poison] × 3 (1 + 2 retries) → [c] → [d]
    expect(calls.map(idsOf)).toEqual([
      ['a', 'poison', 'c', 'd'],
      ['a', 'poison'],
      ['a'],
      ['poison'],
      ['poison'],
      ['poison'],
      ['c'],
      ['d'],
    ]);
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: failureQueueUrl, MaxNumberOfMessages: 10 }),
    );
    expect(Messages).toHaveLength(1);
    const poisonSequence = calls[3]?.Records[0]?.dynamodb?.SequenceNumber;
    expect(JSON.parse(Messages?.[0]?.Body ?? '{}')).toMatchObject({
      requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 },
      responseContext: { functionError: 'Unhandled' },
      version: '1.0',
      DDBStreamBatchInfo: {
        startSequenceNumber: poisonSequence,
        endSequenceNumber: poisonSequence,
        batchSize: 1,
        shardId: expect.any(String),
        streamArn: expect.stringContaining(tableName),
      },
    });
    expect(relay.stats().discardedBatches).toBe(1);
  });

  it('never delivers phantom records after a cancelled transaction (fresh iterator per poll)', async () => {
    const relay = poller(() => undefined);
    await put('a');
    await relay.pollOnce();
    await dynamodb
      .send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: { id: { S: 'a' } },
                ConditionExpression: 'attribute_not_exists(id)',
              },
            },
            { Put: { TableName: tableName, Item: { id: { S: 'never' } } } },
          ],
        }),
      )
      .catch(() => 'cancelled, as intended');
    await put('b');
    await relay.pollOnce();
    await relay.pollOnce();
    expect(calls.map(idsOf)).toEqual([['a'], ['b']]);
  });

  it('runs in the background until stopped, and can be paused', async () => {
    const relay = poller(() => undefined);
    relay.start();
    await put('a');
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    await relay.pause();
    await put('b');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(calls).toHaveLength(1);
    relay.resume();
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(2);
    await relay.stop();
  });

  it('ignores a partial batch response when the mapping does not report batch item failures', async () => {
    const relay = poller(
      (event) => ({ batchItemFailures: [{ itemIdentifier: event.Records[0]?.dynamodb?.SequenceNumber }] }),
      {
        mapping: { reportBatchItemFailures: false },
      },
    );
    await put('a', 'b');
    await relay.pollOnce();
    await relay.pollOnce();
    expect(calls.map(idsOf)).toEqual([['a', 'b']]);
  });

  it('saves each shard’s checkpoint, and a new poller on the same state resumes after it', async () => {
    const store = memoryPollerState();
    const first = poller(() => undefined, { store });
    await put('a', 'b');
    await first.pollOnce();
    expect([...store.checkpoints('relay').values()]).toEqual([
      calls[0]?.Records[1]?.dynamodb?.SequenceNumber,
    ]);

    await put('c');
    const restarted = poller(() => undefined, { store });
    await restarted.pollOnce();
    expect(calls.map(idsOf)).toEqual([['a', 'b'], ['c']]);
  });

  it('does not move the checkpoint past a batch whose invocation failed', async () => {
    const store = memoryPollerState();
    const failing = poller(
      () => {
        throw new Error('crashed before finishing');
      },
      { store, mapping: { bisectBatchOnError: false } },
    );
    await put('a');
    await failing.pollOnce();
    expect(store.checkpoints('relay').size).toBe(0);
    const restarted = poller(() => undefined, { store });
    await restarted.pollOnce();
    expect(calls.map(idsOf)).toEqual([['a'], ['a']]);
  });

  it('only logs a discarded batch when the mapping has no on-failure destination', async () => {
    const lines: string[] = [];
    const relay = createStreamPoller({
      fn: localFunction({
        definition: relayFunction,
        env: {},
        handler: async () => {
          throw new Error('always');
        },
      }),
      mapping: {
        ...mapping,
        bisectBatchOnError: false,
        maxRetryAttempts: 0,
        onFailureDestination: undefined,
      },
      streamArn,
      clients: { streams, sqs },
      log: (line) => lines.push(line),
    });
    await put('a');
    await relay.pollOnce();
    expect(relay.stats().discardedBatches).toBe(1);
    expect(lines.join('\n')).toMatch(
      /gave up on 1 record\(s\) \(RetryAttemptsExhausted\); no on-failure destination/,
    );
  });
});
