import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../../../functions/orders/create-order/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { apiEvent, lambdaContext } from '../../../support/factories.ts';

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

    const response = await handler.withEnv(env)(apiEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(201);
    const { orderId } = JSON.parse(response.body) as { orderId: string };
    expect(orderId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items.map((item) => item.Put?.TableName)).toEqual(['orders-table', 'outbox-table']);
  });

  it("writes the message with the writer's settings from its environment (DUE_SHARDS, STREAM_GRACE_MS)", async () => {
    ddb.on(TransactWriteCommand).resolves({});

    await handler.withEnv({ ...env, DUE_SHARDS: '1', STREAM_GRACE_MS: '0' })(
      apiEvent({ body }),
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

    const response = await handler.withEnv(env)(apiEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ error: 'internal error', requestId: 'aws-request-1' });
    expect(response.body).not.toContain('secret');
  });

  it('reads process.env on the first invocation, not at import time', async () => {
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    vi.stubEnv('ORDERS_TABLE', undefined);
    expect(() => handler(apiEvent({ body }), lambdaContext())).toThrow(/ORDERS_TABLE is not set/);

    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    ddb.on(TransactWriteCommand).resolves({});
    const response = await handler(apiEvent({ body }), lambdaContext());

    expect(response.statusCode).toBe(201);
    expect(ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems?.[0]?.Put?.TableName).toBe(
      'orders-table',
    );
  });
});
