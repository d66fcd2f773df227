import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { grantTableAccess } from '../../../infra/constructs/table-access.ts';
import type { TableAccess } from '../../../infra/topology.ts';
import {
  actionsOf,
  actionsOnIndexesOf,
  idsOfType,
  type PolicyStatement,
  propertiesOf,
  templateJson,
} from '../template-queries.ts';

const ITEM_WRITES = ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

/** The actions a role gets from `grantTableAccess(table, role, access)` on a table with one index. */
function grantedActions(access: TableAccess): {
  actions: string[];
  resources: string;
  onIndexes: Set<string>;
} {
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
  const tableId = stack.getLogicalId(table.node.defaultChild as dynamodb.CfnTable);
  return {
    actions: statements.flatMap(actionsOf),
    resources: JSON.stringify(statements.map((s) => s.Resource)),
    onIndexes: actionsOnIndexesOf(statements, tableId),
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

  it('grants update as UpdateItem on the table only, with the ConditionCheckItem a transaction needs', () => {
    const { actions, resources, onIndexes } = grantedActions('update');
    expect([...new Set(actions)].sort()).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:DescribeTable',
      'dynamodb:UpdateItem',
    ]);
    expect(resources).not.toContain('/index/');
    expect(onIndexes.size).toBe(0);
  });

  it('grants queryUpdate as Query on the table and its indexes and UpdateItem on the table only', () => {
    const { actions, onIndexes } = grantedActions('queryUpdate');
    expect([...new Set(actions)].sort()).toEqual([
      'dynamodb:DescribeTable',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect([...onIndexes]).toEqual(['dynamodb:Query']);
  });

  it.each<TableAccess>(['update', 'queryUpdate'])('grants %s no put, delete, scan or get', (access) => {
    const { actions } = grantedActions(access);
    for (const action of [...ITEM_WRITES, 'dynamodb:Scan', 'dynamodb:GetItem', 'dynamodb:BatchGetItem']) {
      expect(actions, action).not.toContain(action);
    }
  });

  it('never grants stream reads on the table', () => {
    for (const access of ['read', 'write', 'readWrite', 'update', 'queryUpdate'] as const) {
      expect(grantedActions(access).actions, access).not.toContain('dynamodb:GetRecords');
    }
  });
});
