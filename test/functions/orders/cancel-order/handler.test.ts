import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/orders/cancel-order/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { apiEvent, FIXED_NOW, lambdaContext } from '../../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const ORDERED_TOPICS = {
  'order.created': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
  'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
};
const env = {
  ORDERS_TABLE: 'orders-table',
  OUTBOX_TABLE: 'outbox-table',
  ORDERED_TOPICS: JSON.stringify(ORDERED_TOPICS),
  SEQUENCE_TABLE: 'sequence-table',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};
const placed = {
  orderId: 'order-1',
  customerId: 'customer-1',
  items: [{ sku: 'SKU-1', quantity: 2 }],
  createdAt: FIXED_NOW.toISOString(),
  status: 'PLACED',
  version: 1,
};

function cancelEvent(orderId: string) {
  return apiEvent({ method: 'POST', path: `/orders/${orderId}/cancel`, pathParameters: { orderId } });
}

beforeEach(() => {
  ddb.reset();
});

describe('cancel-order handler', () => {
  it.each(['ORDERS_TABLE', 'OUTBOX_TABLE'])(
    'fails loudly at start with a ConfigError naming %s',
    (setting) => {
      const incomplete = { ...env, [setting]: undefined };

      expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
      expect(() => handler.withEnv(incomplete)).toThrow(`${setting} is not set`);
    },
  );

  it('reads the order from the configured table and writes the cancellation there, its message numbered 2 as ORDERED_TOPICS says', async () => {
    ddb.on(GetCommand).resolves({ Item: placed });
    ddb.on(TransactWriteCommand).resolves({});

    const response = await handler.withEnv(env)(cancelEvent('order-1'), lambdaContext());

    expect(response.statusCode).toBe(202);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'orders-table',
      Key: { orderId: 'order-1' },
      ConsistentRead: true,
    });
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    // The order's update and its message; the version the update sets numbers the message, so no counter.
    expect(items).toHaveLength(2);
    expect(items[0]?.Update).toMatchObject({ TableName: 'orders-table', Key: { orderId: 'order-1' } });
    expect(items[1]?.Put).toMatchObject({
      TableName: 'outbox-table',
      Item: { topic: 'order.cancelled', orderKey: 'order#order-1', seq: 2 },
    });
  });

  it('answers 500 with the request id, not the internals, when DynamoDB fails', async () => {
    ddb.on(GetCommand).rejects(new Error('secret internal detail'));

    const response = await handler.withEnv(env)(cancelEvent('order-1'), lambdaContext());

    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret');
  });
});
