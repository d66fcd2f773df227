import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { MemoryDocumentClient } from 'serverless-outbox/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../../../functions/orders/create-order/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import {
  apiEvent,
  lambdaContext,
  MEMORY_TABLE_SCHEMAS,
  transactionCanceled,
} from '../../../support/factories.ts';
import { jsonEvent } from '../../http/json-event.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const env = {
  ORDERS_TABLE: 'orders-table',
  OUTBOX_TABLE: 'outbox-table',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};
const body = { customerId: 'customer-1', items: [{ sku: 'SKU-1', quantity: 1 }] };

beforeEach(() => {
  ddb.reset();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('create-order handler', () => {
  it.each(['ORDERS_TABLE', 'OUTBOX_TABLE'])(
    'fails loudly at start with a ConfigError naming %s',
    (setting) => {
      const incomplete = { ...env, [setting]: undefined };

      expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
      expect(() => handler.withEnv(incomplete)).toThrow(`${setting} is not set`);
    },
  );

  it('treats an empty setting as missing', () => {
    expect(() => handler.withEnv({ ...env, ORDERS_TABLE: '' })).toThrow(/ORDERS_TABLE/);
  });

  it('writes to the configured tables and answers 201 with a generated order id', async () => {
    ddb.on(TransactWriteCommand).resolves({});

    const response = await handler.withEnv(env)(jsonEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(201);
    const { orderId } = JSON.parse(response.body) as { orderId: string };
    expect(orderId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items.map((item) => item.Put?.TableName)).toEqual(['orders-table', 'outbox-table']);
  });

  it("writes the message with the writer's settings from its environment (DUE_SHARDS, STREAM_GRACE_MS)", async () => {
    ddb.on(TransactWriteCommand).resolves({});

    await handler.withEnv({ ...env, DUE_SHARDS: '1', STREAM_GRACE_MS: '0' })(
      jsonEvent({ body }),
      lambdaContext(),
    );

    const outboxPut = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems?.[1]?.Put;
    expect(outboxPut?.Item?.dueShard).toBe('0');
    expect(outboxPut?.Item?.nextAttemptAt).toBe(outboxPut?.Item?.updatedAt);
  });

  it.each([
    ['DUE_SHARDS', '0'],
    ['STREAM_GRACE_MS', 'soon'],
  ])('fails loudly at start with a ConfigError naming %s when it is "%s"', (name, value) => {
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(name);
  });

  it('answers 500 with the request id, not the internals, when DynamoDB fails', async () => {
    ddb.on(TransactWriteCommand).rejects(new Error('secret internal detail'));

    const response = await handler.withEnv(env)(jsonEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ error: 'internal error', requestId: 'aws-request-1' });
    expect(response.body).not.toContain('secret');
  });

  it('reads process.env on the first invocation, not at import time', async () => {
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    vi.stubEnv('ORDERS_TABLE', undefined);
    expect(() => handler(jsonEvent({ body }), lambdaContext())).toThrow(/ORDERS_TABLE is not set/);

    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    ddb.on(TransactWriteCommand).resolves({});
    const response = await handler(jsonEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(201);
    expect(ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems?.[0]?.Put?.TableName).toBe(
      'orders-table',
    );
  });

  it('answers 415 to a body sent without a content type, and writes nothing', async () => {
    const response = await handler.withEnv(env)(apiEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body)).toEqual({
      error: 'unsupported media type',
      details: [{ field: 'content-type', problem: expect.stringContaining('missing') }],
    });
    expect(ddb.calls()).toHaveLength(0);
  });
});

describe('create-order handler: concurrent POSTs with one orderId, against an in-memory DynamoDB', () => {
  const memoryEnv = { ...env, ORDERS_TABLE: 'orders', OUTBOX_TABLE: 'outbox' };
  const order = { orderId: 'order-7', customerId: 'customer-1', items: [{ sku: 'SKU-1', quantity: 2 }] };
  let memory: MemoryDocumentClient;

  beforeEach(() => {
    memory = new MemoryDocumentClient({
      orders: MEMORY_TABLE_SCHEMAS.orders,
      outbox: MEMORY_TABLE_SCHEMAS.outbox,
    });
  });

  function forward(input: TransactWriteCommandInput) {
    return memory.send(new TransactWriteCommand(input));
  }

  /**
   * Forwards to the in-memory table, but the first two transactions overlap: DynamoDB cancels one of two
   * transactions on one item at the same time with a TransactionConflict (here the second), and commits the
   * other.
   */
  function overlapping() {
    let releaseFirst: (() => void) | undefined;
    let calls = 0;
    return async (input: TransactWriteCommandInput) => {
      calls += 1;
      const call = calls;
      if (call === 1) await new Promise<void>((resolve) => (releaseFirst = resolve));
      if (call === 2) {
        releaseFirst?.();
        throw transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]);
      }
      return forward(input);
    };
  }

  /** Two Lambda instances answering one POST each, at the same time. */
  function postTwice(first: object, second: object): Promise<APIGatewayProxyResult[]> {
    return Promise.all(
      [first, second].map((request) =>
        handler.withEnv(memoryEnv)(jsonEvent({ body: request }), lambdaContext()),
      ),
    );
  }

  function expectOneCreatedAndOneReplay(responses: APIGatewayProxyResult[]): void {
    expect(responses.map((response) => response.statusCode)).toEqual([201, 201]);
    expect(responses.filter((response) => response.headers?.['idempotent-replayed'] === 'true')).toHaveLength(
      1,
    );
    const [first, second] = responses.map((response) => JSON.parse(response.body));
    expect(second).toEqual(first);
    const orders = memory.items('orders');
    const messages = memory.items('outbox');
    expect(orders).toHaveLength(1);
    expect(messages).toHaveLength(1);
    expect(first).toEqual({ orderId: 'order-7', messageId: messages[0]?.messageId });
    expect(orders[0]?.messageId).toBe(messages[0]?.messageId);
  }

  it('writes one order and one message, and answers 201 and a replayed 201 with the same messageId', async () => {
    ddb.on(TransactWriteCommand).callsFake(forward);

    expectOneCreatedAndOneReplay(await postTwice(order, order));
  });

  it('does the same when DynamoDB cancels the loser with a TransactionConflict: it retries, then replays', async () => {
    ddb.on(TransactWriteCommand).callsFake(overlapping());

    expectOneCreatedAndOneReplay(await postTwice(order, order));
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
  });

  it('answers 201 and 409 to two different orders with one orderId, and keeps the first', async () => {
    ddb.on(TransactWriteCommand).callsFake(overlapping());
    const other = { ...order, items: [{ sku: 'SKU-1', quantity: 20 }] };

    const responses = await postTwice(order, other);

    expect(responses.map((response) => response.statusCode)).toEqual([201, 409]);
    expect(JSON.parse(responses[1]?.body ?? '')).toEqual({
      error: 'order id already used for a different order',
      details: [{ field: 'items[0].quantity', problem: expect.any(String) }],
    });
    expect(memory.items('orders')).toEqual([expect.objectContaining({ items: order.items })]);
    expect(memory.items('outbox')).toHaveLength(1);
  });
});
