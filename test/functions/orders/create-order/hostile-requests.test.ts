import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { MemoryDocumentClient } from 'serverless-outbox/testing';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/orders/create-order/handler.ts';
import { apiEvent, lambdaContext, MEMORY_TABLE_SCHEMAS } from '../../../support/factories.ts';

/** Requests the fuzz suite (test/fuzz) found answered with a 500, pinned as they were shrunk. */

const ddb = mockClient(DynamoDBDocumentClient);
const env = {
  ORDERS_TABLE: 'orders',
  OUTBOX_TABLE: 'outbox',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};
let memory: MemoryDocumentClient;

beforeEach(() => {
  memory = new MemoryDocumentClient({
    orders: MEMORY_TABLE_SCHEMAS.orders,
    outbox: MEMORY_TABLE_SCHEMAS.outbox,
  });
  ddb.reset();
  ddb.on(TransactWriteCommand).callsFake((input) => memory.send(new TransactWriteCommand(input)));
});

afterAll(() => {
  ddb.restore();
});

describe('create-order handler, hostile requests', () => {
  it.each([
    ['a lone surrogate', '\ud800'],
    ['300 KB of text', 'x'.repeat(300_000)],
  ])('creates the order without the traceparent when the header holds %s', async (_case, traceparent) => {
    const event = apiEvent({
      body: '{"customerId":" ","items":[{"sku":"SKU-1","quantity":1E2}]}',
      headers: { traceparent, 'content-type': 'application/json' },
    });

    const response = await handler.withEnv(env)(event, lambdaContext());

    expect(response.statusCode).toBe(201);
    expect(memory.items('outbox')).toEqual([expect.objectContaining({ headers: {} })]);
    expect(memory.items('orders')).toEqual([
      expect.objectContaining({ items: [{ sku: 'SKU-1', quantity: 100 }] }),
    ]);
  });
});
