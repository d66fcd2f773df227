import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { type GetOrderDeps, getOrder } from '../../../../functions/orders/get-order/get-order.ts';
import { apiEvent, FIXED_NOW, outboxItem, testMessageId } from '../../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const deps: GetOrderDeps = {
  client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
  ordersTable: 'orders',
  outboxTable: 'outbox',
};
const order = {
  orderId: 'order-1',
  customerId: 'customer-1',
  items: [{ sku: 'SKU-1', quantity: 2 }],
  createdAt: FIXED_NOW.toISOString(),
};

function getEvent(orderId: string) {
  return apiEvent({ method: 'GET', path: `/orders/${orderId}`, pathParameters: { orderId } });
}

beforeEach(() => {
  ddb.reset();
  ddb.on(GetCommand).resolves({ Item: order });
  ddb.on(QueryCommand).resolves({ Items: [] });
});

describe('getOrder', () => {
  it('answers 200 with the order and the delivery status of its messages', async () => {
    const pending = outboxItem({ messageId: testMessageId(1), aggregateId: 'order-1' });
    const sent = outboxItem({
      messageId: testMessageId(2),
      aggregateId: 'order-1',
      topic: 'order.paid',
      status: 'SENT',
      attempts: 1,
      sentAt: '2024-05-01T12:00:01.000Z',
    });
    ddb.on(QueryCommand).resolves({ Items: [pending, sent] });

    const response = await getOrder(getEvent('order-1'), deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      ...order,
      messages: [
        { messageId: testMessageId(1), topic: 'order.created', status: 'PENDING', attempts: 0 },
        {
          messageId: testMessageId(2),
          topic: 'order.paid',
          status: 'SENT',
          attempts: 1,
          sentAt: '2024-05-01T12:00:01.000Z',
        },
      ],
    });
  });

  it('shows what the consumer did with each message once it is CONFIRMED, and nothing before', async () => {
    ddb.on(QueryCommand).resolves({
      Items: [
        outboxItem({ messageId: testMessageId(1), status: 'CONFIRMED', outcome: 'REJECTED_OUT_OF_STOCK' }),
        outboxItem({ messageId: testMessageId(2), status: 'CONFIRMED', outcome: 'APPLIED' }),
        outboxItem({ messageId: testMessageId(3), status: 'SENT' }),
        outboxItem({ messageId: testMessageId(4), status: 'CONFIRMED' }),
      ],
    });

    const response = await getOrder(getEvent('order-1'), deps);

    const messages = JSON.parse(response.body).messages as Record<string, unknown>[];
    expect(messages.map((m) => m.outcome)).toEqual([
      'REJECTED_OUT_OF_STOCK',
      'APPLIED',
      undefined,
      undefined,
    ]);
  });

  it('shows why a message is failing', async () => {
    ddb.on(QueryCommand).resolves({
      Items: [outboxItem({ status: 'FAILED', attempts: 10, lastError: 'QueueDoesNotExist: gone' })],
    });

    const response = await getOrder(getEvent('order-1'), deps);

    expect(JSON.parse(response.body).messages[0]).toMatchObject({
      status: 'FAILED',
      lastError: 'QueueDoesNotExist: gone',
    });
  });

  it('does not leak outbox internals such as the payload or the due-index keys', async () => {
    ddb.on(QueryCommand).resolves({ Items: [outboxItem()] });

    const response = await getOrder(getEvent('order-1'), deps);

    expect(Object.keys(JSON.parse(response.body).messages[0]).sort()).toEqual([
      'attempts',
      'messageId',
      'status',
      'topic',
    ]);
  });

  it('reads the order consistently and its messages through the aggregate index', async () => {
    await getOrder(getEvent('order-1'), deps);

    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'orders',
      Key: { orderId: 'order-1' },
      ConsistentRead: true,
    });
    const query = ddb.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(query?.TableName).toBe('outbox');
    expect(query?.IndexName).toBe('byAggregate');
    expect(query?.ExpressionAttributeNames).toEqual({ '#aggregateId': 'aggregateId' });
    expect(query?.ExpressionAttributeValues).toEqual({ ':orderId': 'order-1' });
  });

  it('answers 404 for an unknown order', async () => {
    ddb.on(GetCommand).resolves({});

    const response = await getOrder(getEvent('missing'), deps);

    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toEqual({
      error: 'order not found',
      details: [{ field: 'orderId', problem: expect.stringContaining('missing') }],
    });
  });

  it.each([
    ['bad characters', 'order 1'],
    ['65 characters', 'a'.repeat(65)],
  ])('answers 400 naming orderId for an order id with %s, and reads nothing', async (_, orderId) => {
    const response = await getOrder(getEvent(orderId), deps);

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: 'invalid order id',
      details: [{ field: 'orderId', problem: expect.stringContaining('1-64 characters') }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });
});
