import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildExampleStack } from '../../../infra/synth-template.ts';
import {
  deadLetterQueueOutputName,
  type FunctionKey,
  type QueueKey,
  queueOutputName,
  type TableAccess,
  type TableKey,
  tableOutputName,
  topology,
} from '../../../infra/topology.ts';
import {
  actionsOf,
  actionsOn,
  actionsOnIndexesOf,
  type CfnTemplate,
  functionId,
  idsOfType,
  outputTarget,
  type PolicyStatement,
  propertiesOf,
  references,
  refTarget,
  roleStatements,
  templateJson,
} from '../template-queries.ts';

let json: CfnTemplate;

beforeAll(() => {
  json = templateJson(Template.fromStack(buildExampleStack()));
});

const tableKeys = Object.keys(topology.tables) as TableKey[];
const queueKeys = Object.keys(topology.queues) as QueueKey[];
const functionKeys = Object.keys(topology.functions) as FunctionKey[];

const ITEM_WRITES = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];
const ITEM_READS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan'];

/** Every action each access level allows on a table (and, for reads and queries, its indexes). */
const ACTIONS_OF: Readonly<Record<TableAccess, readonly string[]>> = {
  read: [...ITEM_READS, 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'],
  write: [...ITEM_WRITES, 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'],
  readWrite: [...ITEM_READS, ...ITEM_WRITES, 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'],
  update: ['dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'],
  queryUpdate: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DescribeTable'],
};

const tableId = (key: TableKey) => outputTarget(json, tableOutputName(key));
const queueId = (key: QueueKey) => outputTarget(json, queueOutputName(key));
const deadLetterQueueId = (key: QueueKey) => outputTarget(json, deadLetterQueueOutputName(key));
const statementsOf = (key: FunctionKey): PolicyStatement[] => roleStatements(json, functionId(json, key));

describe('least privilege', () => {
  it('allows no wildcard action in any function policy', () => {
    const statements = idsOfType(json, 'AWS::IAM::Policy').flatMap(
      (id) => (propertiesOf(json, id).PolicyDocument as { Statement: PolicyStatement[] }).Statement,
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      for (const action of actionsOf(statement)) {
        expect(action).not.toBe('*');
        expect(action).not.toMatch(/\*/);
      }
    }
  });

  it.each(functionKeys)('gives %s exactly the table access the topology grants', (key) => {
    // Stream statements name the table too (its StreamArn); they are the stream's, checked below.
    const statements = statementsOf(key).filter((s) => !JSON.stringify(s.Resource).includes('StreamArn'));
    const granted: Readonly<Partial<Record<TableKey, TableAccess>>> = topology.functions[key].tables;
    for (const table of tableKeys) {
      const access = granted[table];
      const expected = access === undefined ? [] : [...ACTIONS_OF[access]].sort();
      expect([...actionsOn(statements, tableId(table))].sort(), `${key} on ${table}`).toEqual(expected);
    }
  });

  it.each(['relay', 'inventoryConsumer'] as const)(
    'lets %s only update outbox messages: no put, delete, batch write, scan or read',
    (key) => {
      const statements = statementsOf(key).filter((s) => !JSON.stringify(s.Resource).includes('StreamArn'));
      const outbox = actionsOn(statements, tableId('outbox'));
      expect(outbox.has('dynamodb:UpdateItem')).toBe(true);
      for (const action of [
        'dynamodb:PutItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        ...ITEM_READS,
      ]) {
        expect(outbox.has(action), action).toBe(false);
      }
      // Items live in the table: nothing on its indexes.
      expect(actionsOnIndexesOf(statements, tableId('outbox')).size).toBe(0);
    },
  );

  it('keeps getStock to reading inventory: no writes, no orders, no outbox', () => {
    const statements = statementsOf('getStock');
    const inventory = actionsOn(statements, tableId('inventory'));
    expect(inventory.has('dynamodb:GetItem')).toBe(true);
    for (const action of ITEM_WRITES) expect(inventory.has(action)).toBe(false);
    expect(actionsOn(statements, tableId('orders')).size).toBe(0);
    expect(actionsOn(statements, tableId('outbox')).size).toBe(0);
  });

  it('keeps createOrder away from the inventory table', () => {
    expect(actionsOn(statementsOf('createOrder'), tableId('inventory')).size).toBe(0);
  });

  it('keeps the relay away from the orders table', () => {
    expect(actionsOn(statementsOf('relay'), tableId('orders')).size).toBe(0);
  });

  it.each(functionKeys)('lets %s send only to the queues and DLQs the topology names', (key) => {
    const statements = statementsOf(key);
    const sendsTo: readonly QueueKey[] = topology.functions[key].sendsTo ?? [];
    const sendsToDeadLetter: readonly QueueKey[] = topology.functions[key].sendsToDeadLetter ?? [];
    const onFailure = topology.functions[key].streamSource?.onFailureQueue;
    for (const queue of queueKeys) {
      const canSend = actionsOn(statements, queueId(queue)).has('sqs:SendMessage');
      expect(canSend, `${key} → ${queue}`).toBe(sendsTo.includes(queue) || queue === onFailure);
      const canDeadLetter = actionsOn(statements, deadLetterQueueId(queue)).has('sqs:SendMessage');
      expect(canDeadLetter, `${key} → ${queue} DLQ`).toBe(sendsToDeadLetter.includes(queue));
    }
  });

  it('lets the sweeper query the outbox due index and update outbox messages, never scan, put or delete', () => {
    const statements = statementsOf('sweeper');
    // The due index's ARN is covered by the `/index/*` the grant names.
    expect([...actionsOnIndexesOf(statements, tableId('outbox'))]).toEqual(['dynamodb:Query']);
    const outbox = actionsOn(statements, tableId('outbox'));
    for (const action of ['dynamodb:Query', 'dynamodb:UpdateItem']) {
      expect(outbox.has(action), action).toBe(true);
    }
    for (const action of [
      'dynamodb:Scan',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
    ]) {
      expect(outbox.has(action), action).toBe(false);
    }
  });

  it('keeps createOrder writing the outbox and getOrder reading it', () => {
    expect(topology.functions.createOrder.tables.outbox).toBe('write');
    expect(topology.functions.getOrder.tables.outbox).toBe('read');
    const getOrder = statementsOf('getOrder');
    expect(actionsOnIndexesOf(getOrder, tableId('outbox')).has('dynamodb:Query')).toBe(true);
    expect(actionsOn(statementsOf('createOrder'), tableId('outbox')).has('dynamodb:PutItem')).toBe(true);
  });

  it('lets the sweeper read the inbox to reconcile, and write no business table', () => {
    const statements = statementsOf('sweeper');
    const inbox = actionsOn(statements, tableId('inbox'));
    expect(inbox.has('dynamodb:GetItem')).toBe(true);
    for (const table of ['inbox', 'inventory', 'orders'] as const) {
      const actions = actionsOn(statements, tableId(table));
      for (const action of ITEM_WRITES) expect(actions.has(action), `${table}: ${action}`).toBe(false);
    }
    expect(actionsOn(statements, tableId('inventory')).size).toBe(0);
    expect(actionsOn(statements, tableId('orders')).size).toBe(0);
  });

  it('lets the sweeper send to the topic queues only, never to a DLQ or the relay failure queue', () => {
    const statements = statementsOf('sweeper');
    const sendTargets = queueKeys.flatMap((queue) => [
      { name: queue, id: queueId(queue) },
      { name: `${queue} DLQ`, id: deadLetterQueueId(queue) },
    ]);
    const allowed = sendTargets
      .filter(({ id }) => actionsOn(statements, id).has('sqs:SendMessage'))
      .map(({ name }) => name);
    expect(allowed).toEqual(['orderEvents']);
  });

  it('lets the inventory consumer dead-letter to the orderEvents DLQ and send nowhere else', () => {
    const statements = statementsOf('inventoryConsumer');
    const sends = statements.filter(
      (statement) => statement.Effect === 'Allow' && actionsOf(statement).includes('sqs:SendMessage'),
    );
    expect(sends).toHaveLength(1);
    expect(refTarget(sends[0]?.Resource)).toBe(deadLetterQueueId('orderEvents'));
  });

  it('lets the inventory consumer change the visibility of orderEvents messages (its retry backoff)', () => {
    const actions = actionsOn(statementsOf('inventoryConsumer'), queueId('orderEvents'));
    expect(actions.has('sqs:ChangeMessageVisibility')).toBe(true);
    expect(actions.has('sqs:SendMessage')).toBe(false);
  });

  it('lets only the queue consumer receive and delete messages', () => {
    for (const key of functionKeys) {
      const consumes = topology.functions[key].queueSource?.queue;
      for (const queue of queueKeys) {
        const actions = actionsOn(statementsOf(key), queueId(queue));
        expect(actions.has('sqs:DeleteMessage'), `${key} ← ${queue}`).toBe(queue === consumes);
      }
    }
  });

  it('lets only the relay read the outbox stream', () => {
    for (const key of functionKeys) {
      const readsStream = statementsOf(key).some(
        (statement) =>
          actionsOf(statement).includes('dynamodb:GetRecords') &&
          references(statement.Resource, tableId('outbox')) &&
          JSON.stringify(statement.Resource).includes('StreamArn'),
      );
      expect(readsStream, key).toBe(key === 'relay');
    }
  });
});
