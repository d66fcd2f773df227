import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  type LocalRuntime,
  type LocalRuntimeOptions,
  startLocalRuntime,
} from '../../infra/dev/local/host/runtime.ts';
import { seedStock } from '../../infra/stacks/local-plugin.ts';
import { synthSingleQueueTemplate } from '../support/single-queue-example.ts';
import { runtimeBackend } from './support/backend.ts';

/** The example stack's tables, by the prefix of their `<name>TableName` output. */
export type TableKey = 'orders' | 'inventory' | 'outbox' | 'inbox';

/** The example stack's queue outputs. */
export const QueueOutput = {
  orderEvents: 'orderEventsQueueUrl',
  orderEventsDeadLetters: 'orderEventsDeadLetterQueueUrl',
  relayFailures: 'relayFailureQueueUrl',
} as const;

let exampleTemplate: Record<string, unknown> | undefined;

/**
 * Starts the local runtime on the example for a suite — its template synthesized in-process (once per test
 * file), a fresh moto or the embedded backend (see support/backend.ts; or AWS_ENDPOINT_URL), a free port, quiet
 * logs — and puts the starting stock in as
 * `npm start` does.
 */
export async function startRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  exampleTemplate ??= synthSingleQueueTemplate();
  const runtime = await startLocalRuntime({
    backend: runtimeBackend(),
    port: 0,
    log: () => {},
    pollIntervalMs: 100,
    template: exampleTemplate,
    ...options,
  });
  try {
    await seedStock(runtime.apiUrl);
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  return runtime;
}

/** The value of one of the stack's outputs. */
export function outputOf(runtime: LocalRuntime, name: string): string {
  const value = runtime.outputs[name];
  if (value === undefined) throw new Error(`the stack has no output ${name}`);
  return value;
}

/** A JSON HTTP response. */
export interface JsonResponse {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
  readonly body: any;
}

/** Sends a request (`'POST /orders'`) to the local API and parses the JSON answer. */
export async function request(runtime: LocalRuntime, route: string, body?: unknown): Promise<JsonResponse> {
  const [method = 'GET', path = '/'] = route.split(' ');
  const response = await fetch(`${runtime.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** A Document client on the runtime's emulator. */
export function documentClient(runtime: LocalRuntime): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(runtime.clientConfig));
}

/** An SQS client on the runtime's emulator. */
export function sqsClient(runtime: LocalRuntime): SQSClient {
  return new SQSClient(runtime.clientConfig);
}

/** The physical name of one of the example's tables. */
export function tableName(runtime: LocalRuntime, table: TableKey): string {
  return outputOf(runtime, `${table}TableName`);
}

/** Every item of a table. */
export async function scanAll(runtime: LocalRuntime, table: TableKey): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateScan(
    { client: documentClient(runtime) },
    { TableName: tableName(runtime, table), ConsistentRead: true },
  )) {
    items.push(...(page.Items ?? []));
  }
  return items;
}

/** Every record the outbox stream holds (from the trim horizon), as event names and new images. */
export async function outboxStreamRecords(
  runtime: LocalRuntime,
): Promise<{ eventName: string; newImage: Record<string, unknown> | undefined }[]> {
  const dynamo = new DynamoDBClient(runtime.clientConfig);
  const { DescribeTableCommand } = await import('@aws-sdk/client-dynamodb');
  const table = await dynamo.send(new DescribeTableCommand({ TableName: tableName(runtime, 'outbox') }));
  const streams = new DynamoDBStreamsClient(runtime.clientConfig);
  const description = await streams.send(
    new DescribeStreamCommand({ StreamArn: table.Table?.LatestStreamArn }),
  );
  const records: { eventName: string; newImage: Record<string, unknown> | undefined }[] = [];
  for (const shard of description.StreamDescription?.Shards ?? []) {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: table.Table?.LatestStreamArn,
        ShardId: shard.ShardId,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    let iterator = ShardIterator;
    for (let page = 0; iterator !== undefined && page < 100; page += 1) {
      const result = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      for (const record of result.Records ?? []) {
        const image = record.dynamodb?.NewImage;
        records.push({
          eventName: record.eventName ?? '',
          newImage: image === undefined ? undefined : unmarshall(image as Parameters<typeof unmarshall>[0]),
        });
      }
      if ((result.Records ?? []).length === 0) break;
      iterator = result.NextShardIterator;
    }
  }
  return records;
}

/** Places an order through the API and returns its id and message id. */
export async function placeOrder(
  runtime: LocalRuntime,
  items: { sku: string; quantity: number }[],
  orderId?: string,
): Promise<{ orderId: string; messageId: string }> {
  const response = await request(runtime, 'POST /orders', {
    ...(orderId === undefined ? {} : { orderId }),
    customerId: 'customer-1',
    items,
  });
  if (response.status !== 201)
    throw new Error(`POST /orders answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Waits (up to 30 s) until the order's message reaches `status` and returns the GET /orders body. */
export function waitForMessageStatus(
  runtime: LocalRuntime,
  orderId: string,
  status: string,
): Promise<JsonResponse['body']> {
  return waitFor(
    async () => {
      const response = await request(runtime, `GET /orders/${orderId}`);
      return response.body?.messages?.[0]?.status === status ? response.body : undefined;
    },
    30_000,
    `order ${orderId} to be ${status}`,
  );
}

/** The available stock of a SKU, read through the API. */
export async function stockOf(runtime: LocalRuntime, sku: string): Promise<number> {
  const response = await request(runtime, `GET /inventory/${sku}`);
  if (response.status !== 200) throw new Error(`GET /inventory/${sku} answered ${response.status}`);
  return response.body.available;
}
