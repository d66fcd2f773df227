import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionConditionError, TransactionConflictError } from '../errors.ts';
import { assertWithinTransactionLimits, type TransactWriteAction } from './transaction-limits.ts';

/**
 * Sends one TransactWriteItems after checking DynamoDB's limits, and maps a cancellation to a named error:
 * {@link TransactionConditionError} with the indexes of the actions whose condition failed, or
 * {@link TransactionConflictError} when a concurrent transaction won (retryable).
 */
export async function transactWrite(
  client: DynamoDBDocumentClient,
  actions: readonly TransactWriteAction[],
  clientRequestToken?: string,
): Promise<void> {
  assertWithinTransactionLimits(actions);
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

/** Why each action of a cancelled transaction failed (`None` for the ones that did not). */
export function cancellationCodes(error: unknown): readonly string[] | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
}

function mapCancellation(error: unknown): unknown {
  const codes = cancellationCodes(error);
  if (codes === undefined) return error;
  const failed = codes.flatMap((code, index) => (code === 'ConditionalCheckFailed' ? [index] : []));
  if (failed.length > 0) return new TransactionConditionError(failed, { cause: error });
  if (codes.includes('TransactionConflict')) {
    return new TransactionConflictError('transaction conflicted with a concurrent write; retry', {
      cause: error,
    });
  }
  return error;
}
