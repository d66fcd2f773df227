import {
  DynamoDBClient,
  IdempotentParameterMismatchException,
  TransactionInProgressException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { cancelledActions, transactWrite } from '../../../shared/aws/transact-write.ts';
import {
  OutboxErrorCode,
  TransactionConditionError,
  TransactionConflictError,
} from '../../../shared/errors.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import { transactionCanceled } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

const actions: TransactWriteAction[] = [
  { Put: { TableName: 'a', Item: { id: '1' }, ConditionExpression: 'attribute_not_exists(id)' } },
  { Put: { TableName: 'b', Item: { id: '2' } } },
];

beforeEach(() => {
  ddb.reset();
});

describe('transactWrite', () => {
  it('sends the actions, in order, as one TransactWriteItems', async () => {
    ddb.on(TransactWriteCommand).resolves({});

    await transactWrite(client, actions);

    const calls = ddb.commandCalls(TransactWriteCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({ TransactItems: actions });
  });

  it('passes a client request token when given one', async () => {
    ddb.on(TransactWriteCommand).resolves({});

    await transactWrite(client, actions, 'token-1');

    expect(ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.ClientRequestToken).toBe('token-1');
  });

  it('maps a failed condition to TransactionConditionError with the failed action indexes', async () => {
    const cancelled = transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]);
    ddb.on(TransactWriteCommand).rejects(cancelled);

    const error = await transactWrite(client, actions).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([1]);
    expect((error as TransactionConditionError).code).toBe(OutboxErrorCode.TRANSACTION_CONDITION_FAILED);
    expect((error as TransactionConditionError).cause).toBe(cancelled);
  });

  it('maps a conflict with a concurrent transaction to the retryable TransactionConflictError', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));

    await expect(transactWrite(client, actions)).rejects.toBeInstanceOf(TransactionConflictError);
  });

  it.each([
    [
      'an idempotency-token mismatch',
      new IdempotentParameterMismatchException({ message: 'mismatch', $metadata: {} }),
    ],
    [
      'a transaction in progress with the same token',
      new TransactionInProgressException({ message: 'busy', $metadata: {} }),
    ],
  ])(
    'maps %s (another request holds the token; nothing was written) to TransactionConflictError',
    async (_, raced) => {
      ddb.on(TransactWriteCommand).rejects(raced);

      const error = await transactWrite(client, actions, 'token-1').catch((e: unknown) => e);

      expect(error).toBeInstanceOf(TransactionConflictError);
      expect((error as TransactionConflictError).cause).toBe(raced);
    },
  );

  it('rethrows any other error unchanged', async () => {
    const throttled = new Error('Rate exceeded');
    ddb.on(TransactWriteCommand).rejects(throttled);

    await expect(transactWrite(client, actions)).rejects.toBe(throttled);
  });
});

describe('cancelledActions', () => {
  it('lists the reason of every action in order, None for missing codes', () => {
    expect(cancelledActions(transactionCanceled([{ Code: 'ConditionalCheckFailed' }, {}]))).toEqual([
      { index: 0, code: 'ConditionalCheckFailed' },
      { index: 1, code: 'None' },
    ]);
  });

  it("keeps DynamoDB's message and unmarshalls the ALL_OLD item of an action", () => {
    const reasons = cancelledActions(
      transactionCanceled([
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: { id: { S: '1' }, count: { N: '3' }, tags: { L: [{ S: 'a' }] } },
        },
        { Code: 'None' },
      ]),
    );

    expect(reasons).toEqual([
      {
        index: 0,
        code: 'ConditionalCheckFailed',
        message: 'The conditional request failed',
        item: { id: '1', count: 3, tags: ['a'] },
      },
      { index: 1, code: 'None' },
    ]);
  });

  it('is undefined for an error that is not a cancellation', () => {
    expect(cancelledActions(new Error('x'))).toBeUndefined();
  });
});
