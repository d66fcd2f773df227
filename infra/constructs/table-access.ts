import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { TableAccess } from '../topology.ts';

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
 * Updates of existing items, alone or inside TransactWriteItems (whose ConditionCheck actions need
 * ConditionCheckItem): no item is created, deleted or read. Items live in the table, so the table ARN only.
 */
const UPDATE_ACTIONS = [
  'dynamodb:UpdateItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
] as const;

/** For `queryUpdate`, on the table ARN only: updates of the items a query found. */
const QUERY_UPDATE_ITEM_ACTIONS = ['dynamodb:UpdateItem', 'dynamodb:DescribeTable'] as const;

/**
 * Grants `grantee` exactly `access` on `table`, nothing else:
 * - `read`: GetItem, BatchGetItem, Query, Scan, ConditionCheckItem, DescribeTable on the table and its indexes;
 * - `write`: PutItem, UpdateItem, DeleteItem, BatchWriteItem, ConditionCheckItem, DescribeTable;
 * - `readWrite`: both;
 * - `update`: UpdateItem, ConditionCheckItem, DescribeTable on the table ARN only (not its indexes);
 * - `queryUpdate`: Query on the table and its indexes, UpdateItem and DescribeTable on the table ARN only;
 *   no Scan, GetItem, PutItem, DeleteItem or BatchWriteItem.
 *
 * `update` and `queryUpdate` name the table's own ARN for item actions, not the replicas of a global table.
 * @example
 * grantTableAccess(ordersTable, createOrder, 'write');
 * grantTableAccess(outbox.table, inventoryConsumer, 'update');
 */
export function grantTableAccess(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  access: TableAccess,
): iam.Grant {
  // Table.grant adds the table's index ARNs itself when the table has indexes (Query on a GSI needs them).
  switch (access) {
    case 'read':
      return table.grant(grantee, ...READ_ACTIONS);
    case 'write':
      return table.grant(grantee, ...WRITE_ACTIONS);
    case 'readWrite':
      return table.grant(grantee, ...new Set<string>([...READ_ACTIONS, ...WRITE_ACTIONS]));
    case 'update':
      return onTableOnly(table, grantee, UPDATE_ACTIONS);
    case 'queryUpdate':
      return table
        .grant(grantee, 'dynamodb:Query')
        .combine(onTableOnly(table, grantee, QUERY_UPDATE_ITEM_ACTIONS));
    default:
      throw new Error(`grantTableAccess: unknown access '${access satisfies never}'`);
  }
}

/** Allows `actions` on the table's own ARN, without the `/index/*` ARNs `Table.grant` would add. */
function onTableOnly(table: dynamodb.ITable, grantee: iam.IGrantable, actions: readonly string[]): iam.Grant {
  return iam.Grant.addToPrincipal({ grantee, actions: [...actions], resourceArns: [table.tableArn] });
}
