import { fileURLToPath } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { OutboxAdmin } from '../../../infra/constructs/outbox-admin-api.ts';
import {
  functionId,
  grantsOn,
  resolvedTarget,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';

const ADMIN_ENTRY = fileURLToPath(new URL('../../../shared/lambda/entries/admin.ts', import.meta.url));

/** The admin API alone on a stack with an outbox table, an audit table and two consumer inboxes. */
function adminWith(ordered: 'none' | 'orders') {
  const stack = new Stack(testApp(), 'Service');
  const table = (id: string) =>
    new dynamodb.Table(stack, id, { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING } });
  const [outbox, audit, orders, payments] = ['Outbox', 'Audit', 'OrdersInbox', 'PaymentsInbox'].map(table);
  if (outbox === undefined || audit === undefined || orders === undefined || payments === undefined) {
    throw new Error('tables missing');
  }
  const outboxScope = {
    scope: stack,
    report: (problem: string) => {
      throw new Error(problem);
    },
    metricsNamespace: 'Test',
    removalPolicy: undefined,
    encryptionKey: undefined,
    settings: {},
  };
  const admin = new OutboxAdmin(outboxScope, {
    api: new apigateway.RestApi(stack, 'Api', { cloudWatchRole: false }),
    entry: ADMIN_ENTRY,
    outboxTable: outbox,
    auditTable: audit,
    queues: [],
    deliveryInboxes: () => ({}),
  });
  admin.complete({
    orderedInboxTables: ordered === 'orders' ? [orders] : [],
    claimCheck: undefined,
    subscribers: false,
    orderedSubscribers: false,
  });
  const json = templateOf(stack);
  const statements = roleStatements(json, functionId(json, 'Admin'));
  const target = (t: dynamodb.Table) => resolvedTarget(stack, t.tableName);
  return {
    outbox: grantsOn(statements, target(outbox)),
    orders: grantsOn(statements, target(orders)),
    payments: grantsOn(statements, target(payments)),
    /** The conditions of the statements that allow a DeleteItem on the orders inbox. */
    ordersDeleteConditions: statements
      .filter((statement) => grantsOn([statement], target(orders)).includes('dynamodb:DeleteItem on Arn'))
      .map((statement) => statement.Condition),
  };
}

describe('the admin API with ordered topics', () => {
  it(
    'lets a skip find the message by order key and move the cursors in the ordered consumers’ inboxes only',
    () => {
      const grants = adminWith('orders');

      expect(grants.outbox).toContain('dynamodb:Query on index/byOrderKey');
      expect(grants.orders).toEqual([
        'dynamodb:DeleteItem on Arn',
        'dynamodb:GetItem on Arn',
        'dynamodb:UpdateItem on Arn',
      ]);
      expect(grants.payments).toEqual([]);
      // The delete is an erase's, of an erased message's parked row: it can never reach an inbox row or a cursor.
      expect(grants.ordersDeleteConditions).toEqual([
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['parked#*'] } },
      ]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'grants nothing for a skip when no topic is ordered',
    () => {
      const grants = adminWith('none');

      expect(grants.outbox).not.toContain('dynamodb:Query on index/byOrderKey');
      expect(grants.orders).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );
});
