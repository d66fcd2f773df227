import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { transactWrite } from '../../shared/aws/transact-write.ts';
import {
  ConfigError,
  describeError,
  OutboxError,
  OutboxErrorCode,
  PoisonMessageError,
  TransactionConditionError,
  TransactionConflictError,
  TransactionLimit,
  TransactionLimitError,
} from '../../shared/errors.ts';
import type { TransactWriteAction } from '../../shared/transaction/transaction-limits.ts';
import { transactionCanceled } from '../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

/** An order put, a stock decrement and an inbox put, each asking for the old item when its condition fails. */
const actions: TransactWriteAction[] = [
  {
    Put: {
      TableName: 'orders',
      Item: { orderId: 'o-1' },
      ConditionExpression: 'attribute_not_exists(orderId)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  },
  {
    Update: {
      TableName: 'inventory',
      Key: { sku: 'SKU-1' },
      UpdateExpression: 'SET available = available - :q',
      ConditionExpression: 'available >= :q',
      ExpressionAttributeValues: { ':q': 2 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  },
  { Put: { TableName: 'inbox', Item: { messageId: 'm-1' } } },
];

/** What `transactWrite` throws when DynamoDB cancels the transaction for `reasons`. */
async function conditionErrorFor(
  reasons: Parameters<typeof transactionCanceled>[0],
): Promise<TransactionConditionError> {
  ddb.on(TransactWriteCommand).rejects(transactionCanceled(reasons));
  const error = await transactWrite(client, actions).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TransactionConditionError);
  return error as TransactionConditionError;
}

beforeEach(() => {
  ddb.reset();
});

describe('OutboxError hierarchy', () => {
  it.each([
    ['ConfigError', new ConfigError('X is not set'), OutboxErrorCode.INVALID_CONFIG],
    ['PoisonMessageError', new PoisonMessageError('no envelope'), OutboxErrorCode.POISON_MESSAGE],
    [
      'TransactionConflictError',
      new TransactionConflictError('conflict'),
      OutboxErrorCode.TRANSACTION_CONFLICT,
    ],
    ['TransactionConditionError', new TransactionConditionError([]), 'TRANSACTION_CONDITION_FAILED'],
  ])('%s is an OutboxError with its name and code', (name, error, code) => {
    expect(error).toBeInstanceOf(OutboxError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
  });

  it('keeps the standard cause', () => {
    const cause = new SyntaxError('Unexpected end of JSON input');

    expect(new PoisonMessageError('no envelope', { cause }).cause).toBe(cause);
    expect(new ConfigError('X is not valid JSON', { cause }).cause).toBe(cause);
  });

  it('describes an error as one line for lastError: `Name: message`', () => {
    expect(describeError(new PoisonMessageError('not an envelope'))).toBe(
      'PoisonMessageError: not an envelope',
    );
    expect(describeError('plain text')).toBe('plain text');
  });
});

describe('TransactionLimitError', () => {
  it('carries the limit, the measured value and the maximum, and says them in its message', () => {
    const error = new TransactionLimitError({
      limit: TransactionLimit.ITEM_SIZE,
      actual: 500_000,
      maximum: 409_600,
      detail: 'item of action 1 (Put outbox) is too large in bytes',
    });

    expect(error).toBeInstanceOf(OutboxError);
    expect(error.code).toBe(OutboxErrorCode.TRANSACTION_LIMIT_EXCEEDED);
    expect(error.limit).toBe(TransactionLimit.ITEM_SIZE);
    expect(error.actual).toBe(500_000);
    expect(error.maximum).toBe(409_600);
    expect(error.message).toBe(
      'item of action 1 (Put outbox) is too large in bytes: 500000 exceeds the limit of 409600',
    );
  });
});

describe('TransactionConditionError from a cancelled TransactWriteItems', () => {
  it('carries every action’s reason, in the order given, with the cancellation as cause', async () => {
    const cancelled = transactionCanceled([
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
      { Code: 'None' },
    ]);
    ddb.on(TransactWriteCommand).rejects(cancelled);

    const error = (await transactWrite(client, actions).catch(
      (e: unknown) => e,
    )) as TransactionConditionError;

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect(error.reasons).toEqual([
      { index: 0, code: 'None' },
      { index: 1, code: 'ConditionalCheckFailed', message: 'The conditional request failed' },
      { index: 2, code: 'None' },
    ]);
    expect(error.cause).toBe(cancelled);
    expect(error.message).toBe('transaction cancelled: condition failed on action(s) 1');
  });

  it('tells which actions failed with failed(i) and failedActions', async () => {
    const error = await conditionErrorFor([
      { Code: 'ConditionalCheckFailed' },
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed' },
    ]);

    expect(error.failed(0)).toBe(true);
    expect(error.failed(1)).toBe(false);
    expect(error.failed(2)).toBe(true);
    // An index past the transaction is not a failed action.
    expect(error.failed(3)).toBe(false);
    expect(error.failedActions).toEqual([0, 2]);
    expect(error.message).toBe('transaction cancelled: condition failed on action(s) 0, 2');
  });

  it('gives the ALL_OLD item of a failed action, unmarshalled, with oldItem(i)', async () => {
    const error = await conditionErrorFor([
      {
        Code: 'ConditionalCheckFailed',
        Item: {
          orderId: { S: 'o-1' },
          customerId: { S: 'c-1' },
          items: { L: [{ M: { sku: { S: 'SKU-1' }, quantity: { N: '2' } } }] },
        },
      },
      { Code: 'ConditionalCheckFailed', Item: { sku: { S: 'SKU-1' }, available: { N: '1' } } },
      { Code: 'None' },
    ]);

    expect(error.oldItem(0)).toEqual({
      orderId: 'o-1',
      customerId: 'c-1',
      items: [{ sku: 'SKU-1', quantity: 2 }],
    });
    expect(error.oldItem(1)).toEqual({ sku: 'SKU-1', available: 1 });
    expect(error.reasons[1]?.item).toEqual({ sku: 'SKU-1', available: 1 });
  });

  it('has no old item for an action that did not fail, or whose item DynamoDB did not return', async () => {
    const error = await conditionErrorFor([
      { Code: 'ConditionalCheckFailed' },
      { Code: 'None' },
      { Code: 'None' },
    ]);

    expect(error.oldItem(0)).toBeUndefined();
    expect(error.oldItem(1)).toBeUndefined();
    expect(error.oldItem(7)).toBeUndefined();
  });

  it('wins over a conflict on another action: a failed condition is the outcome to act on', async () => {
    const error = await conditionErrorFor([
      { Code: 'TransactionConflict' },
      { Code: 'ConditionalCheckFailed' },
      { Code: 'None' },
    ]);

    expect(error.failedActions).toEqual([1]);
    expect(error.reasons[0]?.code).toBe('TransactionConflict');
  });
});
