import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { consumeSqsBatch, type SqsConsumer } from '../../../shared/lambda/consumer-handler.ts';
import type { ConflictKeys } from '../../../shared/lambda/sqs-batch-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  MEMORY_TABLE_SCHEMAS,
  sqsRecord,
  testMessageId,
} from '../../support/factories.ts';

const STOCK = 100;

/** One unit of `sku` per order, decremented with the inbox row in one transaction. */
const plan: PlanEffect = (message) => ({
  apply: [
    {
      Update: {
        TableName: 'inventory',
        Key: { sku: skuOf(message) },
        UpdateExpression: 'SET #available = #available - :one',
        ConditionExpression: '#available >= :one',
        ExpressionAttributeNames: { '#available': 'available' },
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  ],
  onConditionFailure: 'REJECTED_OUT_OF_STOCK',
});

const bySku: ConflictKeys = (message) => [skuOf(message)];

function skuOf(message: Envelope): string {
  return (message.payload as { items: { sku: string }[] }).items[0]?.sku ?? '';
}

function order(n: number, sku: string): Envelope {
  return envelope({
    messageId: testMessageId(n),
    aggregateId: `order-${n}`,
    payload: { orderId: `order-${n}`, items: [{ sku, quantity: 1 }] },
  });
}

/**
 * An in-memory table whose transactions each take a few turns of the event loop, recording which were in flight
 * together and the order in which each SKU's stock was decremented.
 */
function observedTables(fail: (messageId: string) => Error | undefined = () => undefined) {
  const memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  const inFlight = new Set<string>();
  const overlapping: [string, string][] = [];
  const appliedPerSku = new Map<string, string[]>();
  const client = memory.asDocumentClient();
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  const delayed = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: unknown) => {
        if (!(command instanceof TransactWriteCommand)) return send(command);
        const items = command.input.TransactItems ?? [];
        const messageId = String(items[0]?.Put?.Item?.messageId);
        const sku = String(items[1]?.Update?.Key?.sku);
        for (const other of inFlight) overlapping.push([other, sku]);
        inFlight.add(sku);
        try {
          for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setTimeout(resolve, 1));
          const failure = fail(messageId);
          if (failure) throw failure;
          const result = await send(command);
          appliedPerSku.set(sku, [...(appliedPerSku.get(sku) ?? []), messageId]);
          return result;
        } finally {
          inFlight.delete(sku);
        }
      };
    },
  });
  const stockOf = async (sku: string) =>
    (await client.send(new GetCommand({ TableName: 'inventory', Key: { sku } }))).Item?.available;
  const stock = async (skus: readonly string[]) => {
    for (const sku of skus) {
      await client.send(new PutCommand({ TableName: 'inventory', Item: { sku, available: STOCK } }));
    }
  };
  return { client: delayed, overlapping, appliedPerSku, stockOf, stock };
}

function consumerOf(
  tables: ReturnType<typeof observedTables>,
  conflictKeys: ConflictKeys | undefined,
): SqsConsumer {
  return {
    plan,
    deps: { client: tables.client, inboxTable: 'inbox', clock: () => FIXED_NOW },
    logger: { info: () => {}, warn: () => {} },
    ...(conflictKeys === undefined ? {} : { conflictKeys }),
  };
}

let tables: ReturnType<typeof observedTables>;

beforeEach(async () => {
  tables = observedTables();
  await tables.stock(['SKU-1', 'SKU-2', 'SKU-3']);
});

describe('consumeSqsBatch with conflict keys', () => {
  it('applies a batch of orders for one SKU once each, in batch order, never two at once', async () => {
    const orders = [1, 2, 3, 4, 5].map((n) => order(n, 'SKU-1'));

    const response = await consumeSqsBatch(
      { Records: orders.map((m) => sqsRecord(m)) },
      lambdaContext(),
      consumerOf(tables, bySku),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(tables.appliedPerSku.get('SKU-1')).toEqual(orders.map((m) => m.messageId));
    expect(tables.overlapping).toEqual([]);
    expect(await tables.stockOf('SKU-1')).toBe(STOCK - orders.length);
  });

  it('runs the transactions of orders for different SKUs at the same time', async () => {
    const orders = [order(1, 'SKU-1'), order(2, 'SKU-2'), order(3, 'SKU-3')];

    const response = await consumeSqsBatch(
      { Records: orders.map((m) => sqsRecord(m)) },
      lambdaContext(),
      consumerOf(tables, bySku),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(tables.overlapping).toEqual([
      ['SKU-1', 'SKU-2'],
      ['SKU-1', 'SKU-3'],
      ['SKU-2', 'SKU-3'],
    ]);
    for (const sku of ['SKU-1', 'SKU-2', 'SKU-3']) expect(await tables.stockOf(sku)).toBe(STOCK - 1);
  });

  it('keeps batch order per SKU in a mixed batch while the SKUs run beside each other', async () => {
    const orders = [
      order(1, 'SKU-1'),
      order(2, 'SKU-2'),
      order(3, 'SKU-1'),
      order(4, 'SKU-2'),
      order(5, 'SKU-1'),
    ];

    await consumeSqsBatch(
      { Records: orders.map((m) => sqsRecord(m)) },
      lambdaContext(),
      consumerOf(tables, bySku),
    );

    expect(tables.appliedPerSku.get('SKU-1')).toEqual([1, 3, 5].map(testMessageId));
    expect(tables.appliedPerSku.get('SKU-2')).toEqual([2, 4].map(testMessageId));
    expect(tables.overlapping.some(([a, b]) => a === b)).toBe(false);
    expect(tables.overlapping.length).toBeGreaterThan(0);
    expect(await tables.stockOf('SKU-1')).toBe(STOCK - 3);
    expect(await tables.stockOf('SKU-2')).toBe(STOCK - 2);
  });

  it('applies one record after another by default, even for different SKUs', async () => {
    const orders = [order(1, 'SKU-1'), order(2, 'SKU-2'), order(3, 'SKU-3')];

    const response = await consumeSqsBatch(
      { Records: orders.map((m) => sqsRecord(m)) },
      lambdaContext(),
      consumerOf(tables, undefined),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(tables.overlapping).toEqual([]);
  });

  it('still applies the later orders of a SKU after an earlier one failed, and reports that one alone', async () => {
    tables = observedTables((messageId) =>
      messageId === testMessageId(1) ? new Error('ProvisionedThroughputExceededException') : undefined,
    );
    await tables.stock(['SKU-1']);
    const orders = [1, 2, 3].map((n) => order(n, 'SKU-1'));

    const response = await consumeSqsBatch(
      { Records: orders.map((m) => sqsRecord(m, { messageId: `sqs-${m.aggregateId}` })) },
      lambdaContext(),
      consumerOf(tables, bySku),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'sqs-order-1' }] });
    expect(tables.appliedPerSku.get('SKU-1')).toEqual([2, 3].map(testMessageId));
    expect(await tables.stockOf('SKU-1')).toBe(STOCK - 2);
  });

  it('fails alone a record whose envelope cannot be read or whose keys cannot be computed', async () => {
    const keysFailFor = testMessageId(2);
    const conflictKeys: ConflictKeys = (message) => {
      if (message.messageId === keysFailFor) throw new Error('no keys for this one');
      return bySku(message);
    };
    const event = {
      Records: [
        sqsRecord(order(1, 'SKU-1'), { messageId: 'good-1' }),
        sqsRecord(envelope(), { messageId: 'not-json', rawBody: '{"messageId":' }),
        sqsRecord(order(2, 'SKU-1'), { messageId: 'no-keys' }),
        sqsRecord(order(3, 'SKU-1'), { messageId: 'good-3' }),
      ],
    };

    const response = await consumeSqsBatch(event, lambdaContext(), consumerOf(tables, conflictKeys));

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual([
      'no-keys',
      'not-json',
    ]);
    expect(tables.appliedPerSku.get('SKU-1')).toEqual([1, 3].map(testMessageId));
  });
});
