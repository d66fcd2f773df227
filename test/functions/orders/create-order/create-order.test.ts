import { DynamoDBClient, IdempotentParameterMismatchException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { type CreateOrderDeps, createOrder } from '../../../../functions/orders/create-order/create-order.ts';
import { MAX_ORDER_BODY_BYTES } from '../../../../functions/orders/create-order/order-request.ts';
import { TransactionConditionError, TransactionConflictError } from '../../../../shared/errors.ts';
import { messageIdTime, parseEnvelope } from '../../../../shared/message/envelope.ts';
import { apiEvent, FIXED_NOW, transactionCanceled } from '../../../support/factories.ts';
import { base64Body, jsonEvent } from '../../http/json-event.ts';

const ddb = mockClient(DynamoDBDocumentClient);
/** The waits the retry asked for (none is really waited). */
const sleeps: number[] = [];
const deps: CreateOrderDeps = {
  writer: {
    client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
    outboxTable: 'outbox',
  },
  ordersTable: 'orders',
  clock: () => FIXED_NOW,
  newOrderId: () => 'generated-order-id',
  retryClock: {
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
  },
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
  sleeps.length = 0;
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
});

describe('createOrder', () => {
  it('answers 201 with the order id and the message id', async () => {
    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json' });
    const body = bodyOf<{ orderId: string; messageId: string }>(response);
    expect(body.orderId).toBe('order-1');
    expect(body.messageId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Object.keys(body).sort()).toEqual(['messageId', 'orderId']);
  });

  it('writes the order and its order.created message in ONE transaction', async () => {
    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    const items = sentItems();
    expect(items).toHaveLength(2);
    const order = { ...validOrder, createdAt: FIXED_NOW.toISOString() };
    const messageId = bodyOf<{ messageId: string }>(response).messageId;
    expect(items[0]).toEqual({
      Put: {
        TableName: 'orders',
        // The message id is kept on the order, so that a retried POST can be answered with it; the order is
        // placed at version 1, which a cancellation moves on from.
        Item: { ...order, status: 'PLACED', version: 1, messageId },
        ConditionExpression: 'attribute_not_exists(orderId)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
    const outboxPut = items[1]?.Put;
    expect(outboxPut?.TableName).toBe('outbox');
    expect(outboxPut?.ConditionExpression).toBe('attribute_not_exists(#messageId)');
    expect(outboxPut?.Item).toMatchObject({
      messageId,
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

    await createOrder(jsonEvent({ body: validOrder }), { ...deps, writer });

    expect(sentItems()[1]?.Put?.Item).toMatchObject({
      dueShard: '0',
      nextAttemptAt: new Date(FIXED_NOW.getTime() + 5_000).toISOString(),
      updatedAt: FIXED_NOW.toISOString(),
    });
  });

  it("numbers order.created 1 in the order's sequence when the topic is ordered, with no counter read or update", async () => {
    const ordering = {
      'order.created': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
    } as const;
    const writer = { ...deps.writer, ordering, sequenceTable: 'sequences' };

    await createOrder(jsonEvent({ body: validOrder }), { ...deps, writer });

    const items = sentItems();
    // The order row (written at version 1 under its condition) and the message: nothing on the sequence table.
    expect(items).toHaveLength(2);
    expect(items[1]?.Put?.Item).toMatchObject({ orderKey: 'order#order-1', seq: 1 });
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('generates the order id when the client sends none', async () => {
    const { orderId: _, ...withoutId } = validOrder;

    const response = await createOrder(jsonEvent({ body: withoutId }), deps);

    expect(response.statusCode).toBe(201);
    expect(bodyOf<{ orderId: string }>(response).orderId).toBe('generated-order-id');
    expect(sentItems()[0]?.Put?.Item?.orderId).toBe('generated-order-id');
    expect(sentItems()[1]?.Put?.Item?.aggregateId).toBe('generated-order-id');
  });

  it('copies the traceparent header (any casing) into the message headers', async () => {
    await createOrder(jsonEvent({ body: validOrder, headers: { TraceParent: TRACEPARENT } }), deps);

    expect(sentItems()[1]?.Put?.Item?.headers).toEqual({ traceparent: TRACEPARENT });
  });

  it('sends no traceparent header when the request has none', async () => {
    await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(sentItems()[1]?.Put?.Item?.headers).toEqual({});
  });

  it('reads a base64-encoded body', async () => {
    const body = base64Body(JSON.stringify(validOrder));

    const response = await createOrder(jsonEvent({ body, isBase64Encoded: true }), deps);

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
    const response = await createOrder(jsonEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toContain(error);
    expect(parsed.details.map((detail) => detail.field)).toContain(field);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 naming an unknown top-level field, and writes nothing', async () => {
    const response = await createOrder(jsonEvent({ body: { ...validOrder, coupon: 'FREE' } }), deps);

    expect(response.statusCode).toBe(400);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toBe('invalid request body');
    expect(parsed.details).toEqual([{ field: '(body)', problem: expect.stringContaining('coupon') }]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 naming an unknown field of an item, and writes nothing', async () => {
    const body = { customerId: 'c', items: [{ sku: 'A', quantity: 1, price: 10 }] };

    const response = await createOrder(jsonEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    expect(bodyOf<ErrorBody>(response).details).toEqual([
      { field: 'items[0]', problem: expect.stringContaining('price') },
    ]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('names every bad field at once', async () => {
    const response = await createOrder(jsonEvent({ body: { items: [{ sku: 'A', quantity: 0 }] } }), deps);

    expect(
      bodyOf<ErrorBody>(response)
        .details.map((detail) => detail.field)
        .sort(),
    ).toEqual(['customerId', 'items[0].quantity']);
  });

  it('answers 400 for a body over the limit, and writes nothing', async () => {
    const body = JSON.stringify({ ...validOrder, customerId: 'c'.repeat(MAX_ORDER_BODY_BYTES) });

    const response = await createOrder(jsonEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toBe('request body too large');
    expect(parsed.details[0]?.field).toBe('(body)');
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    ['no content type', {}],
    ['text/plain', { 'content-type': 'text/plain;charset=UTF-8' }],
  ])('answers 415 for a body sent with %s, and writes nothing', async (_, headers) => {
    const response = await createOrder(apiEvent({ body: validOrder, headers }), deps);

    expect(response.statusCode).toBe(415);
    expect(bodyOf<ErrorBody>(response)).toEqual({
      error: 'unsupported media type',
      details: [{ field: 'content-type', problem: expect.any(String) }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for a body that is not valid UTF-8, and writes nothing', async () => {
    const body = base64Body([...Buffer.from('{"customerId":"'), 0xc3, 0x28, ...Buffer.from('","items":[]}')]);

    const response = await createOrder(jsonEvent({ body, isBase64Encoded: true }), deps);

    expect(response.statusCode).toBe(400);
    expect(bodyOf<ErrorBody>(response).error).toBe('request body is not valid UTF-8');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 naming a repeated key and its path, and writes nothing', async () => {
    const body = '{"customerId":"c","items":[{"sku":"A","quantity":5000,"quantity":1}]}';

    const response = await createOrder(jsonEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    expect(bodyOf<ErrorBody>(response)).toEqual({
      error: 'request body has duplicate keys',
      details: [{ field: 'items[0].quantity', problem: expect.stringContaining('"quantity"') }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 naming the field for a lone surrogate escape, and writes nothing', async () => {
    const body = '{"customerId":"\\ud800","items":[{"sku":"A","quantity":1}]}';

    const response = await createOrder(jsonEvent({ body }), deps);

    expect(response.statusCode).toBe(400);
    expect(bodyOf<ErrorBody>(response)).toEqual({
      error: 'request body is not valid Unicode',
      details: [{ field: 'customerId', problem: expect.stringContaining('lone surrogate') }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers no 409 when only the outbox put failed (a reused message id): the error goes through', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]));

    await expect(createOrder(jsonEvent({ body: validOrder }), deps)).rejects.toBeInstanceOf(
      TransactionConditionError,
    );
  });
});

describe('createOrder: the order id is an idempotency key', () => {
  const ORIGINAL_MESSAGE_ID = '01HWTS3E000000000000000001';
  /** The order row an earlier POST of `validOrder` wrote. */
  const stored = { ...validOrder, createdAt: '2024-05-01T11:59:00.000Z', messageId: ORIGINAL_MESSAGE_ID };

  /** DynamoDB's answer when the order row exists: the order put's condition failed, with the row (ALL_OLD). */
  function orderExists(item: Record<string, unknown> = stored) {
    return transactionCanceled([{ Code: 'ConditionalCheckFailed', Item: marshall(item) }, { Code: 'None' }]);
  }

  const conflict = () => transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]);

  function transactions() {
    return ddb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input);
  }

  it('answers a retry of the same request with the original 201 and message id, and writes nothing', async () => {
    ddb.on(TransactWriteCommand).rejects(orderExists());

    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    expect(bodyOf(response)).toEqual({ orderId: 'order-1', messageId: ORIGINAL_MESSAGE_ID });
    expect(response.headers).toMatchObject({ 'idempotent-replayed': 'true' });
    // One transaction, which DynamoDB cancelled; no read, no other write.
    expect(ddb.calls()).toHaveLength(1);
    expect(transactions()).toHaveLength(1);
  });

  it('marks only a replay, not the first 201', async () => {
    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
  });

  it.each([
    ['another customer', { ...validOrder, customerId: 'customer-2' }, ['customerId']],
    ['another quantity', { ...validOrder, items: [{ sku: 'SKU-1', quantity: 3 }] }, ['items[0].quantity']],
    ['another sku', { ...validOrder, items: [{ sku: 'SKU-2', quantity: 2 }] }, ['items[0].sku']],
    [
      'an extra line',
      { ...validOrder, items: [...validOrder.items, { sku: 'SKU-2', quantity: 1 }] },
      ['items'],
    ],
  ])('answers 409 naming what differs for %s, and writes nothing', async (_, body, fields) => {
    ddb.on(TransactWriteCommand).rejects(orderExists());

    const response = await createOrder(jsonEvent({ body }), deps);

    expect(response.statusCode).toBe(409);
    const parsed = bodyOf<ErrorBody>(response);
    expect(parsed.error).toBe('order id already used for a different order');
    expect(parsed.details.map((detail) => detail.field)).toEqual(fields);
    // The stored order is not echoed to a caller who may not own it.
    expect(response.body).not.toContain('customer-1');
    expect(ddb.calls()).toHaveLength(1);
  });

  it('answers 409 for the same lines in another order: the lines are compared in order', async () => {
    const lines = [
      { sku: 'SKU-1', quantity: 2 },
      { sku: 'SKU-2', quantity: 1 },
    ];
    ddb.on(TransactWriteCommand).rejects(orderExists({ ...stored, items: lines }));

    const response = await createOrder(
      jsonEvent({ body: { ...validOrder, items: lines.toReversed() } }),
      deps,
    );

    expect(response.statusCode).toBe(409);
    expect(bodyOf<ErrorBody>(response).details.map((detail) => detail.field)).toEqual([
      'items[0].sku',
      'items[0].quantity',
      'items[1].sku',
      'items[1].quantity',
    ]);
  });

  it.each([
    ['was written without a message id (before replays)', { ...validOrder, createdAt: 'x' }],
    ['cannot be read as an order', { orderId: 'order-1', items: 'lost' }],
  ])('answers 409 naming the orderId when the stored order %s', async (_, item) => {
    ddb.on(TransactWriteCommand).rejects(orderExists(item));

    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(409);
    expect(bodyOf<ErrorBody>(response)).toEqual({
      error: 'order already exists',
      details: [{ field: 'orderId', problem: expect.stringContaining('"order-1" already exists') }],
    });
  });

  it('retries after a transaction conflict and then replays the winner', async () => {
    ddb.on(TransactWriteCommand).rejectsOnce(conflict()).rejectsOnce(orderExists());

    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    expect(bodyOf(response)).toEqual({ orderId: 'order-1', messageId: ORIGINAL_MESSAGE_ID });
    expect(transactions()).toHaveLength(2);
    // Full jitter: half (random 0.5) of the first bound, 25 ms.
    expect(sleeps).toEqual([12]);
  });

  it('retries after an idempotency-token mismatch with a fresh token, and then replays the winner', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(
        new IdempotentParameterMismatchException({ message: 'different parameters', $metadata: {} }),
      )
      .rejectsOnce(orderExists());

    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    expect(bodyOf(response)).toEqual({ orderId: 'order-1', messageId: ORIGINAL_MESSAGE_ID });
    const [first, second] = transactions();
    expect(second?.ClientRequestToken).toBeDefined();
    expect(second?.ClientRequestToken).not.toBe(first?.ClientRequestToken);
  });

  it('writes on the retry when the conflicting transaction left the order id free', async () => {
    ddb.on(TransactWriteCommand).rejectsOnce(conflict()).resolves({});

    const response = await createOrder(jsonEvent({ body: validOrder }), deps);

    expect(response.statusCode).toBe(201);
    const { messageId } = bodyOf<{ messageId: string }>(response);
    const written = transactions()[1]?.TransactItems ?? [];
    expect(written[0]?.Put?.Item?.messageId).toBe(messageId);
    expect(written[1]?.Put?.Item?.messageId).toBe(messageId);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
  });

  it('gives up after four attempts that all conflict: the error goes to the boundary (a 500)', async () => {
    ddb.on(TransactWriteCommand).rejects(conflict());

    await expect(createOrder(jsonEvent({ body: validOrder }), deps)).rejects.toBeInstanceOf(
      TransactionConflictError,
    );
    expect(transactions()).toHaveLength(4);
    expect(sleeps).toEqual([12, 25, 50]);
  });
});
