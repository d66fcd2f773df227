import { Duration, type Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { OutboxSettings, readSetting } from 'serverless-outbox';
import type { TransactionalOutboxProps } from 'serverless-outbox/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_KEYS } from '../../../shared/aws/outbox-table.ts';
import {
  type CfnTemplate,
  deployedEnvironment,
  environmentOf,
  functionId,
  grantsOn,
  idsOfType,
  mappingFrom,
  propertiesOf,
  resolvedTarget,
  resource,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, type OutboxService, outboxService, serviceFunction } from './outbox-service.ts';

/** The topics of `orders` (FIFO) share the scope `order`; `payments` carries an unordered topic. */
const QUEUES = {
  orders: { topics: ['order.created', 'order.cancelled'], fifo: true },
  payments: { topics: ['payment.captured'] },
} as const;

const ORDERING: TransactionalOutboxProps['ordering'] = {
  'order.created': { scope: 'order', gapTimeout: Duration.minutes(10) },
  'order.cancelled': { scope: 'order' },
  'payment.captured': 'none',
};

/** Every function of a service built by {@link orderedService}, by construct path. */
const FUNCTIONS = [
  'Outbox/Relay',
  'Outbox/Sweeper',
  'Outbox/OrderConsumer',
  'Outbox/PaymentConsumer',
  'Outbox/Admin',
  'Writer',
  'VersionedWriter',
] as const;

/** A service with the queues and ordering given, a consumer on each queue, a writer and the admin API. */
function orderedService(props: Partial<TransactionalOutboxProps>) {
  const service = outboxService({ queues: QUEUES, ...props });
  const orders = service.outbox.addConsumer('OrderConsumer', { queue: 'orders', entry: CONSUMER_ENTRY });
  const payments = service.outbox.addConsumer('PaymentConsumer', {
    queue: 'payments',
    entry: CONSUMER_ENTRY,
  });
  service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
  // Writes ordered messages with their aggregate's version only.
  service.outbox.bindWriter(serviceFunction(service.stack, 'VersionedWriter'), { sequenceCounter: false });
  service.outbox.addAdminApi(new apigateway.RestApi(service.stack, 'Api', { cloudWatchRole: false }));
  const json = templateOf(service.stack);
  const target = (token: string) => resolvedTarget(service.stack, token);
  return {
    ...service,
    json,
    outboxTable: target(service.outbox.table.tableName),
    ordersInbox: target(orders.inboxTable.tableName),
    paymentsInbox: target(payments.inboxTable.tableName),
    ordersQueue: target(orders.queue.queue.queueUrl),
    ordersDeadLetters: target(orders.queue.deadLetterQueue.queueUrl),
    paymentsQueue: target(payments.queue.queue.queueUrl),
  };
}

/** What `app.synth()` says about the service, or `undefined` when it synthesizes. */
function synthError(service: OutboxService): string | undefined {
  try {
    service.app.synth();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The logical id of an alarm of the outbox. */
function alarmId(stack: Stack, alarm: cloudwatch.Alarm | undefined): string {
  if (alarm === undefined) throw new Error('no such alarm');
  return String(stack.resolve((alarm.node.defaultChild as cloudwatch.CfnAlarm).logicalId));
}

const statementsOf = (json: CfnTemplate, name: string) => roleStatements(json, functionId(json, name));

let ordered: ReturnType<typeof orderedService>;
let unordered: ReturnType<typeof orderedService>;
/** The sequence table's logical id in `ordered`. */
let sequences: string;

beforeAll(() => {
  ordered = orderedService({ ordering: ORDERING });
  unordered = orderedService({ queues: { ...QUEUES, orders: { ...QUEUES.orders, fifo: false } } });
  const table = ordered.outbox.sequenceTable;
  if (table === undefined) throw new Error('no sequence table');
  sequences = resolvedTarget(ordered.stack, table.tableName);
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox ordering', () => {
  describe('with ordered topics', () => {
    it('adds the sequence table: keyed by order key, on demand, PITR, retained, no stream and no TTL', () => {
      const tables = idsOfType(ordered.json, 'AWS::DynamoDB::Table');
      // The outbox, the audit table, two inboxes and the sequence table.
      expect(tables).toHaveLength(5);
      expect(propertiesOf(ordered.json, sequences)).toEqual({
        KeySchema: [{ AttributeName: 'orderKey', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'orderKey', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
      expect(resource(ordered.json, sequences).DeletionPolicy).toBe('Retain');
    });

    it('gives the outbox table the sparse keys-only byOrderKey index, sorted by a numeric seq', () => {
      const table = propertiesOf(ordered.json, ordered.outboxTable);
      const index = (table.GlobalSecondaryIndexes as { IndexName: string }[]).find(
        (candidate) => candidate.IndexName === OUTBOX_KEYS.orderIndex.name,
      );
      expect(index).toEqual({
        IndexName: 'byOrderKey',
        KeySchema: [
          { AttributeName: 'orderKey', KeyType: 'HASH' },
          { AttributeName: 'seq', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      });
      expect(table.AttributeDefinitions).toEqual(
        expect.arrayContaining([
          { AttributeName: 'orderKey', AttributeType: 'S' },
          { AttributeName: 'seq', AttributeType: 'N' },
        ]),
      );
    });

    it.each(FUNCTIONS)('gives %s the ordered topics with their scope and gap timeout in ms', (name) => {
      const env = deployedEnvironment(ordered.json, functionId(ordered.json, name));
      expect(readSetting(env, OutboxSettings.orderedTopics)).toEqual({
        'order.created': { scope: 'order', gapTimeoutMs: 600_000, sequence: 'counter' },
        'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'counter' },
      });
      expect(ordered.outbox.orderedTopics).toEqual(readSetting(env, OutboxSettings.orderedTopics));
    });

    it('gives a writer the sequence table, with GetItem and UpdateItem on it and nothing else', () => {
      const env = deployedEnvironment(ordered.json, functionId(ordered.json, 'Writer'));
      expect(readSetting(env, OutboxSettings.sequenceTable)).toBe(`deployed-${sequences}`);
      expect(grantsOn(statementsOf(ordered.json, 'Writer'), sequences)).toEqual([
        'dynamodb:GetItem on Arn',
        'dynamodb:UpdateItem on Arn',
      ]);
      for (const name of FUNCTIONS.filter((candidate) => candidate !== 'Writer')) {
        expect(grantsOn(statementsOf(ordered.json, name), sequences), name).toEqual([]);
      }
    });

    it('gives a writer that numbers by aggregate version neither the sequence table nor a grant on it', () => {
      const json = ordered.json;
      const environment = environmentOf(json, functionId(json, 'VersionedWriter'));
      expect(environment).not.toHaveProperty(OutboxSettings.sequenceTable.name);
      expect(environment).toHaveProperty(OutboxSettings.orderedTopics.name);
      expect(grantsOn(statementsOf(json, 'VersionedWriter'), sequences)).toEqual([]);
    });

    it('adds no sequence table, for any writer, when every ordered scope is numbered by aggregate version', () => {
      const service = outboxService({
        queues: QUEUES,
        ordering: {
          'order.created': { scope: 'order', sequence: 'aggregate-version' },
          'order.cancelled': { scope: 'order', sequence: 'aggregate-version' },
        },
      });
      const writer = serviceFunction(service.stack, 'Writer');
      service.outbox.bindWriter(writer);

      expect(service.outbox.sequenceTable).toBeUndefined();
      const env = deployedEnvironment(
        templateOf(service.stack),
        functionId(templateOf(service.stack), 'Writer'),
      );
      expect(env).not.toHaveProperty(OutboxSettings.sequenceTable.name);
      expect(readSetting(env, OutboxSettings.orderedTopics)).toMatchObject({
        'order.created': { sequence: 'aggregate-version' },
      });
    });

    it('adds no sequence table while every writer numbers by aggregate version', () => {
      const service = outboxService({ queues: QUEUES, ordering: ORDERING });
      service.outbox.bindWriter(serviceFunction(service.stack, 'VersionedWriter'), {
        sequenceCounter: false,
      });
      expect(service.outbox.sequenceTable).toBeUndefined();
      service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
      expect(service.outbox.sequenceTable).toBeDefined();
    });

    it('lets the sweeper query the byOrderKey index and read a predecessor’s status', () => {
      expect(grantsOn(statementsOf(ordered.json, 'Outbox/Sweeper'), ordered.outboxTable)).toEqual([
        'dynamodb:GetItem on Arn',
        'dynamodb:Query on index/attention',
        'dynamodb:Query on index/byOrderKey',
        'dynamodb:Query on index/due',
        'dynamodb:UpdateItem on Arn',
      ]);
    });

    it('lets the consumer of ordered topics keep its cursor and parked messages in its inbox', () => {
      expect(grantsOn(statementsOf(ordered.json, 'Outbox/OrderConsumer'), ordered.ordersInbox)).toEqual([
        'dynamodb:ConditionCheckItem on Arn',
        'dynamodb:DeleteItem on Arn',
        'dynamodb:GetItem on Arn',
        'dynamodb:PutItem on Arn',
        'dynamodb:UpdateItem on Arn',
      ]);
      // A consumer whose queue carries no ordered topic only records what it applied.
      expect(grantsOn(statementsOf(ordered.json, 'Outbox/PaymentConsumer'), ordered.paymentsInbox)).toEqual([
        'dynamodb:PutItem on Arn',
      ]);
    });

    it('lets the admin find a message by order key and move the cursors of the ordered topics’ consumers only', () => {
      const statements = statementsOf(ordered.json, 'Outbox/Admin');
      expect(grantsOn(statements, ordered.outboxTable)).toContain('dynamodb:Query on index/byOrderKey');
      expect(grantsOn(statements, ordered.ordersInbox)).toEqual(
        expect.arrayContaining(['dynamodb:GetItem on Arn', 'dynamodb:UpdateItem on Arn']),
      );
      expect(grantsOn(statements, ordered.paymentsInbox)).not.toContain('dynamodb:UpdateItem on Arn');
      expect(grantsOn(statementsOf(unordered.json, 'Outbox/Admin'), unordered.outboxTable)).not.toContain(
        'dynamodb:Query on index/byOrderKey',
      );
    });

    it('alarms on the sweeper’s OrderingGaps of each ordered topic, and of no other', () => {
      const names = Object.keys(ordered.outbox.alarms).filter((name) => name.startsWith('orderingGaps/'));
      expect(names.sort()).toEqual(['orderingGaps/order.cancelled', 'orderingGaps/order.created']);
      const alarm = propertiesOf(
        ordered.json,
        alarmId(ordered.stack, ordered.outbox.alarms['orderingGaps/order.created']),
      );
      expect(alarm).toMatchObject({
        Namespace: 'ServerlessOutbox',
        MetricName: 'OrderingGaps',
        Dimensions: expect.arrayContaining([
          { Name: 'service', Value: 'outbox-sweeper' },
          { Name: 'topic', Value: 'order.created' },
        ]),
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      expect(JSON.stringify(alarm.AlarmName)).toContain('orderingGaps-order.created');
      expect(String(alarm.AlarmDescription)).toMatch(/npx outbox skip --order-key/);
    });

    it('draws each ordered topic’s gaps on the dashboard', () => {
      const body = JSON.stringify(
        propertiesOf(ordered.json, idsOfType(ordered.json, 'AWS::CloudWatch::Dashboard')[0] ?? '')
          .DashboardBody,
      );
      expect(body).toContain('order.created: ordering gaps');
      expect(body).toContain('order.cancelled: ordering gaps');
      expect(body).not.toContain('payment.captured: ordering gaps');
    });
  });

  describe('a FIFO queue', () => {
    it('is FIFO with a FIFO dead-letter queue, without content-based deduplication', () => {
      expect(propertiesOf(ordered.json, ordered.ordersQueue)).toMatchObject({ FifoQueue: true });
      expect(propertiesOf(ordered.json, ordered.ordersQueue).ContentBasedDeduplication).toBeUndefined();
      expect(propertiesOf(ordered.json, ordered.ordersDeadLetters)).toMatchObject({ FifoQueue: true });
      expect(propertiesOf(ordered.json, ordered.paymentsQueue).FifoQueue).toBeUndefined();
    });

    it('feeds its consumer batches of at most 10 without a batching window, which Lambda refuses on FIFO', () => {
      const mapping = mappingFrom(ordered.json, ordered.ordersQueue);
      expect(mapping.BatchSize).toBe(10);
      expect(mapping).not.toHaveProperty('MaximumBatchingWindowInSeconds');
      expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      const standard = mappingFrom(ordered.json, ordered.paymentsQueue);
      expect(standard.MaximumBatchingWindowInSeconds).toBe(1);
    });
  });

  describe('without ordered topics', () => {
    it('adds no sequence table and no ordering setting, grant or alarm', () => {
      expect(unordered.outbox.sequenceTable).toBeUndefined();
      expect(unordered.outbox.orderedTopics).toEqual({});
      // The outbox, the audit table and two inboxes.
      expect(idsOfType(unordered.json, 'AWS::DynamoDB::Table')).toHaveLength(4);
      for (const name of FUNCTIONS) {
        const environment = environmentOf(unordered.json, functionId(unordered.json, name));
        expect(environment, name).not.toHaveProperty(OutboxSettings.orderedTopics.name);
        expect(environment, name).not.toHaveProperty(OutboxSettings.sequenceTable.name);
      }
      expect(grantsOn(statementsOf(unordered.json, 'Outbox/Sweeper'), unordered.outboxTable)).not.toContain(
        'dynamodb:Query on index/byOrderKey',
      );
      expect(grantsOn(statementsOf(unordered.json, 'Outbox/OrderConsumer'), unordered.ordersInbox)).toEqual([
        'dynamodb:PutItem on Arn',
      ]);
      expect(Object.keys(unordered.outbox.alarms).filter((name) => name.startsWith('orderingGaps/'))).toEqual(
        [],
      );
    });
  });

  describe('validation at synth', () => {
    const refusal = (props: Partial<TransactionalOutboxProps>) =>
      synthError(outboxService({ queues: QUEUES, ...props }));

    it('refuses an ordered topic that no queue carries', () => {
      expect(refusal({ ordering: { 'order.shipped': { scope: 'order' } } })).toMatch(
        /ordering names topic 'order\.shipped', which no queue or subscriber carries/,
      );
    });

    it('refuses the topics of one scope on different queues, naming each topic’s queue', () => {
      expect(
        refusal({
          ordering: { 'order.created': { scope: 'order' }, 'payment.captured': { scope: 'order' } },
        }),
      ).toMatch(
        /ordering scope 'order': its topics go to different queues \(order\.created → orders, payment\.captured → payments\)/,
      );
    });

    it('refuses a scope whose topics take their seqs from two sources, naming the topics of each', () => {
      expect(
        refusal({
          ordering: {
            'order.created': { scope: 'order', sequence: 'aggregate-version' },
            'order.cancelled': { scope: 'order' },
          },
        }),
      ).toMatch(
        /ordering scope 'order' takes its seqs from two sources \(counter: order\.cancelled; aggregate-version: order\.created\)/,
      );
    });

    it('refuses a seq source it does not know', () => {
      expect(
        refusal({ ordering: { 'order.created': { scope: 'order', sequence: 'timestamp' as never } } }),
      ).toMatch(
        /ordering\['order\.created'\]\.sequence must be 'counter' or 'aggregate-version', got 'timestamp'/,
      );
    });

    it('refuses a scope the order key cannot carry', () => {
      expect(refusal({ ordering: { 'order.created': { scope: 'Order#1' } } })).toMatch(
        /ordering\['order\.created'\]\.scope must be 1–32 lowercase letters, digits or -.*got 'Order#1'/,
      );
    });

    it.each([
      ['shorter than a second', Duration.millis(500)],
      ['longer than 12 hours', Duration.hours(13)],
    ])('refuses a gap timeout %s', (_case, gapTimeout) => {
      expect(refusal({ ordering: { 'order.created': { scope: 'order', gapTimeout } } })).toMatch(
        /ordering\['order\.created'\]\.gapTimeout must be a whole number of ms from 1 s to 12 h/,
      );
    });

    it('accepts the bounds of the gap timeout', () => {
      expect(
        refusal({
          ordering: {
            'order.created': { scope: 'order', gapTimeout: Duration.seconds(1) },
            'order.cancelled': { scope: 'order', gapTimeout: Duration.hours(12) },
          },
        }),
      ).toBeUndefined();
    });

    it('refuses a batching window or a batch over 10 on a FIFO queue’s consumer', () => {
      const service = outboxService({ queues: QUEUES });
      service.outbox.addConsumer('OrderConsumer', {
        queue: 'orders',
        entry: CONSUMER_ENTRY,
        batchSize: 20,
        maxBatchingWindow: Duration.seconds(5),
      });
      const error = synthError(service);
      expect(error).toMatch(
        /consumer OrderConsumer: queue 'orders' is FIFO, so batchSize must be at most 10/,
      );
      expect(error).toMatch(
        /consumer OrderConsumer: queue 'orders' is FIFO, and Lambda takes no maxBatchingWindow/,
      );
    });
  });
});
