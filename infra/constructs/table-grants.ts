import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';

/**
 * Allows exactly `actions` on the table's own ARN — not its indexes (which `Table.grant` adds) and not the
 * replicas of a global table. Items live in the table, so item actions need nothing more.
 * @example
 * grantOnTable(outbox.table, relay, ['dynamodb:UpdateItem']);
 */
export function grantOnTable(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  actions: readonly string[],
): iam.Grant {
  return iam.Grant.addToPrincipal({ grantee, actions: [...actions], resourceArns: [table.tableArn] });
}

/** Allows `dynamodb:Query` on the named global secondary indexes of the table, and nothing else. */
export function grantQueryOnIndexes(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  indexNames: readonly string[],
): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:Query'],
    resourceArns: indexNames.map((name) => `${table.tableArn}/index/${name}`),
  });
}
