import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { type CancelOrderDeps, cancelOrder } from '../../../../functions/orders/cancel-order/cancel-order.ts';
import { type CreateOrderDeps, createOrder } from '../../../../functions/orders/create-order/create-order.ts';
import { MemoryDocumentClient } from '../../../../shared/memory/memory-document-client.ts';
import { DEFAULT_GAP_TIMEOUT_MS } from '../../../../shared/ordering/ordering.ts';
import { apiEvent, FIXED_NOW, MEMORY_TABLE_SCHEMAS } from '../../../support/factories.ts';
import { jsonEvent } from '../../http/json-event.ts';

/** The example's ordering: an order's two messages are numbered in one sequence. */
const ORDERING = {
  'order.created': { scope: 'order', gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS, sequence: 'aggregate-version' },
  'order.cancelled': { scope: 'order', gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS, sequence: 'aggregate-version' },
} as const;
const LINES = [
  { sku: 'SKU-1', quantity: 2 },
  { sku: 'SKU-2', quantity: 1 },
];
const CANCELLED_AT = new Date(FIXED_NOW.getTime() + 60_000);

let db: MemoryDocumentClient;
let deps: CancelOrderDeps;

interface ErrorBody {
  error: string;
  details: { field: string; problem: string }[];
}

function bodyOf<T>(response: APIGatewayProxyResult): T {
  return JSON.parse(response.body) as T;
}

/** A POST /orders/{orderId}/cancel, with no body unless one is given. */
function cancelEvent(orderId: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  return apiEvent({
    method: 'POST',
    path: `/orders/${orderId}/cancel`,
    pathParameters: { orderId },
    ...options,
  });
}

function writerOf(client: CancelOrderDeps['writer']['client']): CancelOrderDeps['writer'] {
  return { client, outboxTable: 'outbox', sequenceTable: 'sequences', ordering: ORDERING };
}

async function placeOrder(orderId: string): Promise<string> {
  const createDeps: CreateOrderDeps = {
    writer: writerOf(db.asDocumentClient()),
    ordersTable: 'orders',
    clock: () => FIXED_NOW,
    newOrderId: () => orderId,
  };
  const response = await createOrder(
    jsonEvent({ body: { orderId, customerId: 'customer-1', items: LINES } }),
    createDeps,
  );
  expect(response.statusCode).toBe(201);
  return bodyOf<{ messageId: string }>(response).messageId;
}

function messagesOf(orderId: string) {
  return db
    .items('outbox')
    .filter((message) => message.aggregateId === orderId)
    .sort((a, b) => Number(a.seq) - Number(b.seq));
}

function orderRow(orderId: string) {
  return db.items('orders').find((order) => order.orderId === orderId);
}

beforeEach(() => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  deps = { writer: writerOf(db.asDocumentClient()), ordersTable: 'orders', clock: () => CANCELLED_AT };
});

describe('cancelOrder', () => {
  it('answers 202 with the order id and the message id, and sets the order CANCELLED at version 2', async () => {
    await placeOrder('order-1');

    const response = await cancelOrder(cancelEvent('order-1'), deps);

    expect(response.statusCode).toBe(202);
    const body = bodyOf<{ orderId: string; messageId: string }>(response);
    expect(Object.keys(body).sort()).toEqual(['messageId', 'orderId']);
    expect(body.orderId).toBe('order-1');
    expect(orderRow('order-1')).toMatchObject({
      status: 'CANCELLED',
      version: 2,
      cancelledAt: CANCELLED_AT.toISOString(),
      items: LINES,
    });
    expect(messagesOf('order-1').map((message) => message.messageId)).toContain(body.messageId);
  });

  it("writes order.cancelled with the order's customer and lines as the second of its sequence, after order.created, without a counter row", async () => {
    const createdId = await placeOrder('order-1');

    const response = await cancelOrder(cancelEvent('order-1'), deps);

    const cancelledId = bodyOf<{ messageId: string }>(response).messageId;
    expect(messagesOf('order-1')).toEqual([
      expect.objectContaining({
        messageId: createdId,
        topic: 'order.created',
        orderKey: 'order#order-1',
        seq: 1,
      }),
      expect.objectContaining({
        messageId: cancelledId,
        topic: 'order.cancelled',
        orderKey: 'order#order-1',
        seq: 2,
        payload: { orderId: 'order-1', customerId: 'customer-1', items: LINES },
        status: 'PENDING',
      }),
    ]);
    // The versions the order rows are written at number the messages: no sequence counter is kept.
    expect(db.items('sequences')).toEqual([]);
  });

  it('cancels an order whose row has no customer with a cancellation that names none', async () => {
    await db.send(
      new PutCommand({
        TableName: 'orders',
        Item: {
          orderId: 'order-9',
          items: LINES,
          createdAt: FIXED_NOW.toISOString(),
          status: 'PLACED',
          version: 1,
        },
      }),
    );

    const response = await cancelOrder(cancelEvent('order-9'), deps);

    expect(response.statusCode).toBe(202);
    expect(messagesOf('order-9').map((message) => message.payload)).toEqual([
      { orderId: 'order-9', items: LINES },
    ]);
  });

  it('accepts an empty JSON object as the body', async () => {
    await placeOrder('order-1');

    const response = await cancelOrder(
      cancelEvent('order-1', { body: {}, headers: { 'content-type': 'application/json' } }),
      deps,
    );

    expect(response.statusCode).toBe(202);
  });

  it('answers a repeated cancel with 409 order already cancelled, and writes no second message', async () => {
    await placeOrder('order-1');
    const first = await cancelOrder(cancelEvent('order-1'), deps);

    const again = await cancelOrder(cancelEvent('order-1'), deps);

    expect(first.statusCode).toBe(202);
    expect(again.statusCode).toBe(409);
    expect(bodyOf<ErrorBody>(again)).toEqual({
      error: 'order already cancelled',
      details: [{ field: 'orderId', problem: 'order "order-1" is already cancelled' }],
    });
    expect(messagesOf('order-1').map((message) => message.topic)).toEqual([
      'order.created',
      'order.cancelled',
    ]);
  });

  it('answers 404 for an unknown order, and writes nothing', async () => {
    const response = await cancelOrder(cancelEvent('no-such-order'), deps);

    expect(response.statusCode).toBe(404);
    expect(bodyOf<ErrorBody>(response).error).toBe('order not found');
    expect(db.items('orders')).toEqual([]);
    expect(db.items('outbox')).toEqual([]);
  });

  it('answers 409 when a concurrent cancel lands between its read and its write, and writes one message in all', async () => {
    await placeOrder('order-1');
    const inner = db.asDocumentClient();
    let raced = false;
    // The first read of the order is answered with the PLACED row, after another request has cancelled it.
    const racing = {
      send: async (command: unknown) => {
        const result = await inner.send(command as never);
        if (command instanceof GetCommand && !raced) {
          raced = true;
          expect((await cancelOrder(cancelEvent('order-1'), deps)).statusCode).toBe(202);
        }
        return result;
      },
    } as unknown as CancelOrderDeps['writer']['client'];

    const response = await cancelOrder(cancelEvent('order-1'), { ...deps, writer: writerOf(racing) });

    expect(raced).toBe(true);
    expect(response.statusCode).toBe(409);
    expect(bodyOf<ErrorBody>(response).error).toBe('order already cancelled');
    expect(messagesOf('order-1').map((message) => message.topic)).toEqual([
      'order.created',
      'order.cancelled',
    ]);
  });

  it('answers 409 for an order placed before orders had a version (its messages are not numbered), and writes nothing', async () => {
    await db.send(
      new PutCommand({
        TableName: 'orders',
        Item: { orderId: 'old-order', customerId: 'c', items: LINES, createdAt: FIXED_NOW.toISOString() },
      }),
    );

    const response = await cancelOrder(cancelEvent('old-order'), deps);

    expect(response.statusCode).toBe(409);
    expect(bodyOf<ErrorBody>(response)).toEqual({
      error: 'order cannot be cancelled',
      details: [{ field: 'orderId', problem: expect.stringContaining('before orders had a version') }],
    });
    expect(orderRow('old-order')?.status).toBeUndefined();
    expect(db.items('outbox')).toEqual([]);
  });

  it.each([
    ['a field', { reason: 'changed my mind' }, 'reason'],
    ['an array', [], 'object'],
    ['a string', '"cancel"', 'object'],
    ['malformed JSON', '{', 'JSON'],
  ])(
    'answers 400 for a body with %s, naming the problem, and writes nothing',
    async (_name, body, problem) => {
      await placeOrder('order-1');

      const response = await cancelOrder(
        cancelEvent('order-1', { body, headers: { 'content-type': 'application/json' } }),
        deps,
      );

      expect(response.statusCode).toBe(400);
      const details = bodyOf<ErrorBody>(response).details;
      expect(details).toEqual([expect.objectContaining({ field: '(body)' })]);
      expect(details[0]?.problem.toLowerCase()).toContain(problem.toLowerCase());
      expect(orderRow('order-1')?.status).toBe('PLACED');
      expect(messagesOf('order-1')).toHaveLength(1);
    },
  );

  it('answers 415 to a body not sent as application/json, and writes nothing', async () => {
    await placeOrder('order-1');

    const response = await cancelOrder(
      cancelEvent('order-1', { body: {}, headers: { 'content-type': 'text/plain' } }),
      deps,
    );

    expect(response.statusCode).toBe(415);
    expect(orderRow('order-1')?.status).toBe('PLACED');
    expect(messagesOf('order-1')).toHaveLength(1);
  });

  it('answers 400 naming orderId for an order id that is not an identifier, and reads nothing', async () => {
    const response = await cancelOrder(cancelEvent('bad id!'), deps);

    expect(response.statusCode).toBe(400);
    expect(bodyOf<ErrorBody>(response).details).toEqual([expect.objectContaining({ field: 'orderId' })]);
  });
});
