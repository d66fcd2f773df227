import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as getStockHandler } from '../../functions/inventory/get-stock/handler.ts';
import { handler as putStockHandler } from '../../functions/inventory/put-stock/handler.ts';
import { handler as cancelOrderHandler } from '../../functions/orders/cancel-order/handler.ts';
import { handler as createOrderHandler } from '../../functions/orders/create-order/handler.ts';
import { handler as getOrderHandler } from '../../functions/orders/get-order/handler.ts';
import { apiEvent, lambdaContext } from '../support/factories.ts';
import {
  brokenJsonText,
  contentTypeName,
  contentTypeValue,
  headerName,
  headerValue,
  jsonText,
  mostly,
  objectText,
  oddString,
  RAW_NUMBERS,
  rawBytes,
  traceparentValue,
} from './adversarial-input.ts';
import { fuzzParameters, fuzzTimeoutMs } from './fuzz-runs.ts';
import { memoryTables, TABLES, type TableSnapshot } from './memory-tables.ts';
import { takePrototypePollution } from './prototype-pollution.ts';

const RUNS = fuzzParameters(150);
/**
 * The example's four HTTP functions, as deployed (middy, logger, 500 boundary), driven with API Gateway proxy
 * events built from arbitrary input against in-memory tables. Whatever a client sends, the answer is a 2xx or
 * a 4xx with the documented JSON body, a refused request writes nothing, and an accepted one writes exactly
 * what it says.
 */

const env = {
  ORDERS_TABLE: TABLES.orders,
  OUTBOX_TABLE: TABLES.outbox,
  INVENTORY_TABLE: TABLES.inventory,
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  // As the example stack deploys them: an order's messages are one ordered sequence, seq from its version.
  ORDERED_TOPICS: JSON.stringify({
    'order.created': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
    'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
  }),
};

/** A request to one of the routes. */
type Route = 'createOrder' | 'cancelOrder' | 'getOrder' | 'putStock' | 'getStock';
interface FuzzRequest {
  readonly route: Route;
  readonly event: APIGatewayProxyEvent;
}

const ORDER_IDS = ['order-1', 'order-2', 'order-3'];
const SKUS = ['SKU-1', 'SKU-2'];

const identifierText = (pool: readonly string[]) =>
  mostly(fc.constantFrom(...pool).map((value) => JSON.stringify(value)));
const quantityText = mostly(
  fc.oneof(fc.integer({ min: 1, max: 1000 }).map(String), fc.constantFrom(...RAW_NUMBERS)),
);
const itemText = objectText(
  fc
    .tuple(identifierText(SKUS), quantityText)
    .map(([sku, quantity]) => [['sku', sku] as const, ['quantity', quantity] as const]),
);
/** An order as a well-behaved client sends it, with ids from small pools so that replays and 409s happen. */
const validOrderText = fc
  .record(
    {
      orderId: fc.oneof(fc.constantFrom(...ORDER_IDS), fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/)),
      customerId: fc.oneof(fc.constant('c-1'), fc.string({ minLength: 1, maxLength: 20 })),
      items: fc.array(
        fc.record({ sku: fc.constantFrom(...SKUS), quantity: fc.integer({ min: 1, max: 1000 }) }),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
    },
    { requiredKeys: ['customerId', 'items'] },
  )
  .map((order) => JSON.stringify(order));
const hostileOrderText = objectText(
  fc
    .tuple(
      fc.option(identifierText(ORDER_IDS)),
      mostly(
        fc
          .oneof(fc.constantFrom('c-1', 'c-2'), fc.string({ minLength: 1, maxLength: 130 }), oddString)
          .map((value) => JSON.stringify(value)),
      ),
      mostly(fc.array(itemText, { minLength: 1, maxLength: 3 }).map((items) => `[${items.join(',')}]`)),
    )
    .map(([orderId, customerId, items]) => [
      ...(orderId === null ? [] : [['orderId', orderId] as const]),
      ['customerId', customerId] as const,
      ['items', items] as const,
    ]),
);
const orderText = fc.oneof(validOrderText, hostileOrderText);
const stockText = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000_000 }).map((available) => JSON.stringify({ available })),
  objectText(
    mostly(
      fc.oneof(fc.integer({ min: 0, max: 1_000_000_000 }).map(String), fc.constantFrom(...RAW_NUMBERS)),
    ).map((available) => [['available', available] as const]),
  ),
);

/** A body as API Gateway delivers it: text, base64 of text or of raw bytes, or none. */
function bodyOf(
  text: fc.Arbitrary<string>,
): fc.Arbitrary<Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>> {
  const anyText = fc.oneof(
    { arbitrary: text, weight: 8 },
    { arbitrary: jsonText, weight: 1 },
    { arbitrary: brokenJsonText, weight: 1 },
  );
  return fc.oneof(
    { arbitrary: anyText.map((body) => ({ body, isBase64Encoded: false })), weight: 8 },
    {
      arbitrary: anyText.map((body) => ({
        body: Buffer.from(body).toString('base64'),
        isBase64Encoded: true,
      })),
      weight: 2,
    },
    {
      arbitrary: rawBytes.map((bytes) => ({
        body: Buffer.from(bytes).toString('base64'),
        isBase64Encoded: true,
      })),
      weight: 1,
    },
    {
      arbitrary: rawBytes.map((bytes) => ({
        body: Buffer.from(bytes).toString('latin1'),
        isBase64Encoded: false,
      })),
      weight: 1,
    },
    // Declared base64 but not base64 at all.
    { arbitrary: oddString.map((body) => ({ body, isBase64Encoded: true })), weight: 1 },
    { arbitrary: fc.constant({ body: null, isBase64Encoded: false }), weight: 1 },
    {
      arbitrary: fc
        .constantFrom(17_000, 100_000)
        .map((length) => ({ body: `"${'x'.repeat(length)}"`, isBase64Encoded: false })),
      weight: 1,
    },
  );
}

/** Headers: usually a JSON content type under some spelling of its name, and a few others. */
const headers: fc.Arbitrary<APIGatewayProxyEvent['headers']> = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc.option(
          fc.tuple(
            contentTypeName,
            fc.oneof(
              { arbitrary: fc.constant('application/json'), weight: 12 },
              { arbitrary: contentTypeValue, weight: 3 },
            ),
          ),
          { freq: 20 },
        ),
        fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }),
      )
      .map(([contentType, others]) =>
        Object.fromEntries([...others, ...(contentType === null ? [] : [contentType])]),
      ),
    weight: 20,
  },
  { arbitrary: fc.constant(null as unknown as APIGatewayProxyEvent['headers']), weight: 1 },
);

const queryParameters = fc.option(
  fc
    .array(fc.tuple(oddString, oddString), { minLength: 1, maxLength: 4 })
    .map((entries) => Object.fromEntries(entries)),
);

/** A path parameter: a known id, a valid one, or anything (empty, huge, traversal, unicode). */
function pathParameter(
  name: string,
  pool: readonly string[],
): fc.Arbitrary<APIGatewayProxyEvent['pathParameters']> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...pool).map((value) => ({ [name]: value })), weight: 4 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/).map((value) => ({ [name]: value })), weight: 1 },
    {
      arbitrary: fc
        .oneof(
          oddString,
          fc.constantFrom('', '..', '../orders', '%2F', 'a/b', 'x'.repeat(65), 'x'.repeat(5_000)),
        )
        .map((value) => ({ [name]: value })),
      weight: 2,
    },
    { arbitrary: fc.constantFrom(null, {}, { other: 'x' }), weight: 1 },
  );
}

function request(
  route: Route,
  parts: {
    method: string;
    path: string;
    body: fc.Arbitrary<Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>>;
    pathParameters: fc.Arbitrary<APIGatewayProxyEvent['pathParameters']>;
  },
): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      body: parts.body,
      headers,
      traceparent: fc.option(traceparentValue, { freq: 2 }),
      query: queryParameters,
      pathParameters: parts.pathParameters,
    })
    .map(({ body, headers: sent, traceparent, query, pathParameters }) => ({
      route,
      event: {
        ...apiEvent({ method: parts.method, path: parts.path }),
        ...body,
        headers: sent === null || traceparent === null ? sent : { ...sent, traceparent },
        queryStringParameters: query,
        pathParameters,
      },
    }));
}

const NO_BODY = fc.constant({ body: null, isBase64Encoded: false });
const hostileRequests: fc.Arbitrary<FuzzRequest> = fc.oneof(
  {
    arbitrary: request('createOrder', {
      method: 'POST',
      path: '/orders',
      body: bodyOf(orderText),
      pathParameters: fc.constant(null),
    }),
    weight: 4,
  },
  {
    arbitrary: request('getOrder', {
      method: 'GET',
      path: '/orders/{orderId}',
      body: fc.oneof(NO_BODY, bodyOf(jsonText)),
      pathParameters: pathParameter('orderId', ORDER_IDS),
    }),
    weight: 1,
  },
  {
    arbitrary: request('cancelOrder', {
      method: 'POST',
      path: '/orders/{orderId}/cancel',
      body: fc.oneof(NO_BODY, bodyOf(jsonText)),
      pathParameters: pathParameter('orderId', ORDER_IDS),
    }),
    weight: 1,
  },
  {
    arbitrary: request('putStock', {
      method: 'PUT',
      path: '/inventory/{sku}',
      body: bodyOf(stockText),
      pathParameters: pathParameter('sku', SKUS),
    }),
    weight: 2,
  },
  {
    arbitrary: request('getStock', {
      method: 'GET',
      path: '/inventory/{sku}',
      body: fc.oneof(NO_BODY, bodyOf(jsonText)),
      pathParameters: pathParameter('sku', SKUS),
    }),
    weight: 1,
  },
);

/** A request as a well-behaved client sends it, so that the hostile ones meet orders and stock that exist. */
const wellFormedRequests: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.constantFrom<Route>('createOrder', 'cancelOrder', 'putStock', 'getOrder', 'getStock'),
    validOrderText,
    fc.integer({ min: 0, max: 1_000_000_000 }),
    fc.constantFrom(...ORDER_IDS),
    fc.constantFrom(...SKUS),
  )
  .map(([route, order, available, orderId, sku]) => {
    const json = { 'content-type': 'application/json' };
    const events: Record<Route, APIGatewayProxyEvent> = {
      createOrder: apiEvent({ method: 'POST', path: '/orders', body: order, headers: json }),
      putStock: apiEvent({
        method: 'PUT',
        path: '/inventory/{sku}',
        body: { available },
        headers: json,
        pathParameters: { sku },
      }),
      cancelOrder: apiEvent({
        method: 'POST',
        path: '/orders/{orderId}/cancel',
        pathParameters: { orderId },
      }),
      getOrder: apiEvent({ method: 'GET', path: '/orders/{orderId}', pathParameters: { orderId } }),
      getStock: apiEvent({ method: 'GET', path: '/inventory/{sku}', pathParameters: { sku } }),
    };
    return { route, event: events[route] };
  });

const requests = fc.oneof(
  { arbitrary: hostileRequests, weight: 3 },
  { arbitrary: wellFormedRequests, weight: 1 },
);

/** An order placed under a known id and then cancelled, once or twice, so that cancels meet orders that exist. */
const placeThenCancel: fc.Arbitrary<FuzzRequest[]> = fc
  .tuple(validOrderText, fc.constantFrom(...ORDER_IDS), fc.integer({ min: 1, max: 2 }))
  .map(([text, orderId, cancels]) => {
    const order = JSON.stringify({ ...JSON.parse(text), orderId });
    const json = { 'content-type': 'application/json' };
    const cancel: FuzzRequest = {
      route: 'cancelOrder',
      event: apiEvent({ method: 'POST', path: '/orders/{orderId}/cancel', pathParameters: { orderId } }),
    };
    return [
      {
        route: 'createOrder',
        event: apiEvent({ method: 'POST', path: '/orders', body: order, headers: json }),
      },
      ...Array.from({ length: cancels }, () => cancel),
    ];
  });

/** A few requests in a row, which meet what the earlier ones wrote (replays, 409s, reads of what exists). */
const sessions = fc
  .tuple(fc.option(placeThenCancel, { freq: 3 }), fc.array(requests, { minLength: 1, maxLength: 5 }))
  .map(([lifecycle, more]) => [...(lifecycle ?? []), ...more]);

let tables: ReturnType<typeof memoryTables>;
let handlers: Record<Route, (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>>;

beforeAll(() => {
  tables = memoryTables();
  const built = {
    createOrder: createOrderHandler.withEnv(env),
    cancelOrder: cancelOrderHandler.withEnv(env),
    getOrder: getOrderHandler.withEnv(env),
    putStock: putStockHandler.withEnv(env),
    getStock: getStockHandler.withEnv(env),
  };
  handlers = {
    createOrder: (event) => built.createOrder(event, lambdaContext()),
    cancelOrder: (event) => built.cancelOrder(event, lambdaContext()),
    getOrder: (event) => built.getOrder(event, lambdaContext()),
    putStock: (event) => built.putStock(event, lambdaContext()),
    getStock: (event) => built.getStock(event, lambdaContext()),
  };
});

afterAll(() => {
  tables.restore();
});

/** The body text the function decoded, parsed; only called for a request it accepted. */
function sentJson(event: APIGatewayProxyEvent): Record<string, unknown> {
  const text = event.isBase64Encoded
    ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
    : (event.body ?? '');
  return JSON.parse(text) as Record<string, unknown>;
}

/** The answer is a 2xx or a 4xx, with a JSON body; a 4xx says `{ error, details: [{ field, problem }] }`. */
function expectDocumentedAnswer(response: APIGatewayProxyResult): unknown {
  const status = response.statusCode;
  expect(
    (status >= 200 && status < 300) || (status >= 400 && status < 500),
    `status ${status}: ${response.body}`,
  ).toBe(true);
  expect(response.headers?.['content-type']).toBe('application/json');
  const body: unknown = JSON.parse(response.body);
  if (status >= 400) {
    expect(body).toStrictEqual({ error: expect.any(String), details: expect.any(Array) });
    for (const detail of (body as { details: unknown[] }).details) {
      expect(detail).toStrictEqual({ field: expect.any(String), problem: expect.any(String) });
    }
  }
  return body;
}

/** The rows of `after` that are not in `before` (by key), and whether every row of `before` is unchanged. */
function added(
  before: readonly Record<string, unknown>[],
  after: readonly Record<string, unknown>[],
  key: string,
) {
  const known = new Set(before.map((row) => row[key]));
  return after.filter((row) => !known.has(row[key]));
}

function expectOrderWritten(
  event: APIGatewayProxyEvent,
  body: unknown,
  change: { before: TableSnapshot; after: TableSnapshot },
): void {
  const { before, after } = change;
  expect(body).toStrictEqual({ orderId: expect.any(String), messageId: expect.any(String) });
  const { orderId, messageId } = body as { orderId: string; messageId: string };
  const sent = sentJson(event);
  const newOrders = added(before.orders, after.orders, 'orderId');
  expect(newOrders).toStrictEqual([
    {
      orderId,
      customerId: sent.customerId,
      items: sent.items,
      createdAt: expect.any(String),
      messageId,
      status: 'PLACED',
      version: 1,
    },
  ]);
  expect(after.orders).toHaveLength(before.orders.length + 1);
  expect(after.orders).toEqual(expect.arrayContaining([...before.orders]));
  const newMessages = added(before.outbox, after.outbox, 'messageId');
  expect(newMessages).toEqual([
    expect.objectContaining({
      messageId,
      topic: 'order.created',
      aggregateId: orderId,
      status: 'PENDING',
      attempts: 0,
      payload: {
        orderId,
        customerId: sent.customerId,
        items: sent.items,
        createdAt: newOrders[0]?.createdAt,
      },
    }),
  ]);
  expect(after.outbox).toHaveLength(before.outbox.length + 1);
  expect(after.outbox).toEqual(expect.arrayContaining([...before.outbox]));
  expect(after.inventory).toEqual(before.inventory);
}

/** A 202 to a cancel: the order it names is CANCELLED at version 2, and one order.cancelled message, seq 2. */
function expectCancelWritten(
  event: APIGatewayProxyEvent,
  body: unknown,
  change: { before: TableSnapshot; after: TableSnapshot },
): void {
  const { before, after } = change;
  const orderId = event.pathParameters?.orderId;
  expect(body).toStrictEqual({ orderId, messageId: expect.any(String) });
  const { messageId } = body as { messageId: string };
  const others = (rows: readonly Record<string, unknown>[]) => rows.filter((row) => row.orderId !== orderId);
  const placed = before.orders.find((order) => order.orderId === orderId);
  expect(placed).toMatchObject({ status: 'PLACED', version: 1 });
  expect(after.orders.find((order) => order.orderId === orderId)).toStrictEqual({
    ...placed,
    status: 'CANCELLED',
    version: 2,
    cancelledAt: expect.any(String),
  });
  expect(others(after.orders)).toEqual(others(before.orders));
  expect(added(before.outbox, after.outbox, 'messageId')).toEqual([
    expect.objectContaining({
      messageId,
      topic: 'order.cancelled',
      aggregateId: orderId,
      status: 'PENDING',
      orderKey: `order#${orderId}`,
      seq: 2,
      payload: { orderId, customerId: placed?.customerId, items: placed?.items },
    }),
  ]);
  expect(after.outbox).toHaveLength(before.outbox.length + 1);
  expect(after.inventory).toEqual(before.inventory);
}

function expectStockWritten(
  event: APIGatewayProxyEvent,
  body: unknown,
  change: { before: TableSnapshot; after: TableSnapshot },
): void {
  const { before, after } = change;
  const sku = event.pathParameters?.sku;
  const available = Number(sentJson(event).available) + 0;
  expect(body).toStrictEqual({ sku, available });
  const others = (rows: readonly Record<string, unknown>[]) => rows.filter((row) => row.sku !== sku);
  expect(others(after.inventory)).toEqual(others(before.inventory));
  const row = after.inventory.find((candidate) => candidate.sku === sku);
  expect({ ...row, available: Number(row?.available) + 0 }).toStrictEqual({
    sku,
    available,
    updatedAt: expect.any(String),
  });
  expect({ ...after, inventory: [] }).toEqual({ ...before, inventory: [] });
}

function expectReadAnswer(route: 'getOrder' | 'getStock', body: unknown, status: number): void {
  if (status !== 200) return;
  if (route === 'getStock') {
    expect(body).toStrictEqual({ sku: expect.any(String), available: expect.any(Number) });
    return;
  }
  const cancelled = (body as { status?: unknown }).status === 'CANCELLED';
  expect(body).toStrictEqual({
    orderId: expect.any(String),
    customerId: expect.any(String),
    items: expect.any(Array),
    createdAt: expect.any(String),
    ...(cancelled ? { status: 'CANCELLED', cancelledAt: expect.any(String) } : { status: 'PLACED' }),
    messages: expect.arrayContaining([
      expect.objectContaining({
        messageId: expect.any(String),
        topic: 'order.created',
        status: 'PENDING',
        attempts: 0,
      }),
    ]),
  });
  // A cancelled order shows its cancellation after its creation; a placed one only its creation.
  expect((body as { messages: { topic: string }[] }).messages.map((message) => message.topic)).toEqual(
    cancelled ? ['order.created', 'order.cancelled'] : ['order.created'],
  );
}

/** The properties of one answer, given the tables before and after it. */
function expectAnswerAndWrites(exchange: {
  readonly route: Route;
  readonly event: APIGatewayProxyEvent;
  readonly response: APIGatewayProxyResult;
  readonly before: TableSnapshot;
  readonly after: TableSnapshot;
}): void {
  const { route, event, response, before, after } = exchange;
  const body = expectDocumentedAnswer(response);
  const replayed = response.headers?.['idempotent-replayed'] === 'true';
  if (route === 'createOrder' && response.statusCode === 201 && !replayed) {
    expectOrderWritten(event, body, { before, after });
  } else if (route === 'cancelOrder' && response.statusCode === 202) {
    expectCancelWritten(event, body, { before, after });
  } else if (route === 'putStock' && response.statusCode === 200) {
    expectStockWritten(event, body, { before, after });
  } else {
    expect(after).toEqual(before);
    if (route === 'getOrder' || route === 'getStock') expectReadAnswer(route, body, response.statusCode);
    if (replayed) {
      const { orderId, messageId } = body as { orderId: string; messageId: string };
      expect(after.orders.find((order) => order.orderId === orderId)?.messageId).toBe(messageId);
    }
  }
}

describe('the HTTP functions, fuzzed with API Gateway events', () => {
  it(
    'answer every request with a 2xx or a documented 4xx, write nothing on a 4xx and exactly the resource on a 2xx',
    async () => {
      const seen = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(sessions, async (session) => {
          // Each run starts from empty tables, so a failure shrinks to the requests that caused it.
          tables.reset();
          for (const { route, event } of session) {
            const before = tables.snapshot();
            const response = await handlers[route](event);
            const after = tables.snapshot();
            seen.set(
              `${route} ${response.statusCode}`,
              (seen.get(`${route} ${response.statusCode}`) ?? 0) + 1,
            );
            expectAnswerAndWrites({ route, event, response, before, after });
            expect(takePrototypePollution(), 'keys added to Object.prototype').toEqual([]);
          }
        }),
        RUNS,
      );
      // The generators reach both sides of every route, so the properties above were not met vacuously.
      for (const answer of [
        'createOrder 201',
        'createOrder 400',
        'createOrder 415',
        'cancelOrder 202',
        'cancelOrder 404',
        'cancelOrder 409',
        'putStock 200',
        'putStock 400',
      ]) {
        expect(seen.get(answer), `${answer} never happened: ${JSON.stringify([...seen])}`).toBeGreaterThan(0);
      }
    },
    fuzzTimeoutMs(RUNS, 150),
  );
});
