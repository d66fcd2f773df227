import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemKey, OptimisticConcurrency, transactionItemKeys } from '../../../infra/dev/drill/contention.ts';
import {
  conflictingDocumentClient,
  FaultInjector,
  seededRandom,
  uniformRates,
} from '../../../infra/dev/drill/faults.ts';
import { transactWrite } from '../../../shared/aws/transact-write.ts';
import { TransactionConflictError } from '../../../shared/errors.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import { MEMORY_TABLE_SCHEMAS } from '../../support/factories.ts';

const HOT = itemKey('inventory', { sku: 'HOT' });

/** The consumer's transaction for one message: its inbox row and the stock of one SKU. */
function reservation(messageId: string, sku: string): TransactWriteAction[] {
  return [
    {
      Put: {
        TableName: 'inbox',
        Item: { messageId, outcome: 'APPLIED' },
        ConditionExpression: 'attribute_not_exists(messageId)',
      },
    },
    {
      Update: {
        TableName: 'inventory',
        Key: { sku },
        UpdateExpression: 'SET available = available - :one',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  ];
}

async function stocked(): Promise<MemoryDocumentClient> {
  const memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  for (const sku of ['HOT', 'COLD'])
    await memory.send(new PutCommand({ TableName: 'inventory', Item: { sku, available: 10 } }));
  return memory;
}

describe('transactionItemKeys', () => {
  it('names each item a transaction touches: a Put by its message id, the others by their key', () => {
    expect(transactionItemKeys({ TransactItems: reservation('m-1', 'HOT') })).toEqual([
      itemKey('inbox', { messageId: 'm-1' }),
      HOT,
    ]);
  });

  it('keys a Put by the item it writes: two reservations of one order collide, of two orders do not', () => {
    const reserve = (orderId: string): TransactWriteAction => ({
      Put: { TableName: 'inventory', Item: { sku: `reservation#${orderId}`, orderId, quantity: 1 } },
    });
    const [first] = transactionItemKeys({ TransactItems: [reserve('o-1')] });
    expect(transactionItemKeys({ TransactItems: [reserve('o-1')] })).toEqual([first]);
    expect(transactionItemKeys({ TransactItems: [reserve('o-2')] })).not.toEqual([first]);
    expect(first).toBe(itemKey('inventory', { sku: 'reservation#o-1' }));
  });
});

describe('conflictingDocumentClient', () => {
  it('cancels a transaction on a hot item with TransactionConflict, writing nothing, and counts it', async () => {
    const memory = await stocked();
    const faults = new FaultInjector({ ...uniformRates(0), hotSkuConflict: 1 }, seededRandom(1));
    const client = conflictingDocumentClient(memory.asDocumentClient(), faults, new Set([HOT]));

    await expect(transactWrite(client, reservation('m-1', 'HOT'))).rejects.toBeInstanceOf(
      TransactionConflictError,
    );
    await transactWrite(client, reservation('m-2', 'COLD'));

    expect(faults.injected.hotSkuConflict).toBe(1);
    expect(memory.items('inbox').map((row) => row.messageId)).toEqual(['m-2']);
  });
});

describe('OptimisticConcurrency', () => {
  it('cancels a transaction on an item another one in flight holds, as DynamoDB does', async () => {
    const memory = await stocked();
    const concurrency = new OptimisticConcurrency();
    const [a, b] = [concurrency.wrap(memory.asDocumentClient()), concurrency.wrap(memory.asDocumentClient())];

    const results = await Promise.allSettled([
      transactWrite(a, reservation('m-1', 'HOT')),
      transactWrite(b, reservation('m-2', 'HOT')),
      transactWrite(b, reservation('m-3', 'COLD')),
    ]);

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[1]).toMatchObject({ reason: expect.any(TransactionConflictError) });
    expect(concurrency.conflicts).toBe(1);
    // Once the first has committed, the item is free again.
    await transactWrite(b, reservation('m-2', 'HOT'));
    expect(memory.items('inventory').find((row) => row.sku === 'HOT')?.available).toBe(8);
  });

  it('sends transactions on different items together, leaving their isolation to the forwarder in front of moto', async () => {
    const memory = await stocked();
    let inFlight = 0;
    let most = 0;
    const slow = new Proxy(memory.asDocumentClient(), {
      get: (target, property) =>
        property === 'send'
          ? async (command: never) => {
              inFlight += 1;
              most = Math.max(most, inFlight);
              await new Promise((resolve) => setTimeout(resolve, 5));
              inFlight -= 1;
              return target.send(command);
            }
          : Reflect.get(target, property),
    });
    const concurrency = new OptimisticConcurrency();
    const client = concurrency.wrap(slow);

    await Promise.all([
      transactWrite(client, reservation('m-1', 'HOT')),
      transactWrite(client, reservation('m-2', 'COLD')),
    ]);

    // One at a time here too, every consumer transaction waited for the answer to the one before it.
    expect(most).toBe(2);
    expect(concurrency.conflicts).toBe(0);
  });
});
