import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';

/** What a function may do to a table: read items, write items, or both. */
export type TableAccessLevel = 'read' | 'write' | 'readWrite';

/** Item reads: the same as `grantReadData` less the stream actions, which mean nothing on a table ARN. */
const READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
] as const;

/**
 * Item writes: `grantWriteData`'s actions plus dynamodb:ConditionCheckItem, which TransactWriteItems checks
 * for each ConditionCheck action (guarding a write on another item of the same transaction).
 */
const WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
] as const;

/**
 * Grants `grantee` exactly `access` on `table` and its indexes, nothing else.
 * @example
 * grantTableAccess(ordersTable, createOrder, 'write');
 */
export function grantTableAccess(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  access: TableAccessLevel,
): iam.Grant {
  const actions = new Set<string>([
    ...(access === 'write' ? [] : READ_ACTIONS),
    ...(access === 'read' ? [] : WRITE_ACTIONS),
  ]);
  // Table.grant adds the table's index ARNs itself when the table has indexes (Query on a GSI needs them).
  return table.grant(grantee, ...actions);
}
