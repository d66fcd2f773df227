/**
 * What the shipped handlers write to their logs: names, ids, outcomes and reasons — never a message's payload,
 * an item's data or the function's credentials, even at DEBUG and on failure paths; the payload appears only
 * when the operator turns on Powertools' event logging (POWERTOOLS_LOGGER_LOG_EVENT).
 */
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { httpErrorBoundary } from '../../../functions/http/error-boundary.ts';
import type { AdminDeps } from '../../../shared/admin/admin-deps.ts';
import { type DynamoAdminTables, dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { createAdminHandler } from '../../../shared/lambda/admin-handler.ts';
import { createConsumerHandler } from '../../../shared/lambda/consumer-handler.ts';
import { createLogger } from '../../../shared/lambda/create-logger.ts';
import { createRelayHandler } from '../../../shared/lambda/relay-handler.ts';
import { loggableError } from '../../../shared/observability/loggable-error.ts';
import {
  envelope,
  lambdaContext,
  outboxItem,
  sqsRecord,
  streamRecord,
  transactionCanceled,
  withReceiveCount,
} from '../../support/factories.ts';

/** Strings that must never reach a log line. */
const PAYLOAD_CANARY = 'CANARY-PAYLOAD-7f3a9c';
const ITEM_CANARY = 'CANARY-ITEM-51be02';
const SECRET_CANARY = 'CANARYSECRETKEY0123456789abcdefghijklmn';
const TOKEN_CANARY = 'CANARY-SESSION-TOKEN-e9d4';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const DLQ = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created-dlq';

/** The most talkative environment a function can have, with credentials in it as Lambda sets them. */
const BASE_ENV = {
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIACANARY0000000000',
  AWS_SECRET_ACCESS_KEY: SECRET_CANARY,
  AWS_SESSION_TOKEN: TOKEN_CANARY,
  POWERTOOLS_LOG_LEVEL: 'DEBUG',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

/** Everything written to stdout and stderr while a test runs (Powertools writes each log line there). */
let output: string[] = [];

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  output = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  }
  for (const [name, value] of Object.entries(BASE_ENV)) vi.stubEnv(name, value);
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const logs = () => output.join('');

/** A message whose payload carries the canary. */
const secretMessage = () =>
  envelope({ payload: { customerId: PAYLOAD_CANARY, items: [{ sku: 'SKU-1', quantity: 1 }] } });

/** A cancelled transaction whose reason carries the old item (ReturnValuesOnConditionCheckFailure: ALL_OLD). */
const cancelledWithItem = () =>
  transactionCanceled([
    { Code: 'ConditionalCheckFailed', Item: { customerId: { S: ITEM_CANARY }, messageId: { S: 'm-1' } } },
    { Code: 'None' },
  ]);

function relayEvent(): DynamoDBStreamEvent {
  return { Records: [streamRecord(outboxItem({ ...secretMessage() }))] };
}

describe('the relay logs', () => {
  const env = {
    ...BASE_ENV,
    OUTBOX_TABLE: 'outbox',
    TOPIC_QUEUES: JSON.stringify({ 'order.created': QUEUE }),
  };

  it('no payload or credential when a send fails and the failure cannot be recorded', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('SQS is unavailable'));
    ddb.on(UpdateCommand).rejects(cancelledWithItem());
    await createRelayHandler().withEnv(env)(relayEvent(), lambdaContext());

    expect(logs()).toContain('message not sent');
    for (const canary of [PAYLOAD_CANARY, ITEM_CANARY, SECRET_CANARY, TOKEN_CANARY]) {
      expect(logs()).not.toContain(canary);
    }
  });

  it('the payload when, and only when, the operator turns on event logging', async () => {
    vi.stubEnv('POWERTOOLS_LOGGER_LOG_EVENT', 'true');
    sqs.on(SendMessageBatchCommand).callsFake(async (input: { Entries?: { Id?: string }[] }) => ({
      Successful: (input.Entries ?? []).map((entry) => ({
        Id: entry.Id,
        MessageId: 'm',
        MD5OfMessageBody: 'x',
      })),
    }));
    ddb.on(UpdateCommand).resolves({});
    await createRelayHandler().withEnv(env)(relayEvent(), lambdaContext());

    // The capture sees what the logger writes: with the flag on, the event (and its payload) is logged.
    expect(logs()).toContain(PAYLOAD_CANARY);
    expect(logs()).not.toContain(SECRET_CANARY);
  });
});

describe('the consumer logs', () => {
  const env = {
    ...BASE_ENV,
    INBOX_TABLE: 'inbox',
    OUTBOX_TABLE: 'outbox',
    SOURCE_QUEUE_URL: QUEUE,
    DEAD_LETTER_QUEUE_URL: DLQ,
    MAX_RECEIVE_COUNT: '2',
  };
  const handler = createConsumerHandler({
    plan: () => () => ({
      apply: [
        { Update: { TableName: 'stock', Key: { sku: 'SKU-1' }, UpdateExpression: 'SET n = n - :one' } },
      ],
      onConditionFailure: 'OUT_OF_STOCK',
    }),
  });

  it('no payload, item or credential when a message is applied, fails, or is dead-lettered', async () => {
    ddb.on(TransactWriteCommand).rejectsOnce(cancelledWithItem()).rejects(new Error('DynamoDB is down'));
    ddb.on(UpdateCommand).resolves({});
    sqs.on(SendMessageCommand).resolves({});
    const event: SQSEvent = {
      Records: [
        sqsRecord(secretMessage(), { messageId: 'first' }),
        withReceiveCount(sqsRecord(secretMessage(), { messageId: 'last-try' }), 2),
        sqsRecord(undefined, { messageId: 'unreadable', rawBody: `{"payload":"${PAYLOAD_CANARY}"` }),
      ],
    };
    await handler.withEnv(env)(event, lambdaContext());

    expect(logs()).toContain('message failed');
    for (const canary of [PAYLOAD_CANARY, ITEM_CANARY, SECRET_CANARY, TOKEN_CANARY]) {
      expect(logs()).not.toContain(canary);
    }
  });
});

describe('the admin API logs', () => {
  it('no item data when a request fails unexpectedly: the error is reduced to name, message and codes', async () => {
    const failing = {
      send: () => Promise.reject(cancelledWithItem()),
    } as unknown as DynamoAdminTables['client'];
    const deps = dynamoAdminDeps({
      client: failing,
      outboxTable: 'outbox',
      auditTable: 'audit',
    }) as unknown as AdminDeps;
    const handler = createAdminHandler({ deps: () => deps }).withEnv({ ...BASE_ENV });
    const response = await handler(
      {
        httpMethod: 'GET',
        path: '/admin/messages/01HZY3Q4N8W5V6T7R9S0ABCDEF',
        resource: '/admin/{proxy+}',
        pathParameters: { proxy: 'messages/01HZY3Q4N8W5V6T7R9S0ABCDEF' },
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        headers: {},
        multiValueHeaders: {},
        body: null,
        isBase64Encoded: false,
        stageVariables: null,
        requestContext: { identity: { userArn: 'arn:aws:iam::123456789012:user/ana' } },
      } as never,
      lambdaContext(),
    );

    expect(response.statusCode).toBe(500);
    expect(logs()).toContain('admin request failed');
    expect(logs()).toContain('ConditionalCheckFailed');
    expect(logs()).not.toContain(ITEM_CANARY);
    expect(response.body).not.toContain(ITEM_CANARY);
  });
});

describe('the HTTP handlers log', () => {
  it('no item data when a request fails unexpectedly, and answer without internals', async () => {
    const request = {
      error: cancelledWithItem(),
      context: lambdaContext(),
      response: undefined as { statusCode: number; body: string } | undefined,
    };
    await httpErrorBoundary(createLogger('orders', BASE_ENV)).onError?.(request as never);

    expect(request.response?.statusCode).toBe(500);
    expect(request.response?.body).not.toContain('ConditionalCheckFailed');
    expect(logs()).toContain('ConditionalCheckFailed');
    expect(logs()).not.toContain(ITEM_CANARY);
  });
});

describe('loggableError', () => {
  it('keeps name, message, status and reason codes, and drops the items a cancelled transaction carries', () => {
    const error = Object.assign(cancelledWithItem(), { $metadata: { httpStatusCode: 400 } });
    const loggable = loggableError(new Error('wrapped', { cause: error }));

    expect(JSON.stringify(loggable)).not.toContain(ITEM_CANARY);
    expect(loggable.cause).toMatchObject({
      name: 'TransactionCanceledException',
      httpStatusCode: 400,
      cancellationReasons: ['ConditionalCheckFailed', 'None'],
    });
  });

  it('shows what a thrown non-error was', () => {
    expect(loggableError('plain text')).toEqual({ name: 'string', message: 'plain text' });
  });
});
