import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_KEYS } from '../../../shared/aws/audit-table.ts';
import { OUTBOX_KEYS } from '../../../shared/aws/outbox-table.ts';
import {
  type CfnTemplate,
  functionId,
  grantsOn,
  idsByRole,
  idsOfType,
  onlyId,
  propertiesOf,
  resolvedTarget,
  resource,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, outboxService, serviceFunction } from './outbox-service.ts';

/** An outbox with two queues, a consumer on each, an archive, a writer and a reader, and its template. */
function fullService() {
  const service = outboxService({
    archive: true,
    queues: {
      orders: { topics: ['order.created', 'order.cancelled'] },
      payments: { topics: ['payment.captured'] },
    },
  });
  const orders = service.outbox.addConsumer('OrderConsumer', { queue: 'orders', entry: CONSUMER_ENTRY });
  const payments = service.outbox.addConsumer('PaymentConsumer', {
    queue: 'payments',
    entry: CONSUMER_ENTRY,
  });
  service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
  service.outbox.bindReader(serviceFunction(service.stack, 'Reader'));
  return { ...service, orders, payments, json: templateOf(service.stack) };
}

let full: ReturnType<typeof fullService>;
const id = (token: string) => resolvedTarget(full.stack, token);
const metadataOf = (json: CfnTemplate, logicalId: string) => resource(json, logicalId).Metadata ?? {};

beforeAll(() => {
  full = fullService();
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox audit table', () => {
  it('is keyed by subject and action id, on demand, with point-in-time recovery and no TTL', () => {
    const audit = propertiesOf(full.json, id(full.outbox.auditTable.tableName));
    expect(audit).toMatchObject({
      KeySchema: [
        { AttributeName: AUDIT_KEYS.partitionKey, KeyType: 'HASH' },
        { AttributeName: AUDIT_KEYS.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
    expect(AUDIT_KEYS).toEqual({ partitionKey: 'subject', sortKey: 'actionId' });
    expect(audit.TimeToLiveSpecification).toBeUndefined();
    expect(audit.StreamSpecification).toBeUndefined();
  });

  it('outlives the stack like the outbox table, unless removalPolicy says otherwise', () => {
    expect(resource(full.json, id(full.outbox.auditTable.tableName)).DeletionPolicy).toBe('Retain');
    const destroyed = outboxService({ removalPolicy: RemovalPolicy.DESTROY });
    const json = templateOf(destroyed.stack);
    const auditId = resolvedTarget(destroyed.stack, destroyed.outbox.auditTable.tableName);
    expect(resource(json, auditId).DeletionPolicy).toBe('Delete');
  });

  it('merges auditTableProps over the defaults, keeping the key', () => {
    const service = outboxService({
      auditTableProps: { tableName: 'orders-audit', deletionProtection: true },
    });
    const json = templateOf(service.stack);
    expect(
      propertiesOf(json, resolvedTarget(service.stack, service.outbox.auditTable.tableName)),
    ).toMatchObject({
      TableName: 'orders-audit',
      DeletionProtectionEnabled: true,
      KeySchema: [
        { AttributeName: 'subject', KeyType: 'HASH' },
        { AttributeName: 'actionId', KeyType: 'RANGE' },
      ],
    });
  });

  it('refuses auditTableProps that change its key', () => {
    const service = outboxService({
      auditTableProps: { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING } },
    });
    expect(() => service.app.synth()).toThrow(/auditTableProps may not change the key of the audit table/);
  });

  it('is granted to no function yet: only the admin API will write it', () => {
    const audit = id(full.outbox.auditTable.tableName);
    const functions = idsOfType(full.json, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(7);
    for (const fn of functions) expect(grantsOn(roleStatements(full.json, fn), audit), fn).toEqual([]);
  });
});

describe('TransactionalOutbox attention index', () => {
  it('lists FAILED and CANCELLED messages by attention key and creation time, with whole items', () => {
    const indexes = propertiesOf(full.json, id(full.outbox.table.tableName)).GlobalSecondaryIndexes as {
      IndexName: string;
    }[];
    expect(indexes.find((index) => index.IndexName === 'attention')).toEqual({
      IndexName: 'attention',
      KeySchema: [
        { AttributeName: 'attentionKey', KeyType: 'HASH' },
        { AttributeName: 'createdAt', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    });
    expect(OUTBOX_KEYS.attentionIndex).toMatchObject({
      name: 'attention',
      partitionKey: 'attentionKey',
      sortKey: 'createdAt',
    });
  });

  it('keeps FAILED messages: TTL reads only expiresAt, which a FAILED message never gets', () => {
    expect(propertiesOf(full.json, id(full.outbox.table.tableName)).TimeToLiveSpecification).toEqual({
      AttributeName: OUTBOX_KEYS.ttlAttribute,
      Enabled: true,
    });
  });
});

describe('TransactionalOutbox template metadata for tools', () => {
  const role = (logicalId: string) => metadataOf(full.json, logicalId)['serverless-outbox:role'];

  it.each([
    ['outbox-table', () => id(full.outbox.table.tableName)],
    ['audit-table', () => id(full.outbox.auditTable.tableName)],
    ['failure-queue', () => id(full.outbox.failureQueue.queueUrl)],
    ['relay', () => functionId(full.json, 'Outbox/Relay')],
    ['sweeper', () => functionId(full.json, 'Outbox/Sweeper')],
    ['archiver', () => functionId(full.json, 'Outbox/Archiver')],
    ['archive-bucket', () => id(full.outbox.archiveBucket?.bucketName ?? '')],
    ['alarm-topic', () => id(full.outbox.alarmTopic.topicArn)],
  ])('marks the one %s', (name, logicalId) => {
    expect(idsByRole(full.json, name)).toEqual([logicalId()]);
  });

  it('marks each topic queue with its topics', () => {
    const queues = idsByRole(full.json, 'topic-queue').sort();
    const orders = id(full.orders.queue.queue.queueUrl);
    const payments = id(full.payments.queue.queue.queueUrl);
    expect(queues).toEqual([orders, payments].sort());
    expect(metadataOf(full.json, orders)['serverless-outbox:topics']).toEqual([
      'order.created',
      'order.cancelled',
    ]);
    expect(metadataOf(full.json, payments)['serverless-outbox:topics']).toEqual(['payment.captured']);
  });

  it('marks each dead-letter queue with the logical id of the topic queue it serves', () => {
    const deadLetters = idsByRole(full.json, 'dead-letter-queue').sort();
    expect(deadLetters).toEqual(
      [
        id(full.orders.queue.deadLetterQueue.queueUrl),
        id(full.payments.queue.deadLetterQueue.queueUrl),
      ].sort(),
    );
    for (const consumer of [full.orders, full.payments]) {
      const dlq = id(consumer.queue.deadLetterQueue.queueUrl);
      expect(metadataOf(full.json, dlq)['serverless-outbox:source']).toBe(id(consumer.queue.queue.queueUrl));
    }
  });

  it('marks each consumer, and each inbox with the topics it proves', () => {
    expect(idsByRole(full.json, 'consumer').sort()).toEqual(
      [functionId(full.json, 'Outbox/OrderConsumer'), functionId(full.json, 'Outbox/PaymentConsumer')].sort(),
    );
    const ordersInbox = id(full.orders.inboxTable.tableName);
    const paymentsInbox = id(full.payments.inboxTable.tableName);
    expect(idsByRole(full.json, 'inbox-table').sort()).toEqual([ordersInbox, paymentsInbox].sort());
    expect(metadataOf(full.json, ordersInbox)['serverless-outbox:topics']).toEqual([
      'order.created',
      'order.cancelled',
    ]);
    expect(metadataOf(full.json, paymentsInbox)['serverless-outbox:topics']).toEqual(['payment.captured']);
  });

  it('marks no function of the service itself', () => {
    for (const name of ['Writer', 'Reader']) expect(role(functionId(full.json, name)), name).toBeUndefined();
  });

  it('marks no table it was given, which is not in the template', () => {
    const service = outboxService({}, (stack) => ({
      existingOutboxTable: dynamodb.Table.fromTableAttributes(stack, 'Existing', {
        tableName: 'orders-outbox',
        tableStreamArn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox/stream/x',
      }),
    }));
    service.outbox.addConsumer('Consumer', {
      queue: 'orderEvents',
      entry: CONSUMER_ENTRY,
      existingInboxTable: dynamodb.Table.fromTableName(service.stack, 'Inbox', 'inbox'),
    });
    const json = templateOf(service.stack);
    expect(idsByRole(json, 'outbox-table')).toEqual([]);
    expect(idsByRole(json, 'inbox-table')).toEqual([]);
    expect(onlyId(idsByRole(json, 'consumer'), 'consumer')).toBe(functionId(json, 'Outbox/Consumer'));
  });
});
