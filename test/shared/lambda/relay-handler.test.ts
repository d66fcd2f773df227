import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { createRelayHandler, relayDeps } from '../../../shared/lambda/relay-handler.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import { FIXED_NOW, lambdaContext, outboxItem, streamRecord } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const env = {
  OUTBOX_TABLE: 'outbox-table',
  TOPIC_QUEUES: JSON.stringify({ 'order.created': QUEUE }),
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  // Metrics are asserted in the *-metrics tests; here they would only clutter stdout.
  POWERTOOLS_METRICS_DISABLED: 'true',
};
const handler = createRelayHandler();

/** SQS accepts every entry of every batch. */
function sqsAcceptsAll(): void {
  sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
    Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: 'x' })),
  }));
}

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('createRelayHandler, built from an environment', () => {
  it('fails loudly at start with a ConfigError naming TOPIC_QUEUES when it is not valid JSON', () => {
    const bad = { ...env, TOPIC_QUEUES: "{'order.created': 'queue'}" };

    expect(() => handler.withEnv(bad)).toThrow(ConfigError);
    expect(() => handler.withEnv(bad)).toThrow(/TOPIC_QUEUES/);
  });

  it('fails loudly when TOPIC_QUEUES is missing', () => {
    expect(() => handler.withEnv({ ...env, TOPIC_QUEUES: undefined })).toThrow(/TOPIC_QUEUES is not set/);
  });

  it('fails loudly with a ConfigError naming OUTBOX_TABLE when it is missing', () => {
    expect(() => handler.withEnv({ ...env, OUTBOX_TABLE: undefined })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, OUTBOX_TABLE: undefined })).toThrow(/OUTBOX_TABLE/);
  });

  it.each(['soon', '', '-5', '1.5', '999'])('fails loudly when CONFIRM_DEADLINE_MS is "%s"', (value) => {
    expect(() => handler.withEnv({ ...env, CONFIRM_DEADLINE_MS: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, CONFIRM_DEADLINE_MS: value })).toThrow(/CONFIRM_DEADLINE_MS/);
  });

  it.each([
    ['TOPIC_QUEUES', '{"order.created":"not-a-url"}'],
    ['RETRY_POLICIES', '{"order.created":{"baseDelayMs":0}}'],
    ['RETENTION_DAYS', '0'],
    ['POWERTOOLS_LOG_LEVEL', 'LOUD'],
  ])('fails loudly with a ConfigError naming %s when it is malformed', (name, value) => {
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(name);
  });

  it('forwards a stream insert to the routed queue and marks it SENT with the configured deadline', async () => {
    sqsAcceptsAll();
    ddb.on(UpdateCommand).resolves({});
    const item = outboxItem();

    const response = await handler.withEnv({ ...env, CONFIRM_DEADLINE_MS: '1000' })(
      { Records: [streamRecord(item)] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.QueueUrl).toBe(QUEUE);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'outbox-table',
      Key: { messageId: item.messageId },
      ExpressionAttributeValues: { ':to': 'SENT', ':deadline': '2024-05-01T12:00:01.000Z' },
    });
  });

  it("applies the topic's RETRY_POLICIES: a rejected entry on its last attempt becomes FAILED", async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
      Failed: (input.Entries ?? []).map((e) => ({
        Id: e.Id,
        SenderFault: true,
        Code: 'InvalidParameterValue',
        Message: 'rejected',
      })),
    }));
    ddb.on(UpdateCommand).resolves({});
    const policies = {
      'order.created': { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 10_000, maxAttempts: 1 },
    };

    const response = await handler.withEnv({ ...env, RETRY_POLICIES: JSON.stringify(policies) })(
      { Records: [streamRecord(outboxItem())] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    // The SENT mark before the send, then the refused send's record undoing it.
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues).toMatchObject({
      ':to': 'SENT',
    });
    expect(ddb.commandCalls(UpdateCommand)[1]?.args[0].input).toMatchObject({
      TableName: 'outbox-table',
      ExpressionAttributeValues: expect.objectContaining({
        ':to': 'FAILED',
        ':attempts': 1,
        ':error': expect.stringContaining('rejected'),
      }),
    });
  });

  it('reports the record whose outcome could not be written, so the stream retries it', async () => {
    sqsAcceptsAll();
    ddb.on(UpdateCommand).rejects(new Error('DynamoDB unavailable'));

    const response = await handler.withEnv(env)(
      { Records: [streamRecord(outboxItem(), { sequenceNumber: '42' })] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '42' }] });
  });
});

describe('relayDeps', () => {
  it('routes the configured topics only, and gives a topic without a policy the default one', () => {
    const deps = relayDeps(env);

    expect(deps.queueFor('order.created')).toBe(QUEUE);
    expect(deps.queueFor('order.shipped')).toBeUndefined();
    // Topic routes are a Map: Object.prototype members are not routes.
    expect(deps.queueFor('constructor')).toBeUndefined();
    expect(deps.retryPolicyFor('order.created')).toEqual(DEFAULT_RETRY_POLICY);
  });
});
