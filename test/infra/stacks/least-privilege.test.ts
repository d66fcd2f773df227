import { beforeAll, describe, expect, it } from 'vitest';
import { buildExampleStack } from '../../../infra/synth-template.ts';
import {
  actionsOf,
  type CfnTemplate,
  functionId,
  grantsOn,
  idsByRole,
  idsOfType,
  managedPoliciesOf,
  onlyId,
  outputTarget,
  type PolicyStatement,
  propertiesOf,
  references,
  renderString,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
  XRAY_STATEMENT,
} from '../template-queries.ts';

let json: CfnTemplate;

beforeAll(() => {
  json = templateOf(buildExampleStack());
}, SYNTH_TIMEOUT_MS);

/** The example's tables and queues, by the output that names them. */
const RESOURCE_OUTPUTS = [
  'ordersTableName',
  'inventoryTableName',
  'outboxTableName',
  'inboxTableName',
  'orderEventsQueueUrl',
  'orderEventsDeadLetterQueueUrl',
  'relayFailureQueueUrl',
] as const;
type ResourceOutput = (typeof RESOURCE_OUTPUTS)[number];

/** What `queue.grantSendMessages` allows: sending, and reading the queue's own attributes. */
const SEND = ['sqs:GetQueueAttributes on Arn', 'sqs:GetQueueUrl on Arn', 'sqs:SendMessage on Arn'];
/** What an SQS event source needs: receive, delete, change visibility (the retry backoff), attributes. */
const CONSUME = [
  'sqs:ChangeMessageVisibility on Arn',
  'sqs:DeleteMessage on Arn',
  'sqs:GetQueueAttributes on Arn',
  'sqs:GetQueueUrl on Arn',
  'sqs:ReceiveMessage on Arn',
];
/** What a DynamoDB stream event source needs on the stream (ListStreams has no resource-level permission). */
const STREAM_READ = [
  'dynamodb:DescribeStream on StreamArn',
  'dynamodb:GetRecords on StreamArn',
  'dynamodb:GetShardIterator on StreamArn',
];

/**
 * Everything each function may do, resource by resource; a resource not named allows nothing. Each entry is
 * an action with the part of the resource it applies to (the table, its stream, or one named index).
 */
const EXPECTED: Readonly<Record<string, Partial<Record<ResourceOutput, readonly string[]>>>> = {
  // Marks messages SENT or records a failed attempt; sends to the topic queues; reads the stream; and Lambda
  // sends the metadata of a batch it gives up on to the failure queue with the function's own role.
  'Outbox/Relay': {
    outboxTableName: ['dynamodb:UpdateItem on Arn', ...STREAM_READ],
    orderEventsQueueUrl: SEND,
    relayFailureQueueUrl: SEND,
  },
  // Finds due messages in the `due` index, claims and marks them with conditional updates, asks the inbox
  // whether a message arrived, and resends to the topic queues — never to a dead-letter or failure queue; and
  // counts FAILED messages in the `attention` index.
  'Outbox/Sweeper': {
    outboxTableName: [
      'dynamodb:Query on index/attention',
      'dynamodb:Query on index/due',
      'dynamodb:UpdateItem on Arn',
    ],
    inboxTableName: ['dynamodb:GetItem on Arn'],
    orderEventsQueueUrl: SEND,
  },
  // Commits its inbox row with the stock update, confirms the message in the outbox, and dead-letters a
  // message it can never process itself.
  'Outbox/InventoryConsumer': {
    inboxTableName: ['dynamodb:PutItem on Arn'],
    inventoryTableName: ['dynamodb:UpdateItem on Arn'],
    outboxTableName: ['dynamodb:UpdateItem on Arn'],
    orderEventsQueueUrl: CONSUME,
    orderEventsDeadLetterQueueUrl: SEND,
  },
  // Writes the order and its message in one transaction.
  CreateOrder: {
    ordersTableName: ['dynamodb:PutItem on Arn'],
    outboxTableName: ['dynamodb:PutItem on Arn'],
  },
  // Reads the order and lists its messages by aggregate.
  GetOrder: {
    ordersTableName: ['dynamodb:GetItem on Arn'],
    outboxTableName: ['dynamodb:Query on index/byAggregate'],
  },
  PutStock: { inventoryTableName: ['dynamodb:PutItem on Arn'] },
  GetStock: { inventoryTableName: ['dynamodb:GetItem on Arn'] },
  // Reads messages by key and through the indexes (never a Scan), replays and cancels with conditional updates,
  // erases an aggregate's messages and inbox rows; moves dead letters back (receive/send/delete, or SQS's move
  // task) and reads the queues' depths. Its audit-table grants are checked below.
  'Outbox/Admin': {
    outboxTableName: [
      'dynamodb:DeleteItem on Arn',
      'dynamodb:GetItem on Arn',
      'dynamodb:Query on index/attention',
      'dynamodb:Query on index/byAggregate',
      'dynamodb:Query on index/due',
      'dynamodb:UpdateItem on Arn',
    ],
    inboxTableName: ['dynamodb:DeleteItem on Arn'],
    orderEventsQueueUrl: ['sqs:GetQueueAttributes on Arn', 'sqs:SendMessage on Arn'],
    orderEventsDeadLetterQueueUrl: [
      'sqs:ChangeMessageVisibility on Arn',
      'sqs:DeleteMessage on Arn',
      'sqs:GetQueueAttributes on Arn',
      'sqs:ListMessageMoveTasks on Arn',
      'sqs:ReceiveMessage on Arn',
      'sqs:StartMessageMoveTask on Arn',
    ],
  },
};

/** What each function may do on the audit trail: only the admin API writes it (and the redrive journal). */
const AUDIT_GRANTS: Readonly<Record<string, readonly string[]>> = {
  'Outbox/Admin': [
    'dynamodb:GetItem on Arn',
    'dynamodb:PutItem on Arn',
    'dynamodb:Query on Arn',
    'dynamodb:UpdateItem on Arn',
  ],
};
const functionNames = Object.keys(EXPECTED);

const statementsOf = (name: string): PolicyStatement[] => roleStatements(json, functionId(json, name));

describe('least privilege', () => {
  it('covers every function of the stack', () => {
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(functionNames.length);
  });

  it('allows no wildcard action in any policy', () => {
    const statements = idsOfType(json, 'AWS::IAM::Policy').flatMap(
      (id) => (propertiesOf(json, id).PolicyDocument as { Statement: PolicyStatement[] }).Statement,
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      for (const action of actionsOf(statement)) expect(action).not.toMatch(/\*/);
    }
  });

  describe.each(functionNames)('%s', (name) => {
    it.each(RESOURCE_OUTPUTS)('may do exactly what it needs on %s', (output) => {
      const granted = grantsOn(statementsOf(name), outputTarget(json, output));
      expect(granted).toEqual([...(EXPECTED[name]?.[output] ?? [])].sort());
    });

    it('is allowed nothing on any other resource (but tracing and listing streams, which have no resource-level permission)', () => {
      const known = [
        ...RESOURCE_OUTPUTS.map((output) => outputTarget(json, output)),
        onlyId(idsByRole(json, 'audit-table'), 'audit table'),
      ];
      const elsewhere = statementsOf(name).filter((statement) =>
        resourcesOf(statement).some((target) => !known.some((id) => references(target, id))),
      );
      for (const statement of elsewhere) expect(statement).toMatchObject({ Effect: 'Allow', Resource: '*' });
      const expected = [
        ...XRAY_STATEMENT.Action,
        ...(name === 'Outbox/Relay' ? ['dynamodb:ListStreams'] : []),
      ];
      expect([...new Set(elsewhere.flatMap(actionsOf))].sort()).toEqual(expected.sort());
    });

    it('may do on the audit trail only what the admin API needs, and nothing if it is not the admin API', () => {
      const audit = onlyId(idsByRole(json, 'audit-table'), 'audit table');
      expect(grantsOn(statementsOf(name), audit)).toEqual([...(AUDIT_GRANTS[name] ?? [])]);
    });

    it('has only the basic execution role as a managed policy', () => {
      const managed = managedPoliciesOf(json, functionId(json, name)).map((arn) => renderString(arn));
      expect(managed).toHaveLength(1);
      expect(managed[0]).toMatch(/:iam::aws:policy\/service-role\/AWSLambdaBasicExecutionRole$/);
    });
  });
});
