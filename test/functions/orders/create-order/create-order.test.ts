import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { type CreateOrderDeps, createOrder } from '../../../../functions/orders/create-order/create-order.ts';
import { MAX_ORDER_BODY_BYTES } from '../../../../functions/orders/create-order/order-request.ts';
import { TransactionConditionError, TransactionConflictError } from '../../../../shared/errors.ts';
import { messageIdTime, parseEnvelope } from '../../../../shared/message/envelope.ts';
import { apiEvent, FIXED_NOW, transactionCanceled } from '../../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const deps: CreateOrderDeps = {
  writer: {
    client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
    outboxTable: 'outbox',
  },
  ordersTable: 'orders',
  clock: () => FIXED_NOW,
  newOrderId: () => 'generated-order-id',
};
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const validOrder = { orderId: 'order-1', customerId: 'customer-1', items: [{ sku: 'SKU-1', quantity: 2 }] };

interface ErrorBody {
  error: string;
  details: { field: string; problem: string }[];
}

function bodyOf<T>(response: APIGatewayProxyResult): T {
  return JSON.parse(response.body) as T;
}

function sentItems() {
  const calls = ddb.commandCalls(TransactWriteCommand);
  expect(calls).toHaveLength(1);
  return calls[0]?.args[0].input.TransactItems ?? [];
}

beforeEach(() => {
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
});

describe('createOrder', () => {
  it('answers 201 with the order id and the message id', async () => {
    const response = await createOrder(apiEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json' });
    const body = bodyOf<{ orderId: string; messageId: string }>(response);
    expect(body.orderId).toBe('order-1');
    expect(body.messageId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Object.keys(body).sort()).toEqual(['messageId', 'orderId']);
  });

  it('writes the order and its order.created message in ONE transaction', async () => {
    const response = await createOrder(apiEvent({ body: validOrder }), deps);

    const items = sentItems();
    expect(items).toHaveLength(2);
    const order = { ...validOrder, createdAt: FIXED_NOW.toISOString() };
    expect(items[0]).toEqual({
      Put: { TableName: 'orders', Item: order, ConditionExpression: 'attribute_not_exists(orderId)' },
    });
    const outboxPut = items[1]?.Put;
    expect(outboxPut?.TableName).toBe('outbox');
    expect(outboxPut?.ConditionExpression).toBe('attribute_not_exists(#messageId)');
    expect(outboxPut?.Item).toMatchObject({
      messageId: bodyOf<{ messageId: string }>(response).messageId,
      topic: 'order.created',
      aggregateId: 'order-1',
      payload: order,
      status: 'PENDING',
      attempts: 0,
      createdAt: FIXED_NOW.toISOString(),
    });
    // The stored message is a valid envelope created at the request's time.
    const stored = parseEnvelope(outboxPut?.Item);
    expect(messageIdTime(stored.messageId)).toEqual(FIXED_NOW);
  });

  it("writes the message with the writer's due shards and stream grace, at the request's time", async () => {
    const writer = { ...deps.writer, dueShards: 1, streamGraceMs: 5_000, clock: () => new Date(0) };

    await createOrder(apiEvent({ body: validOrder }), { ...deps, writer });

    expect(sentItems()[1]?.Put?.Item).toMatchObject({
      dueShard: '0',
      nextAttemptAt: new Date(FIXED_NOW.getTime() + 5_000).toISOString(),
      updatedAt: FIXED_NOW.toISOString(),
    });
  });

  it('generates the order id when the client sends none', async () => {
    const { orderId: _, ...withoutId } = validOrder;

    const response = await createOrder(apiEvent({ body: withoutId }), deps);

    expect(response.statusCode).toBe(201);
    expect(bodyOf<{ orderId: string }>(response).orderId).toBe('generated-order-id');
    expect(sentItems()[0]?.Put?.Item?.orderId).toBe('generated-order-id');
    expect(sentItems()[1]?.Put?.Item?.aggregateId).toBe('generated-order-id');
  });

  it('copies the traceparent header (any casing) into the message headers', async () => {
    await createOrder(apiEvent({ body: validOrder, headers: { TraceParent: TRACEPARENT } }), deps);

    expect(sentItems()[1]?.Put?.Item?.headers).toEqual({ traceparent: TRACEPARENT });
  });

  it('sends no traceparent header when the request has none', async () => {
    await createOrder(apiEvent({ body: validOrder }), deps);

    expect(sentItems()[1]?.Put?.Item?.headers).toEqual({});
  });

  it('reads a base64-encoded body', async () => {
    const body = Buffer.from(JSON.stringify(validOrder)).toString('base64');

    const response = await createOrder(apiEvent({ body, isBase64Encoded: true }), deps);

    expect(response.statusCode).toBe(201);
  });

  it.each(
    (
      [
        ['malformed JSON', '{"customerId": "c", "items": [', '(body)', 'not valid JSON'],
        ['an empty body', '', '(body)', 'required'],
        ['a blank body', '   ', '(body)', 'required'],
        ['a missing customerId', { items: [{ sku: 'A', quantity: 1 }] }, 'customerId', 'invalid'],
        [
          'an empty customerId',
          { customerId: '', items: [{ sku: 'A', quantity: 1 }] },
          'customerId',
          'invalid',
        ],
        [
          'items that are not an array',
          { customerId: 'c', items: { sku: 'A', quantity: 1 } },
          'items',
          'invalid',
        ],
        ['no items', { customerId: 'c', items: [] }, 'items', 'invalid'],
        [
          'a quantity of -1',
          { customerId: 'c', items: [{ sku: 'A', quantity: -1 }] },
          'items[0].quantity',
          'invalid',
        ],
        [
          'a quantity of 0',
          { customerId: 'c', items: [{ sku: 'A', quantity: 0 }] },
          'items[0].quantity',
          'invalid',
        ],
        [
          'a quantity of 1001',
          { customerId: 'c', items: [{ sku: 'A', quantity: 1001 }] },
          'items[0].quantity',
          'invalid',
        ],
        [
          'a quantity of 1.5',
          { customerId: 'c', items: [{ sku: 'A', quantity: 1.5 }] },
          'items[0].quantity',
          'invalid',
        ],
        [
          'a quantity given as a string',
          { customerId: 'c', items: [{ sku: 'A', quantity: '2' }] },
          'items[0].quantity',
          'invalid',
        ],
        [
          'a bad sku on the second line',
          {
            customerId: 'c',
            items: [
              { sku: 'A', quantity: 1 },
              { sku: 'no spaces', quantity: 1 },
            ],
          },
          'items[1].sku',
          'invalid',
        ],
        [
          '26 items',
          { customerId: 'c', items: Array.from({ length: 26 }, (_, i) => ({ sku: `S${i}`, quantity: 1 })) },
          'items',
          'invalid',
        ],
        ['an orderId with bad characters', { ...validOrder, orderId: 'order/1' }, 'orderId', 'invalid'],
        ['an orderId of 65 characters', { ...validOrder, orderId: 'a'.repeat(65) }, 'orderId', 'invalid'],
        ['an empty orderId', { ...validOrder, orderId: '' }, 'orderId', 'invalid'],
      ] as const
    ).map(([name, body, field, error]) => ({ name, body, field, error })),
  )('answers 400 naming the field for $name, and writes nothing', async ({ body, field, error }) => {
    const response = await createOrder(apiEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toContain(error);
    expect(parsed.details.map((detail) => detail.field)).toContain(field);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 naming an unknown top-level field, and writes nothing', async () => {
    const response = await createOrder(apiEvent({ body: { ...validOrder, coupon: 'FREE' } }), deps);

    expect(response.statusCode).toBe(400);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toBe('invalid request body');
    expect(parsed.details).toEqual([{ field: '(body)', problem: expect.stringContaining('coupon') }]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 naming an unknown field of an item, and writes nothing', async () => {
    const body = { customerId: 'c', items: [{ sku: 'A', quantity: 1, price: 10 }] };

    const response = await createOrder(apiEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    expect(bodyOf<ErrorBody>(response).details).toEqual([
      { field: 'items[0]', problem: expect.stringContaining('price') },
    ]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('names every bad field at once', async () => {
    const response = await createOrder(apiEvent({ body: { items: [{ sku: 'A', quantity: 0 }] } }), deps);

    expect(
      bodyOf<ErrorBody>(response)
        .details.map((detail) => detail.field)
        .sort(),
    ).toEqual(['customerId', 'items[0].quantity']);
  });

  it('answers 400 for a body over the limit, and writes nothing', async () => {
    const body = JSON.stringify({ ...validOrder, customerId: 'c'.repeat(MAX_ORDER_BODY_BYTES) });

    const response = await createOrder(apiEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toBe('request body too large');
    expect(parsed.details[0]?.field).toBe('(body)');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 409 naming the orderId when the order already exists', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }]));

    const response = await createOrder(apiEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(409);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toBe('order already exists');
    expect(parsed.details).toEqual([{ field: 'orderId', problem: expect.stringContaining('order-1') }]);
  });

  it('answers no 409 when only the outbox put failed (a reused message id): the error goes through', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]));

    await expect(createOrder(apiEvent({ body: validOrder }), deps)).rejects.toBeInstanceOf(
      TransactionConditionError,
    );
  });

  it('lets a transaction conflict through for the error boundary (a 500, not a 4xx)', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));

    await expect(createOrder(apiEvent({ body: validOrder }), deps)).rejects.toBeInstanceOf(
      TransactionConflictError,
    );
  });
});
