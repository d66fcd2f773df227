import { type AttributeValue, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type CancelledAction, TransactionConditionError, TransactionConflictError } from '../errors.ts';
import {
  type CheckedTransaction,
  type TransactWriteAction,
  withinTransactionLimits,
} from '../transaction/transaction-limits.ts';

/**
 * Sends one TransactWriteItems after checking DynamoDB's limits, and maps a cancellation to a named error:
 * {@link TransactionConditionError} with every action's reason (and old item, where asked for), or
 * {@link TransactionConflictError} when the write lost a race and wrote nothing (retryable): a concurrent
 * transaction touched the same item, or the idempotency token is in use by another request
 * (`IdempotentParameterMismatchException`) or by one still in flight (`TransactionInProgressException`).
 */
export async function transactWrite(
  client: DynamoDBDocumentClient,
  actions: readonly TransactWriteAction[],
  clientRequestToken?: string,
): Promise<void> {
  await sendTransaction(client, withinTransactionLimits(actions), clientRequestToken);
}

/** {@link transactWrite} for a list its caller has already checked, so the limits are checked once. */
export async function sendTransaction(
  client: DynamoDBDocumentClient,
  actions: CheckedTransaction,
  clientRequestToken?: string,
): Promise<void> {
  try {
    await client.send(
      new TransactWriteCommand({
        TransactItems: [...actions],
        ...(clientRequestToken === undefined ? {} : { ClientRequestToken: clientRequestToken }),
      }),
    );
  } catch (error) {
    throw mapCancellation(error);
  }
}

/** Each action's reason of a cancelled transaction, or `undefined` when `error` is not a cancellation. */
export function cancelledActions(error: unknown): readonly CancelledAction[] | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).map((reason, index) => ({
    index,
    code: reason.Code ?? 'None',
    ...(reason.Message === undefined ? {} : { message: reason.Message }),
    // The low-level client returns the old item marshalled, even when the call went through lib-dynamodb.
    ...(reason.Item === undefined
      ? {}
      : { item: unmarshall(reason.Item as Record<string, AttributeValue>, { wrapNumbers: false }) }),
  }));
}

/** Token errors that mean another request holds the same idempotency token: nothing was written by this one. */
const TOKEN_RACES = new Set(['IdempotentParameterMismatchException', 'TransactionInProgressException']);

function mapCancellation(error: unknown): unknown {
  // By name: the SDK's exception classes are not the same objects in every bundle.
  if (error instanceof Error && TOKEN_RACES.has(error.name)) {
    return new TransactionConflictError(
      `${error.name}: the write lost a race with a concurrent request; retry`,
      {
        cause: error,
      },
    );
  }
  const reasons = cancelledActions(error);
  if (reasons === undefined) return error;
  if (reasons.some((reason) => reason.code === 'ConditionalCheckFailed')) {
    return new TransactionConditionError(reasons, { cause: error });
  }
  if (reasons.some((reason) => reason.code === 'TransactionConflict')) {
    return new TransactionConflictError('transaction conflicted with a concurrent write; retry', {
      cause: error,
    });
  }
  return error;
}
