import { beforeAll, describe, expect, it } from 'vitest';
import {
  CONFIRMATION_ATTRIBUTES,
  CONFIRMATION_RETURN_VALUES,
} from '../../../shared/aws/outbox-table/transition-updates.ts';
import { buildSingleQueueExample } from '../../support/single-queue-example.ts';
import { logGroupOf } from '../iam/granted-permissions.ts';
import {
  actionsOf,
  type CfnTemplate,
  constructName,
  functionId,
  idsByRole,
  idsOfType,
  managedPoliciesOf,
  onlyId,
  outputTarget,
  type PolicyStatement,
  propertiesOf,
  references,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';

/**
 * What holds for every role of the example whatever its code does. That each grant is exactly what the code's
 * calls need is proven from the recorded calls in test/infra/iam.
 */

let json: CfnTemplate;
let functions: { name: string; id: string }[];

beforeAll(() => {
  json = templateOf(buildSingleQueueExample());
  functions = idsOfType(json, 'AWS::Lambda::Function').map((id) => ({
    id,
    name: constructName(json, id) ?? id,
  }));
}, SYNTH_TIMEOUT_MS);

const statementsOf = (id: string): PolicyStatement[] => roleStatements(json, id);
const allows = (statement: PolicyStatement, action: string): boolean =>
  statement.Effect === 'Allow' && actionsOf(statement).includes(action);

describe('least privilege', () => {
  it('allows no wildcard action in any policy', () => {
    const statements = idsOfType(json, 'AWS::IAM::Policy').flatMap(
      (id) => (propertiesOf(json, id).PolicyDocument as { Statement: PolicyStatement[] }).Statement,
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      for (const action of actionsOf(statement)) expect(action).not.toMatch(/\*/);
    }
  });

  it('attaches no managed policy (no AWSLambdaBasicExecutionRole, whose logs grant covers every log group)', () => {
    for (const { id } of functions) expect(managedPoliciesOf(json, id)).toEqual([]);
  });

  it('lets each function create log streams and put events in its own log group, and nowhere else', () => {
    for (const { id } of functions) {
      const logStatements = statementsOf(id).filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('logs:')),
      );
      expect(logStatements).toEqual([
        {
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Effect: 'Allow',
          Resource: { 'Fn::GetAtt': [logGroupOf(json, id), 'Arn'] },
        },
      ]);
    }
  });

  it('lets the consumer update the producer’s outbox only with the confirmation’s attributes and no return values', () => {
    const consumer = functionId(json, 'Outbox/InventoryConsumer');
    const outbox = outputTarget(json, 'outboxTableName');
    const updates = statementsOf(consumer).filter(
      (statement) => allows(statement, 'dynamodb:UpdateItem') && references(statement.Resource, outbox),
    );
    expect(updates).toEqual([
      expect.objectContaining({
        Action: 'dynamodb:UpdateItem',
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...CONFIRMATION_ATTRIBUTES] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': [CONFIRMATION_RETURN_VALUES] },
        },
      }),
    ]);
    // IAM evaluates dynamodb:Attributes against the key too: a list without it would refuse every confirmation.
    expect(CONFIRMATION_ATTRIBUTES).toContain('messageId');
  });

  it('grants Scan and BatchWriteItem to no function, and DeleteItem to the admin API and the consumer only', () => {
    for (const { id } of functions) {
      const actions = new Set(statementsOf(id).flatMap(actionsOf));
      expect(actions.has('dynamodb:Scan')).toBe(false);
      expect(actions.has('dynamodb:BatchWriteItem')).toBe(false);
    }
    const deletable = (name: string) =>
      statementsOf(functionId(json, name))
        .filter((statement) => allows(statement, 'dynamodb:DeleteItem'))
        .flatMap(resourcesOf);
    // The admin API erases messages and their inbox rows.
    expect(deletable('Outbox/Admin')).toEqual(
      expect.arrayContaining(
        ['outboxTableName', 'inboxTableName'].map((output) => ({
          'Fn::GetAtt': [outputTarget(json, output), 'Arn'],
        })),
      ),
    );
    // The consumer deletes a parked row of its inbox when it applies it, and an order's reservation row when
    // the cancellation releases it: those two tables, never the outbox.
    expect(deletable('Outbox/InventoryConsumer')).toEqual(
      ['inboxTableName', 'inventoryTableName'].map((output) => ({
        'Fn::GetAtt': [outputTarget(json, output), 'Arn'],
      })),
    );
    for (const { name } of functions) {
      if (name === 'Outbox/Admin' || name === 'Outbox/InventoryConsumer') continue;
      expect(deletable(name), name).toEqual([]);
    }
  });

  it('lets only the relay read a stream, and only the outbox’s', () => {
    const outbox = outputTarget(json, 'outboxTableName');
    for (const { id, name } of functions) {
      const streamReads = statementsOf(id).filter((statement) => allows(statement, 'dynamodb:GetRecords'));
      if (name !== 'Outbox/Relay') {
        expect(streamReads).toEqual([]);
        continue;
      }
      expect(streamReads.flatMap(resourcesOf)).toEqual([{ 'Fn::GetAtt': [outbox, 'StreamArn'] }]);
    }
  });

  it('lets only the admin API touch the audit trail', () => {
    const audit = onlyId(idsByRole(json, 'audit-table'), 'audit table');
    for (const { id, name } of functions) {
      const onAudit = statementsOf(id).filter((statement) => references(statement.Resource, audit));
      expect(onAudit.length > 0).toBe(name === 'Outbox/Admin');
    }
  });
});
