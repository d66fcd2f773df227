import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { consumerParts, createConsumerHandler } from '../../../shared/lambda/consumer-handler.ts';
import { type Env, requireEnv } from '../../../shared/settings/setting.ts';
import {
  decrementPlan,
  envelope,
  FIXED_NOW,
  lambdaContext,
  sqsRecord,
  withReceiveCount,
} from '../../support/factories.ts';
import {
  DLQ,
  ddb,
  HANDLER_ENV,
  resetHandlerMocks,
  SOURCE,
  sqs,
} from '../../support/sqs-consumer-fixtures.ts';

const env = {
  ...HANDLER_ENV,
  STOCK_TABLE: 'stock-table',
  INBOX_TABLE: 'inbox-table',
  OUTBOX_TABLE: 'outbox-table',
  // Metrics are asserted in the *-metrics tests; here they would only clutter stdout.
  POWERTOOLS_METRICS_DISABLED: 'true',
};

/** The business side of a consumer: one decrement in the table its environment names. */
function stockPlan(env: Env): PlanEffect {
  return decrementPlan({ table: requireEnv(env, 'STOCK_TABLE'), onConditionFailure: 'REJECTED' });
}

const handler = createConsumerHandler({ plan: stockPlan });

beforeEach(() => {
  resetHandlerMocks();
  vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('createConsumerHandler, built from an environment', () => {
  it.each(['INBOX_TABLE', 'SOURCE_QUEUE_URL', 'DEAD_LETTER_QUEUE_URL', 'MAX_RECEIVE_COUNT'])(
    'fails loudly at start with a ConfigError naming %s when it is missing',
    (name) => {
      const incomplete = { ...env, [name]: undefined };

      expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
      expect(() => handler.withEnv(incomplete)).toThrow(`${name} is not set`);
    },
  );

  it.each([
    ['INBOX_TABLE', ''],
    ['OUTBOX_TABLE', 'no spaces allowed'],
    ['SOURCE_QUEUE_URL', 'order-events'],
    ['DEAD_LETTER_QUEUE_URL', 'order-events-dlq'],
    ['MAX_RECEIVE_COUNT', '0'],
    ['MAX_RECEIVE_COUNT', '1001'],
    ['INBOX_RETENTION_DAYS', '-1'],
    ['RETENTION_DAYS', '1e3'],
    ['VISIBILITY_BACKOFF_BASE_SECONDS', '0x10'],
    ['VISIBILITY_BACKOFF_MAX_SECONDS', '43201'],
    ['POWERTOOLS_LOG_LEVEL', 'CHATTY'],
  ])('fails loudly with a ConfigError naming %s when it is "%s"', (name, value) => {
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(name);
  });

  it("fails loudly when the plan's own setting is missing", () => {
    expect(() => handler.withEnv({ ...env, STOCK_TABLE: undefined })).toThrow('STOCK_TABLE is not set');
  });

  it('builds the plan from the environment once per handler, at start', async () => {
    const plan = vi.fn(stockPlan);
    const counted = createConsumerHandler({ plan });
    expect(plan).not.toHaveBeenCalled();

    const consumer = counted.withEnv(env);
    await consumer({ Records: [sqsRecord()] }, lambdaContext());
    await consumer({ Records: [sqsRecord()] }, lambdaContext());

    expect(plan).toHaveBeenCalledExactlyOnceWith(env);
  });

  it('commits the inbox row with the plan’s actions in one transaction, and confirms in OUTBOX_TABLE', async () => {
    const message = envelope({ aggregateId: 'SKU-9' });

    const response = await handler.withEnv(env)({ Records: [sqsRecord(message)] }, lambdaContext());

    expect(response).toEqual({ batchItemFailures: [] });
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items[0]?.Put).toMatchObject({
      TableName: 'inbox-table',
      Item: { messageId: message.messageId, outcome: 'APPLIED' },
    });
    expect(items[1]?.Update).toMatchObject({ TableName: 'stock-table', Key: { sku: 'SKU-9' } });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'outbox-table',
      Key: { messageId: message.messageId },
      ExpressionAttributeValues: expect.objectContaining({ ':to': 'CONFIRMED' }),
    });
  });

  it('keeps inbox rows INBOX_RETENTION_DAYS and confirmed messages RETENTION_DAYS', async () => {
    await handler.withEnv({ ...env, INBOX_RETENTION_DAYS: '2', RETENTION_DAYS: '3' })(
      { Records: [sqsRecord()] },
      lambdaContext(),
    );

    const nowSeconds = FIXED_NOW.getTime() / 1000;
    const inboxRow = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems?.[0]?.Put?.Item;
    expect(inboxRow?.expiresAt).toBe(nowSeconds + 2 * 86_400);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues?.[':expiresAt']).toBe(
      nowSeconds + 3 * 86_400,
    );
  });

  it('applies the message but confirms nothing when OUTBOX_TABLE is not set', async () => {
    const response = await handler.withEnv({ ...env, OUTBOX_TABLE: undefined })(
      { Records: [sqsRecord()] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('dead-letters a poison message to DEAD_LETTER_QUEUE_URL with its reason and acknowledges it', async () => {
    const poison = sqsRecord(envelope(), { messageId: 'poison', rawBody: '{"messageId":' });

    const response = await handler.withEnv(env)({ Records: [poison] }, lambdaContext());

    expect(response).toEqual({ batchItemFailures: [] });
    const sent = sqs.commandCalls(SendMessageCommand)[0]?.args[0].input;
    expect(sent).toMatchObject({ QueueUrl: DLQ, MessageBody: '{"messageId":' });
    expect(sent?.MessageAttributes?.dead_letter_reason?.StringValue).toBe('POISON');
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('backs a transient failure off on SOURCE_QUEUE_URL within the configured bounds, and reports it', async () => {
    ddb.on(TransactWriteCommand).rejects(new Error('ProvisionedThroughputExceededException'));
    const record = sqsRecord(envelope(), { messageId: 'flaky' });

    const response = await handler.withEnv({ ...env, VISIBILITY_BACKOFF_BASE_SECONDS: '40' })(
      { Records: [record] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'flaky' }] });
    const change = sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input;
    expect(change).toMatchObject({ QueueUrl: SOURCE, ReceiptHandle: record.receiptHandle });
    // Equal jitter on the first receive: between half the base and the base.
    expect(change?.VisibilityTimeout).toBeGreaterThanOrEqual(20);
    expect(change?.VisibilityTimeout).toBeLessThanOrEqual(40);
  });

  it('dead-letters a transient failure on the MAX_RECEIVE_COUNT-th receive', async () => {
    ddb.on(TransactWriteCommand).rejects(new Error('ProvisionedThroughputExceededException'));

    const response = await handler.withEnv(env)(
      { Records: [withReceiveCount(sqsRecord(), 3)] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(
      sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageAttributes?.dead_letter_reason
        ?.StringValue,
    ).toBe('MAX_RECEIVES');
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
  });
});

describe('consumerParts', () => {
  it('has a confirmer exactly when OUTBOX_TABLE is set', () => {
    expect(consumerParts(env, stockPlan).deps.confirmer).toBeDefined();
    expect(consumerParts({ ...env, OUTBOX_TABLE: undefined }, stockPlan).deps.confirmer).toBeUndefined();
  });

  it('reads the failure handling settings, with the visibility backoff defaults', () => {
    const { failures } = consumerParts(env, stockPlan);

    expect(failures).toMatchObject({
      sourceQueueUrl: SOURCE,
      deadLetterQueueUrl: DLQ,
      maxReceiveCount: 3,
      backoff: { baseSeconds: 10, maxSeconds: 900 },
    });
  });
});
