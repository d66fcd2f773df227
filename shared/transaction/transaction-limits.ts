import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { TransactionLimit, TransactionLimitError } from '../errors.ts';
import { itemSizeBytes } from './item-size.ts';

/** One action of a lib-dynamodb `TransactWriteItems` call. */
export type TransactWriteAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Set only by {@link withinTransactionLimits}: a list of this type was checked. */
declare const checkedAgainstLimits: unique symbol;

/** A TransactWriteItems list that {@link withinTransactionLimits} found within DynamoDB's limits. */
export type CheckedTransaction = readonly TransactWriteAction[] & { readonly [checkedAgainstLimits]: true };

/** DynamoDB's TransactWriteItems limits. */
export const TRANSACTION_LIMITS = {
  /** Actions in one transaction (raised from 25 to 100 in 2022). */
  maxActions: 100,
  /** Aggregate size of all items in one transaction: 4 MB. */
  maxTransactionBytes: 4 * 1024 * 1024,
  /** Size of one item: 400 KB. */
  maxItemBytes: 400 * 1024,
} as const;

/** A short label for an action, used in limit errors: `Put orders`, `Update inventory`. */
export function describeAction(action: TransactWriteAction): string {
  if (action.Put) return `Put ${action.Put.TableName}`;
  if (action.Update) return `Update ${action.Update.TableName}`;
  if (action.Delete) return `Delete ${action.Delete.TableName}`;
  if (action.ConditionCheck) return `ConditionCheck ${action.ConditionCheck.TableName}`;
  return 'empty action';
}

/** The bytes an action contributes to the transaction: the whole item for a Put, key and values otherwise. */
export function actionSizeBytes(action: TransactWriteAction): number {
  if (action.Put) return itemSizeBytes(action.Put.Item ?? {});
  const keyed = action.Update ?? action.Delete ?? action.ConditionCheck;
  if (!keyed) return 0;
  return itemSizeBytes(keyed.Key ?? {}) + itemSizeBytes(keyed.ExpressionAttributeValues ?? {});
}

/**
 * Throws a {@link TransactionLimitError} naming the first limit `actions` would break, before anything is
 * sent: a refused transaction is cheaper and clearer here than as a ValidationException from DynamoDB.
 */
export function assertWithinTransactionLimits(actions: readonly TransactWriteAction[]): void {
  if (actions.length > TRANSACTION_LIMITS.maxActions) {
    throw new TransactionLimitError({
      limit: TransactionLimit.ACTIONS,
      actual: actions.length,
      maximum: TRANSACTION_LIMITS.maxActions,
      detail: 'too many actions in one TransactWriteItems',
    });
  }
  let total = 0;
  for (const [index, action] of actions.entries()) {
    const size = actionSizeBytes(action);
    if (size > TRANSACTION_LIMITS.maxItemBytes) {
      throw new TransactionLimitError({
        limit: TransactionLimit.ITEM_SIZE,
        actual: size,
        maximum: TRANSACTION_LIMITS.maxItemBytes,
        detail: `item of action ${index} (${describeAction(action)}) is too large in bytes`,
      });
    }
    total += size;
  }
  if (total > TRANSACTION_LIMITS.maxTransactionBytes) {
    throw new TransactionLimitError({
      limit: TransactionLimit.TRANSACTION_SIZE,
      actual: total,
      maximum: TRANSACTION_LIMITS.maxTransactionBytes,
      detail: 'transaction size in bytes',
    });
  }
}

/** `actions` as a {@link CheckedTransaction}, or the {@link TransactionLimitError} of the first limit they break. */
export function withinTransactionLimits(actions: readonly TransactWriteAction[]): CheckedTransaction {
  assertWithinTransactionLimits(actions);
  return actions as CheckedTransaction;
}
