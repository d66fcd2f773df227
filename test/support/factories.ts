import { type CancellationReason, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type {
  APIGatewayProxyEvent,
  Context,
  DynamoDBRecord,
  SQSRecord,
  AttributeValue as StreamAttributeValue,
} from 'aws-lambda';
import { OUTBOX_KEYS } from '../../shared/aws/outbox-table.ts';
import type { PlanEffect } from '../../shared/consumer/consume-types.ts';
import type { MemoryTableSchema } from '../../shared/memory/memory-document-client.ts';
import { ENVELOPE_SCHEMA_VERSION, type Envelope } from '../../shared/message/envelope.ts';
import { MessageStatus } from '../../shared/message/message-status.ts';
import { dueShardOf, type OutboxItem } from '../../shared/outbox/outbox-item.ts';

/** The instant every factory uses unless told otherwise: 2024-05-01T12:00:00.000Z. */
export const FIXED_NOW = new Date('2024-05-01T12:00:00.000Z');

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A deterministic, valid ULID whose random part encodes `n`: `testMessageId(1) !== testMessageId(2)` and
 * both sort after the fixed time prefix.
 */
export function testMessageId(n: number): string {
  let random = '';
  let rest = n;
  for (let i = 0; i < 16; i += 1) {
    random = CROCKFORD.charAt(rest % 32) + random;
    rest = Math.floor(rest / 32);
  }
  return `01HWTS3E00${random}`;
}

/** A valid `order.created` envelope; override any field. */
export function envelope(overrides: Partial<Envelope> = {}): Envelope {
  const messageId = overrides.messageId ?? testMessageId(1);
  return {
    messageId,
    topic: 'order.created',
    aggregateId: 'order-1',
    payload: {
      orderId: 'order-1',
      customerId: 'customer-1',
      items: [{ sku: 'SKU-1', quantity: 2 }],
      createdAt: FIXED_NOW.toISOString(),
    },
    headers: {},
    createdAt: FIXED_NOW.toISOString(),
    schemaVersion: ENVELOPE_SCHEMA_VERSION,
    ...overrides,
  };
}

/** A fresh PENDING outbox item as `writeWithOutbox` stores it; override any field. */
export function outboxItem(overrides: Partial<OutboxItem> = {}): OutboxItem {
  const base = envelope(overrides);
  return {
    ...base,
    status: MessageStatus.PENDING,
    attempts: 0,
    nextAttemptAt: new Date(FIXED_NOW.getTime() + 60_000).toISOString(),
    dueShard: dueShardOf(base.messageId),
    updatedAt: FIXED_NOW.toISOString(),
    ...overrides,
  };
}

/** Options of {@link decrementPlan}. */
export interface DecrementPlanOptions {
  /** The stock table, keyed by `sku`: the message's aggregate. */
  readonly table: string;
  /** Refuses to take stock below zero (a condition on `available`); otherwise the decrement always applies. */
  readonly guarded?: boolean;
  /** The business outcome when the condition fails. */
  readonly onConditionFailure: string;
}

/** A consumer's business side: one unit off the `available` stock of the message's aggregate. */
export function decrementPlan(options: DecrementPlanOptions): PlanEffect {
  const { table, guarded = false, onConditionFailure } = options;
  return (message) => ({
    apply: [
      {
        Update: {
          TableName: table,
          Key: { sku: message.aggregateId },
          UpdateExpression: 'SET #a = #a - :one',
          ...(guarded ? { ConditionExpression: '#a >= :one' } : {}),
          ExpressionAttributeNames: { '#a': 'available' },
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
    onConditionFailure,
  });
}

/** Options of {@link streamRecord}. */
export interface StreamRecordOptions {
  readonly eventName?: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly sequenceNumber?: string;
  /** Replace the marshalled NewImage entirely (e.g. `null` for a KEYS_ONLY stream). */
  readonly newImage?: Record<string, unknown> | null;
}

/** A DynamoDB stream record announcing `item` (an INSERT with a NEW_IMAGE by default). */
export function streamRecord(item: object = outboxItem(), options: StreamRecordOptions = {}): DynamoDBRecord {
  const image = options.newImage === undefined ? item : options.newImage;
  const sequenceNumber = options.sequenceNumber ?? '100000000000000000001';
  return {
    eventID: `event-${sequenceNumber}`,
    eventName: options.eventName ?? 'INSERT',
    eventSource: 'aws:dynamodb',
    eventVersion: '1.1',
    awsRegion: 'eu-west-1',
    eventSourceARN: 'arn:aws:dynamodb:eu-west-1:123456789012:table/outbox/stream/2024-05-01T00:00:00.000',
    dynamodb: {
      Keys: 'messageId' in item ? { messageId: { S: String(item.messageId) } } : {},
      SequenceNumber: sequenceNumber,
      SizeBytes: 512,
      StreamViewType: 'NEW_IMAGE',
      // The SDK's AttributeValue and aws-lambda's describe the same wire shape.
      ...(image === null
        ? {}
        : {
            NewImage: marshall(image, { removeUndefinedValues: true }) as unknown as Record<
              string,
              StreamAttributeValue
            >,
          }),
    },
  };
}

/** Options of {@link sqsRecord}. */
export interface SqsRecordOptions {
  readonly messageId?: string;
  /** A raw body, used instead of the JSON of the envelope. */
  readonly rawBody?: string;
}

/** An SQS record delivering `message` (as the relay sends it: the envelope as JSON). */
export function sqsRecord(message: Envelope = envelope(), options: SqsRecordOptions = {}): SQSRecord {
  const messageId = options.messageId ?? `sqs-${message.messageId}`;
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body: options.rawBody ?? JSON.stringify(message),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(FIXED_NOW.getTime()),
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(FIXED_NOW.getTime()),
    },
    messageAttributes: {
      message_id: { dataType: 'String', stringValue: message.messageId },
      topic: { dataType: 'String', stringValue: message.topic },
    },
    md5OfBody: '00000000000000000000000000000000',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:order-created',
    awsRegion: 'eu-west-1',
  };
}

/** Options of {@link apiEvent}. */
export interface ApiEventOptions {
  readonly method?: string;
  readonly path?: string;
  /** A string is sent as is; anything else is sent as its JSON. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly pathParameters?: Record<string, string>;
  readonly isBase64Encoded?: boolean;
}

/** An API Gateway (REST, proxy integration) event. */
export function apiEvent(options: ApiEventOptions = {}): APIGatewayProxyEvent {
  const body =
    options.body === undefined
      ? null
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const method = options.method ?? 'POST';
  const path = options.path ?? '/orders';
  return {
    body,
    headers: options.headers ?? {},
    multiValueHeaders: {},
    httpMethod: method,
    isBase64Encoded: options.isBase64Encoded ?? false,
    path,
    pathParameters: options.pathParameters ?? null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    resource: path,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      authorizer: undefined,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '127.0.0.1',
        user: null,
        userAgent: 'vitest',
        userArn: null,
      },
      path,
      stage: 'test',
      requestId: 'request-1',
      requestTimeEpoch: FIXED_NOW.getTime(),
      resourceId: 'resource',
      resourcePath: path,
    },
  };
}

/** A Lambda context for handlers that read it (the logger, the batch processor). */
export function lambdaContext(): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test-function',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:test-function',
    memoryLimitInMB: '128',
    awsRequestId: 'aws-request-1',
    logGroupName: '/aws/lambda/test-function',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * The exception DynamoDB throws for a cancelled TransactWriteItems: one reason per action, in order
 * (`None` for the actions that were fine). An `Item` is the marshalled ALL_OLD item.
 */
export function transactionCanceled(reasons: readonly CancellationReason[]): TransactionCanceledException {
  return new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons
      .map((reason) => reason.Code ?? 'None')
      .join(', ')}]`,
    $metadata: {},
    CancellationReasons: [...reasons],
  });
}

/** `record` as SQS delivers it on its `receiveCount`-th receive (ApproximateReceiveCount). */
export function withReceiveCount(record: SQSRecord, receiveCount: number): SQSRecord {
  return { ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(receiveCount) } };
}

/** A clock that stands still until a test moves it; starts at {@link FIXED_NOW}. */
export interface ManualClock {
  /** The current instant (a fresh Date each call). */
  readonly now: () => Date;
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
}

/** A {@link ManualClock} starting at `start`. */
export function manualClock(start: Date = FIXED_NOW): ManualClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
  };
}

/**
 * Key schemas of the example's tables as an in-memory DynamoDB holds them (`new MemoryDocumentClient(…)`):
 * the outbox with its sparse due and attention indexes, its aggregate and order indexes, the consumer's inbox,
 * orders and inventory.
 */
export const MEMORY_TABLE_SCHEMAS = {
  outbox: {
    partitionKey: OUTBOX_KEYS.partitionKey,
    globalIndexes: [
      {
        name: OUTBOX_KEYS.dueIndex.name,
        partitionKey: OUTBOX_KEYS.dueIndex.partitionKey,
        sortKey: OUTBOX_KEYS.dueIndex.sortKey,
        projection: OUTBOX_KEYS.dueIndex.projection,
      },
      {
        name: OUTBOX_KEYS.aggregateIndex.name,
        partitionKey: OUTBOX_KEYS.aggregateIndex.partitionKey,
        sortKey: OUTBOX_KEYS.aggregateIndex.sortKey,
      },
      {
        name: OUTBOX_KEYS.attentionIndex.name,
        partitionKey: OUTBOX_KEYS.attentionIndex.partitionKey,
        sortKey: OUTBOX_KEYS.attentionIndex.sortKey,
        projection: OUTBOX_KEYS.attentionIndex.projection,
      },
      {
        name: OUTBOX_KEYS.orderIndex.name,
        partitionKey: OUTBOX_KEYS.orderIndex.partitionKey,
        sortKey: OUTBOX_KEYS.orderIndex.sortKey,
        projection: OUTBOX_KEYS.orderIndex.projection,
      },
    ],
  },
  sequences: { partitionKey: 'orderKey' },
  inbox: { partitionKey: 'messageId' },
  orders: { partitionKey: 'orderId' },
  inventory: { partitionKey: 'sku' },
} as const satisfies Record<string, MemoryTableSchema>;
