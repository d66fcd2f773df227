import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/inventory/apply-order/handler.ts';
import { envelope, lambdaContext, sqsRecord, testMessageId } from '../../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const env = {
  INVENTORY_TABLE: 'inventory-table',
  INBOX_TABLE: 'inbox-table',
  SOURCE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-events',
  DEAD_LETTER_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-events-dlq',
  MAX_RECEIVE_COUNT: '5',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

/** Transactions that take a few turns of the event loop; records the SKUs in flight whenever one starts. */
let inFlight: Set<string>;
let startedBeside: string[][];

beforeEach(() => {
  ddb.reset();
  inFlight = new Set();
  startedBeside = [];
  ddb.on(UpdateCommand).resolves({});
  ddb.on(TransactWriteCommand).callsFake(async (input) => {
    const sku = String(input.TransactItems?.[1]?.Update?.Key?.sku);
    startedBeside.push([...inFlight, sku]);
    inFlight.add(sku);
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setTimeout(resolve, 1));
    inFlight.delete(sku);
    return {};
  });
});

function order(n: number, sku: string) {
  return sqsRecord(
    envelope({
      messageId: testMessageId(n),
      aggregateId: `order-${n}`,
      payload: { orderId: `order-${n}`, items: [{ sku, quantity: 1 }] },
    }),
  );
}

describe('apply-order handler concurrency', () => {
  it('applies orders for different SKUs at once', async () => {
    const response = await handler.withEnv(env)(
      { Records: [order(1, 'SKU-1'), order(2, 'SKU-2'), order(3, 'SKU-3')] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(startedBeside).toEqual([['SKU-1'], ['SKU-1', 'SKU-2'], ['SKU-1', 'SKU-2', 'SKU-3']]);
  });

  it('applies orders for one SKU one after another, in batch order', async () => {
    const response = await handler.withEnv(env)(
      { Records: [order(1, 'SKU-1'), order(2, 'SKU-2'), order(3, 'SKU-1'), order(4, 'SKU-1')] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    // No transaction started while another on its SKU was in flight.
    expect(startedBeside.filter((skus) => skus.indexOf(skus.at(-1) ?? '') < skus.length - 1)).toEqual([]);
    expect(startedBeside).toHaveLength(4);
    const skuOneOrder = ddb
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.TransactItems)
      .filter((items) => items?.[1]?.Update?.Key?.sku === 'SKU-1')
      .map((items) => items?.[0]?.Put?.Item?.messageId);
    expect(skuOneOrder).toEqual([1, 3, 4].map(testMessageId));
  });
});
