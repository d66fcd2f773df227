import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { transactWrite } from '../../../shared/aws/transact-write.ts';
import { OutboxErrorCode, TransactionLimit, TransactionLimitError } from '../../../shared/errors.ts';
import { itemSizeBytes } from '../../../shared/transaction/item-size.ts';
import {
  assertWithinTransactionLimits,
  TRANSACTION_LIMITS,
  type TransactWriteAction,
} from '../../../shared/transaction/transaction-limits.ts';

const KB = 1024;

function putOf(table: string, id: string, dataBytes = 10): TransactWriteAction {
  return { Put: { TableName: table, Item: { id, data: 'x'.repeat(dataBytes) } } };
}

function limitErrorOf(run: () => unknown): TransactionLimitError {
  try {
    run();
  } catch (error) {
    if (error instanceof TransactionLimitError) return error;
    throw error;
  }
  throw new Error('expected a TransactionLimitError');
}

describe('itemSizeBytes', () => {
  it('counts attribute names and string values in UTF-8 bytes', () => {
    expect(itemSizeBytes({ ab: 'cde' })).toBe(5);
    expect(itemSizeBytes({ n: 'é' })).toBe(3);
  });

  it('counts numbers by their significant digits', () => {
    expect(itemSizeBytes({ n: 12345 })).toBe(1 + 4);
  });

  it('adds overhead for maps and lists and ignores undefined attributes', () => {
    expect(itemSizeBytes({ m: { a: 'b' }, l: ['x'], u: undefined })).toBe(
      1 + 3 + 1 + 1 + 1 + (1 + 3 + 1 + 1),
    );
  });
});

describe('assertWithinTransactionLimits', () => {
  it('accepts 100 small actions', () => {
    const actions = Array.from({ length: 100 }, (_, i) => putOf('orders', `id-${i}`));
    expect(() => assertWithinTransactionLimits(actions)).not.toThrow();
  });

  it('refuses 101 actions with limit ACTIONS', () => {
    const actions = Array.from({ length: 101 }, (_, i) => putOf('orders', `id-${i}`));

    const error = limitErrorOf(() => assertWithinTransactionLimits(actions));

    expect(error.code).toBe(OutboxErrorCode.TRANSACTION_LIMIT_EXCEEDED);
    expect(error.limit).toBe(TransactionLimit.ACTIONS);
    expect(error.actual).toBe(101);
    expect(error.maximum).toBe(100);
  });

  it('refuses an item over 400 KB with limit ITEM_SIZE, naming the action', () => {
    const actions = [putOf('orders', 'small'), putOf('outbox', 'big', 401 * KB)];

    const error = limitErrorOf(() => assertWithinTransactionLimits(actions));

    expect(error.limit).toBe(TransactionLimit.ITEM_SIZE);
    expect(error.maximum).toBe(TRANSACTION_LIMITS.maxItemBytes);
    expect(error.actual).toBeGreaterThan(400 * KB);
    expect(error.message).toContain('action 1');
    expect(error.message).toContain('Put outbox');
  });

  it('measures the key and values of an Update against the item limit', () => {
    const update: TransactWriteAction = {
      Update: {
        TableName: 'inventory',
        Key: { sku: 'A' },
        UpdateExpression: 'SET #d = :d',
        ExpressionAttributeNames: { '#d': 'd' },
        ExpressionAttributeValues: { ':d': 'x'.repeat(401 * KB) },
      },
    };

    const error = limitErrorOf(() => assertWithinTransactionLimits([update]));

    expect(error.limit).toBe(TransactionLimit.ITEM_SIZE);
    expect(error.message).toContain('Update inventory');
  });

  it('refuses a transaction over 4 MB whose items are each under 400 KB with limit TRANSACTION_SIZE', () => {
    const actions = Array.from({ length: 11 }, (_, i) => putOf('orders', `id-${i}`, 390 * KB));

    const error = limitErrorOf(() => assertWithinTransactionLimits(actions));

    expect(error.limit).toBe(TransactionLimit.TRANSACTION_SIZE);
    expect(error.actual).toBeGreaterThan(4 * KB * KB);
    expect(error.maximum).toBe(4 * KB * KB);
  });

  it('accepts a transaction just under 4 MB', () => {
    const actions = Array.from({ length: 10 }, (_, i) => putOf('orders', `id-${i}`, 390 * KB));
    expect(() => assertWithinTransactionLimits(actions)).not.toThrow();
  });
});

describe('transactWrite limits', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

  beforeEach(() => {
    ddb.reset();
  });

  it.each([
    ['too many actions', Array.from({ length: 101 }, (_, i) => putOf('orders', `id-${i}`))],
    ['an oversized item', [putOf('orders', 'big', 401 * KB)]],
    ['an oversized transaction', Array.from({ length: 11 }, (_, i) => putOf('orders', `id-${i}`, 390 * KB))],
  ])('sends nothing to DynamoDB for %s', async (_, actions) => {
    await expect(transactWrite(client, actions)).rejects.toBeInstanceOf(TransactionLimitError);
    expect(ddb.calls()).toHaveLength(0);
  });
});
