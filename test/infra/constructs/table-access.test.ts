import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { grantTableAccess, type TableAccessLevel } from '../../../infra/constructs/table-access';
import { actionsOf, idsOfType, type PolicyStatement, propertiesOf, templateJson } from '../template-queries';

/** The actions a role gets from `grantTableAccess(table, role, access)` on a table with one index. */
function grantedActions(access: TableAccessLevel): { actions: string[]; resources: string } {
  const stack = new Stack(new App(), 'Grants');
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
  });
  table.addGlobalSecondaryIndex({
    indexName: 'byOwner',
    partitionKey: { name: 'owner', type: dynamodb.AttributeType.STRING },
  });
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  grantTableAccess(table, role, access);
  const json = templateJson(Template.fromStack(stack));
  const statements = idsOfType(json, 'AWS::IAM::Policy').flatMap(
    (id) => (propertiesOf(json, id).PolicyDocument as { Statement: PolicyStatement[] }).Statement,
  );
  return {
    actions: statements.flatMap(actionsOf),
    resources: JSON.stringify(statements.map((s) => s.Resource)),
  };
}

describe('grantTableAccess', () => {
  it('grants reads without any write', () => {
    const { actions } = grantedActions('read');
    expect(actions).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem']),
    );
    for (const write of [
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
    ]) {
      expect(actions).not.toContain(write);
    }
  });

  it('grants writes, with the ConditionCheckItem a transaction needs, without reads', () => {
    const { actions } = grantedActions('write');
    expect(actions).toEqual(
      expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem']),
    );
    for (const read of ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:BatchGetItem']) {
      expect(actions).not.toContain(read);
    }
  });

  it('grants both for readWrite, on the table and its indexes', () => {
    const { actions, resources } = grantedActions('readWrite');
    expect(actions).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem']),
    );
    expect(resources).toContain('/index/*');
  });

  it('never grants stream reads on the table', () => {
    expect(grantedActions('readWrite').actions).not.toContain('dynamodb:GetRecords');
  });
});
