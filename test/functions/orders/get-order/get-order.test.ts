import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { type GetOrderDeps, getOrder } from '../../../../functions/orders/get-order/get-order.ts';
import { OUTBOX_KEYS } from '../../../../shared/aws/outbox-table.ts';
import { MemoryDocumentClient } from '../../../../shared/memory/memory-document-client.ts';
import { deliveryIdOf, subscriberOrderKeyOf } from '../../../../shared/message/delivery-id.ts';
import type { OutboxItem } from '../../../../shared/outbox/outbox-item.ts';
import { apiEvent, FIXED_NOW, outboxItem, testMessageId } from '../../../support/factories.ts';

const order = {
  orderId: 'order-1',
  customerId: 'customer-1',
  items: [{ sku: 'SKU-1', quantity: 2 }],
  createdAt: FIXED_NOW.toISOString(),
};

let db: MemoryDocumentClient;
/** Every command the function sent, in order. */
let sent: unknown[];
let deps: GetOrderDeps;

beforeEach(async () => {
  // The outbox's aggregate index as the construct defines it: keys only, so every field shown is read by key.
  const { aggregateIndex } = OUTBOX_KEYS;
  db = new MemoryDocumentClient({
    orders: { partitionKey: 'orderId' },
    outbox: {
      partitionKey: OUTBOX_KEYS.partitionKey,
      globalIndexes: [
        {
          name: aggregateIndex.name,
          partitionKey: aggregateIndex.partitionKey,
          sortKey: aggregateIndex.sortKey,
          projection: aggregateIndex.projection,
        },
      ],
    },
  });
  sent = [];
  const inner = db.asDocumentClient();
  const client = {
    send: (command: unknown) => {
      sent.push(command);
      return inner.send(command as never);
    },
  } as unknown as GetOrderDeps['client'];
  deps = { client, ordersTable: 'orders', outboxTable: 'outbox' };
  await db.send(new PutCommand({ TableName: 'orders', Item: order }));
});

function getEvent(orderId: string) {
  return apiEvent({ method: 'GET', path: `/orders/${orderId}`, pathParameters: { orderId } });
}

async function storeMessages(...messages: OutboxItem[]): Promise<void> {
  for (const message of messages) await db.send(new PutCommand({ TableName: 'outbox', Item: message }));
}

/** `subscriber`'s delivery row of `message`, as the writer stores it, with the delivery's own state. */
function deliveryOf(message: OutboxItem, subscriber: string, state: Partial<OutboxItem> = {}): OutboxItem {
  return {
    ...message,
    messageId: deliveryIdOf(message.messageId, subscriber),
    ...(message.orderKey === undefined
      ? {}
      : { orderKey: subscriberOrderKeyOf(message.orderKey, subscriber) }),
    subscriber,
    ...state,
  };
}

describe('getOrder', () => {
  it('answers 200 with the order and the delivery status of its messages', async () => {
    const pending = outboxItem({ messageId: testMessageId(1), aggregateId: 'order-1' });
    const sentOne = outboxItem({
      messageId: testMessageId(2),
      aggregateId: 'order-1',
      topic: 'order.paid',
      status: 'SENT',
      attempts: 1,
      sentAt: '2024-05-01T12:00:01.000Z',
    });
    await storeMessages(
      sentOne,
      pending,
      outboxItem({ messageId: testMessageId(3), aggregateId: 'order-2' }),
    );

    const response = await getOrder(getEvent('order-1'), deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      ...order,
      // The stored row has no status (written before orders had one): it reads as placed.
      status: 'PLACED',
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
    await storeMessages(
      outboxItem({ messageId: testMessageId(1), status: 'CONFIRMED', outcome: 'REJECTED_OUT_OF_STOCK' }),
      outboxItem({ messageId: testMessageId(2), status: 'CONFIRMED', outcome: 'APPLIED' }),
      outboxItem({ messageId: testMessageId(3), status: 'SENT', outcome: 'APPLIED' }),
      outboxItem({ messageId: testMessageId(4), status: 'CONFIRMED' }),
    );

    const response = await getOrder(getEvent('order-1'), deps);

    const messages = JSON.parse(response.body).messages as Record<string, unknown>[];
    expect(messages.map((m) => m.outcome)).toEqual([
      'REJECTED_OUT_OF_STOCK',
      'APPLIED',
      undefined,
      undefined,
    ]);
  });

  it("shows a cancelled order's status and when it was cancelled, with both messages and their outcomes", async () => {
    const cancelledAt = '2024-05-01T12:05:00.000Z';
    await db.send(
      new PutCommand({
        TableName: 'orders',
        Item: { ...order, status: 'CANCELLED', version: 2, cancelledAt, messageId: testMessageId(1) },
      }),
    );
    await storeMessages(
      outboxItem({ messageId: testMessageId(1), status: 'CONFIRMED', outcome: 'APPLIED' }),
      outboxItem({
        messageId: testMessageId(2),
        topic: 'order.cancelled',
        status: 'CONFIRMED',
        outcome: 'RELEASED',
      }),
    );

    const response = await getOrder(getEvent('order-1'), deps);

    const body = JSON.parse(response.body);
    expect(body).toMatchObject({ orderId: 'order-1', status: 'CANCELLED', cancelledAt });
    expect(body.messages).toEqual([
      expect.objectContaining({ topic: 'order.created', status: 'CONFIRMED', outcome: 'APPLIED' }),
      expect.objectContaining({ topic: 'order.cancelled', status: 'CONFIRMED', outcome: 'RELEASED' }),
    ]);
    // The order's version and its message id are the service's bookkeeping, not part of the answer.
    expect(body).not.toHaveProperty('version');
    expect(body).not.toHaveProperty('messageId');
  });

  it('lists the messages in seq order, even when the cancellation got the smaller id (same millisecond)', async () => {
    await db.send(
      new PutCommand({ TableName: 'orders', Item: { ...order, status: 'CANCELLED', version: 2 } }),
    );
    await storeMessages(
      outboxItem({
        messageId: testMessageId(1),
        topic: 'order.cancelled',
        orderKey: 'order#order-1',
        seq: 2,
      }),
      outboxItem({ messageId: testMessageId(2), topic: 'order.created', orderKey: 'order#order-1', seq: 1 }),
    );

    const body = JSON.parse((await getOrder(getEvent('order-1'), deps)).body);

    expect(body.messages.map((message: { topic: string }) => message.topic)).toEqual([
      'order.created',
      'order.cancelled',
    ]);
    expect(body.messages[0]).not.toHaveProperty('seq');
  });

  it('shows a placed order as PLACED, without a cancellation time', async () => {
    await db.send(new PutCommand({ TableName: 'orders', Item: { ...order, status: 'PLACED', version: 1 } }));

    const body = JSON.parse((await getOrder(getEvent('order-1'), deps)).body);

    expect(body.status).toBe('PLACED');
    expect(body).not.toHaveProperty('cancelledAt');
  });

  it('shows why a message is failing', async () => {
    await storeMessages(
      outboxItem({
        aggregateId: 'order-1',
        status: 'FAILED',
        attempts: 10,
        lastError: 'QueueDoesNotExist: gone',
      }),
    );

    const response = await getOrder(getEvent('order-1'), deps);

    expect(JSON.parse(response.body).messages[0]).toMatchObject({
      status: 'FAILED',
      lastError: 'QueueDoesNotExist: gone',
    });
  });

  it('does not leak outbox internals such as the payload or the due-index keys', async () => {
    await storeMessages(outboxItem({ aggregateId: 'order-1' }));

    const response = await getOrder(getEvent('order-1'), deps);

    expect(Object.keys(JSON.parse(response.body).messages[0]).sort()).toEqual([
      'attempts',
      'messageId',
      'status',
      'topic',
    ]);
  });

  it('reads the order consistently, its message ids through the aggregate index and each message by key without its payload', async () => {
    await storeMessages(
      outboxItem({ messageId: testMessageId(1), aggregateId: 'order-1' }),
      outboxItem({ messageId: testMessageId(2), aggregateId: 'order-1' }),
    );

    await getOrder(getEvent('order-1'), deps);

    const gets = sent.filter((command): command is GetCommand => command instanceof GetCommand);
    expect(gets[0]?.input).toEqual({
      TableName: 'orders',
      Key: { orderId: 'order-1' },
      ConsistentRead: true,
    });
    const query = sent.find((command) => command instanceof QueryCommand) as QueryCommand;
    expect(query.input).toMatchObject({
      TableName: 'outbox',
      IndexName: 'byAggregate',
      ExpressionAttributeValues: { ':aggregateId': 'order-1' },
    });
    const messageReads = gets.filter((get) => get.input.TableName === 'outbox');
    expect(messageReads.map((get) => get.input.Key)).toEqual([
      { messageId: testMessageId(1) },
      { messageId: testMessageId(2) },
    ]);
    for (const read of messageReads) {
      expect(Object.values(read.input.ExpressionAttributeNames ?? {})).not.toContain('payload');
    }
  });

  it('shows a message delivered to subscribers once, with its derived status and each subscriber’s delivery', async () => {
    const created = outboxItem({ messageId: testMessageId(1), orderKey: 'order#order-1', seq: 1 });
    await storeMessages(
      deliveryOf(created, 'loyalty', { status: 'SENT', attempts: 2, sentAt: '2024-05-01T12:00:02.000Z' }),
      deliveryOf(created, 'inventory', {
        status: 'CONFIRMED',
        attempts: 1,
        sentAt: '2024-05-01T12:00:01.000Z',
        confirmedAt: '2024-05-01T12:00:03.000Z',
        outcome: 'APPLIED',
      }),
    );

    const body = JSON.parse((await getOrder(getEvent('order-1'), deps)).body);

    expect(body.messages).toEqual([
      {
        messageId: testMessageId(1),
        topic: 'order.created',
        // Not CONFIRMED until every subscriber is.
        status: 'SENT',
        attempts: 3,
        deliveries: [
          {
            subscriber: 'inventory',
            status: 'CONFIRMED',
            attempts: 1,
            sentAt: '2024-05-01T12:00:01.000Z',
            confirmedAt: '2024-05-01T12:00:03.000Z',
            outcome: 'APPLIED',
          },
          { subscriber: 'loyalty', status: 'SENT', attempts: 2, sentAt: '2024-05-01T12:00:02.000Z' },
        ],
      },
    ]);
  });

  it('shows only the order’s own events, not the outbox’s messages about it (an erase sent to a subscriber)', async () => {
    const created = outboxItem({ messageId: testMessageId(1) });
    const erase = outboxItem({ messageId: testMessageId(2), topic: 'outbox.erase', aggregateId: 'order-1' });
    await storeMessages(deliveryOf(created, 'inventory'), deliveryOf(erase, 'inventory'));

    const body = JSON.parse((await getOrder(getEvent('order-1'), deps)).body);

    expect(body.messages.map((message: { topic: string }) => message.topic)).toEqual(['order.created']);
  });

  it("shows a subscriber's outcome only once its delivery is CONFIRMED, and the message CONFIRMED once every one is", async () => {
    const created = outboxItem({ messageId: testMessageId(1) });
    const cancelled = outboxItem({ messageId: testMessageId(2), topic: 'order.cancelled' });
    await storeMessages(
      deliveryOf(created, 'inventory', { status: 'CONFIRMED', outcome: 'REJECTED_OUT_OF_STOCK' }),
      deliveryOf(created, 'loyalty', { status: 'CONFIRMED', outcome: 'AWARDED' }),
      deliveryOf(cancelled, 'inventory', { status: 'CONFIRMED', outcome: 'NOTHING_TO_RELEASE' }),
      // A confirmation whose delivery a replay sent again: its old outcome is not what happens now.
      deliveryOf(cancelled, 'loyalty', { status: 'SENT', outcome: 'REVOKED' }),
    );

    const messages = JSON.parse((await getOrder(getEvent('order-1'), deps)).body).messages;

    expect(messages.map((m: { status: string }) => m.status)).toEqual(['CONFIRMED', 'SENT']);
    expect(
      messages.map((m: { deliveries: { outcome?: string }[] }) => m.deliveries.map((d) => d.outcome)),
    ).toEqual([
      ['REJECTED_OUT_OF_STOCK', 'AWARDED'],
      ['NOTHING_TO_RELEASE', undefined],
    ]);
    // Subscribers' outcomes differ: the message has none of its own.
    expect(messages[0]).not.toHaveProperty('outcome');
  });

  it('shows a message FAILED when one subscriber failed and the other confirmed, with why on the delivery that failed', async () => {
    const created = outboxItem({ messageId: testMessageId(1) });
    await storeMessages(
      deliveryOf(created, 'inventory', { status: 'CONFIRMED', attempts: 1, outcome: 'APPLIED' }),
      deliveryOf(created, 'loyalty', {
        status: 'FAILED',
        attempts: 10,
        lastError: 'QueueDoesNotExist: gone',
      }),
    );

    const [message] = JSON.parse((await getOrder(getEvent('order-1'), deps)).body).messages;

    expect(message).toMatchObject({ status: 'FAILED', attempts: 11 });
    expect(message.deliveries[1]).toEqual({
      subscriber: 'loyalty',
      status: 'FAILED',
      attempts: 10,
      lastError: 'QueueDoesNotExist: gone',
    });
  });

  it('shows a message written before subscribers in its old shape beside a fanned-out one, in seq order', async () => {
    await db.send(
      new PutCommand({ TableName: 'orders', Item: { ...order, status: 'CANCELLED', version: 2 } }),
    );
    const cancelled = outboxItem({
      messageId: testMessageId(1),
      topic: 'order.cancelled',
      orderKey: 'order#order-1',
      seq: 2,
    });
    await storeMessages(
      outboxItem({
        messageId: testMessageId(2),
        orderKey: 'order#order-1',
        seq: 1,
        status: 'CONFIRMED',
        attempts: 1,
        outcome: 'APPLIED',
      }),
      deliveryOf(cancelled, 'inventory', { status: 'PENDING' }),
      deliveryOf(cancelled, 'loyalty', { status: 'PENDING' }),
    );

    const body = JSON.parse((await getOrder(getEvent('order-1'), deps)).body);

    expect(body.messages).toEqual([
      {
        messageId: testMessageId(2),
        topic: 'order.created',
        status: 'CONFIRMED',
        attempts: 1,
        outcome: 'APPLIED',
      },
      {
        messageId: testMessageId(1),
        topic: 'order.cancelled',
        status: 'PENDING',
        attempts: 0,
        deliveries: [
          { subscriber: 'inventory', status: 'PENDING', attempts: 0 },
          { subscriber: 'loyalty', status: 'PENDING', attempts: 0 },
        ],
      },
    ]);
  });

  it('answers 404 for an unknown order', async () => {
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
    expect(sent).toHaveLength(0);
  });
});
