import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler } from '../../../../functions/outbox/relay/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { lambdaContext, outboxItem, streamRecord } from '../../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const env = {
  OUTBOX_TABLE: 'outbox-table',
  TOPIC_QUEUES: JSON.stringify({ 'order.created': QUEUE }),
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

beforeEach(() => {
  ddb.reset();
  sqs.reset();
});

describe('relay handler', () => {
  it('fails loudly at start with a ConfigError naming TOPIC_QUEUES when it is not valid JSON', () => {
    const bad = { ...env, TOPIC_QUEUES: "{'order.created': 'queue'}" };

    expect(() => createHandler(bad)).toThrow(ConfigError);
    expect(() => createHandler(bad)).toThrow(/TOPIC_QUEUES/);
  });

  it('fails loudly when TOPIC_QUEUES is missing', () => {
    expect(() => createHandler({ ...env, TOPIC_QUEUES: undefined })).toThrow(/TOPIC_QUEUES is not set/);
  });

  it('fails loudly with a ConfigError naming OUTBOX_TABLE when it is missing', () => {
    expect(() => createHandler({ ...env, OUTBOX_TABLE: undefined })).toThrow(ConfigError);
    expect(() => createHandler({ ...env, OUTBOX_TABLE: undefined })).toThrow(/OUTBOX_TABLE/);
  });

  it.each(['soon', '', '-5', '1.5'])('fails loudly when CONFIRM_DEADLINE_MS is "%s"', (value) => {
    expect(() => createHandler({ ...env, CONFIRM_DEADLINE_MS: value })).toThrow(/CONFIRM_DEADLINE_MS/);
  });

  it('forwards a stream insert to the routed queue and marks it SENT with the configured deadline', async () => {
    vi.useFakeTimers({ now: new Date('2024-05-01T12:00:00.000Z'), toFake: ['Date'] });
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
      Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: 'x' })),
    }));
    ddb.on(UpdateCommand).resolves({});
    const item = outboxItem();

    try {
      const response = await createHandler({ ...env, CONFIRM_DEADLINE_MS: '1000' })(
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
    } finally {
      vi.useRealTimers();
    }
  });
});
