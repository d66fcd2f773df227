import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/inventory/apply-order/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { envelope, lambdaContext, sqsRecord } from '../../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const env = {
  INVENTORY_TABLE: 'inventory-table',
  INBOX_TABLE: 'inbox-table',
  OUTBOX_TABLE: 'outbox-table',
  SOURCE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-events',
  DEAD_LETTER_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-events-dlq',
  MAX_RECEIVE_COUNT: '5',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

beforeEach(() => {
  ddb.reset();
});

describe('apply-order handler', () => {
  it.each([
    'INVENTORY_TABLE',
    'INBOX_TABLE',
    'SOURCE_QUEUE_URL',
    'DEAD_LETTER_QUEUE_URL',
    'MAX_RECEIVE_COUNT',
  ])('fails loudly at start with a ConfigError naming %s', (setting) => {
    const incomplete = { ...env, [setting]: undefined };

    expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
    expect(() => handler.withEnv(incomplete)).toThrow(`${setting} is not set`);
  });

  it('reserves stock in the inventory table, records the inbox row and confirms in the outbox table', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    const message = envelope();

    const response = await handler.withEnv(env)({ Records: [sqsRecord(message)] }, lambdaContext());

    expect(response).toEqual({ batchItemFailures: [] });
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items[0]?.Put?.TableName).toBe('inbox-table');
    expect(items[1]?.Update).toMatchObject({ TableName: 'inventory-table', Key: { sku: 'SKU-1' } });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'outbox-table',
      Key: { messageId: message.messageId },
    });
  });

  it('applies the order without confirming anything when OUTBOX_TABLE is not set (the producer is elsewhere)', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});

    const response = await handler.withEnv({ ...env, OUTBOX_TABLE: undefined })(
      { Records: [sqsRecord(envelope())] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('builds one independent handler per environment', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});

    await handler.withEnv({ ...env, INVENTORY_TABLE: 'stock-a' })(
      { Records: [sqsRecord(envelope())] },
      lambdaContext(),
    );
    await handler.withEnv({ ...env, INVENTORY_TABLE: 'stock-b' })(
      { Records: [sqsRecord(envelope())] },
      lambdaContext(),
    );

    expect(
      ddb
        .commandCalls(TransactWriteCommand)
        .map((call) => call.args[0].input.TransactItems?.[1]?.Update?.TableName),
    ).toEqual(['stock-a', 'stock-b']);
  });
});
