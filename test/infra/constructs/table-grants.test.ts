import { Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { grantOnTable, grantQueryOnIndexes } from 'serverless-outbox/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  grantsOn,
  idsOfType,
  type PolicyStatement,
  propertiesOf,
  resolvedTarget,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';

/** What `grant(table, role)` allows on a streamed table with two indexes, as `action on part` entries. */
function granted(grant: (table: dynamodb.Table, role: iam.Role) => void): {
  grants: string[];
  statements: PolicyStatement[];
} {
  const stack = new Stack(testApp(), 'Grants');
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
    stream: dynamodb.StreamViewType.NEW_IMAGE,
  });
  for (const indexName of ['byOwner', 'byDate']) {
    table.addGlobalSecondaryIndex({
      indexName,
      partitionKey: { name: indexName, type: dynamodb.AttributeType.STRING },
    });
  }
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  grant(table, role);
  const json = templateOf(stack);
  const statements = idsOfType(json, 'AWS::IAM::Policy').flatMap(
    (id) => (propertiesOf(json, id).PolicyDocument as { Statement: PolicyStatement[] }).Statement,
  );
  return { grants: grantsOn(statements, resolvedTarget(stack, table.tableName)), statements };
}

beforeAll(() => {
  granted(() => {});
}, SYNTH_TIMEOUT_MS);

describe('grantOnTable', () => {
  it('allows exactly the actions named, on the table itself', () => {
    const { grants } = granted((table, role) => grantOnTable(table, role, ['dynamodb:UpdateItem']));
    expect(grants).toEqual(['dynamodb:UpdateItem on Arn']);
  });

  it('adds nothing: no DescribeTable or ConditionCheckItem, no index, no stream, no replica', () => {
    const { grants, statements } = granted((table, role) =>
      grantOnTable(table, role, ['dynamodb:PutItem', 'dynamodb:GetItem']),
    );
    expect(grants).toEqual(['dynamodb:GetItem on Arn', 'dynamodb:PutItem on Arn']);
    expect(statements).toHaveLength(1);
  });
});

describe('grantQueryOnIndexes', () => {
  it('allows Query on the named indexes only, never on the table or every index', () => {
    const { grants } = granted((table, role) => grantQueryOnIndexes(table, role, ['byOwner']));
    expect(grants).toEqual(['dynamodb:Query on index/byOwner']);
  });

  it('allows Query on each index it names', () => {
    const { grants } = granted((table, role) => grantQueryOnIndexes(table, role, ['byOwner', 'byDate']));
    expect(grants).toEqual(['dynamodb:Query on index/byDate', 'dynamodb:Query on index/byOwner']);
  });
});
