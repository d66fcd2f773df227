import {
  CreateTableCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClientConfig } from '../../infra/local/emulator-config.ts';
import { type LocalHandler, localFunction } from '../../infra/local/local-function.ts';
import { type Emulator, startMotoServer } from '../../infra/local/moto-server.ts';
import type { Poller } from '../../infra/local/poll-loop.ts';
import { createStreamPoller } from '../../infra/local/stream-poller.ts';
import type { FunctionSpec, StreamSourceSpec } from '../../infra/topology.ts';

let moto: Emulator;
let dynamodb: DynamoDBClient;
let streams: DynamoDBStreamsClient;
let sqs: SQSClient;
let tableName: string;
let failureQueueUrl: string;
let calls: DynamoDBStreamEvent[];

const source: StreamSourceSpec = {
  table: 'outbox',
  batchSize: 4,
  maxBatchingWindowSeconds: 0,
  retryAttempts: 2,
  maxRecordAgeSeconds: 3_600,
  bisectBatchOnError: true,
  parallelizationFactor: 1,
  filters: [{ eventName: ['INSERT'] }],
  onFailureQueue: 'relayFailures',
};

const spec: FunctionSpec = {
  entry: 'unused',
  description: 'test relay',
  timeoutSeconds: 5,
  memoryMb: 128,
  environment: {},
  tables: {},
};

beforeAll(async () => {
  moto = await startMotoServer();
  const config = emulatorClientConfig(moto.endpoint);
  dynamodb = new DynamoDBClient(config);
  streams = new DynamoDBStreamsClient(config);
  sqs = new SQSClient(config);
});

afterAll(async () => {
  for (const client of [dynamodb, streams, sqs]) client?.destroy();
  await moto?.stop();
});

// A fresh table and failure queue per test: moto slows down as a table grows (DESIGN §5).
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
  calls = [];
});

/** A poller whose handler records each event and answers with `respond`. */
function poller(respond: (event: DynamoDBStreamEvent, call: number) => unknown): Poller {
  const handler: LocalHandler = async (event) => {
    const streamEvent = event as DynamoDBStreamEvent;
    calls.push(streamEvent);
    return respond(streamEvent, calls.length);
  };
  return createStreamPoller({
    fn: localFunction('relay', spec, {}, handler),
    source,
    tableName,
    failureQueueUrl,
    clients: { dynamodb, streams, sqs },
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
});
