import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import {
  entryOf,
  environmentOf,
  functionId,
  grantsOn,
  idByName,
  idsOfType,
  mappingFrom,
  propertiesOf,
  renderString,
  resolvedTarget,
  resource,
  roleStatements,
  ruleTargeting,
  SYNTH_TIMEOUT_MS,
  templateOf,
  XRAY_STATEMENT,
} from '../template-queries.ts';
import {
  actionsOnArn,
  CONSUMER_ENTRY,
  type OutboxService,
  outboxService,
  serviceFunction,
  WRITER_ENTRY,
} from './outbox-service.ts';

/** The logical id of the queue (or dead-letter queue) whose URL is `url`. */
const queueId = (stack: Stack, url: string) => resolvedTarget(stack, url);

/** The outbox's own queues of a service: the topic queue `name`, its DLQ, and the relay failure queue. */
function queueIds({ stack, outbox }: OutboxService, name = 'orderEvents') {
  const queue = outbox.queues[name];
  if (queue === undefined) throw new Error(`no queue ${name}`);
  return {
    queue: queueId(stack, queue.queue.queueUrl),
    deadLetters: queueId(stack, queue.deadLetterQueue.queueUrl),
    failure: queueId(stack, outbox.failureQueue.queueUrl),
  };
}

/** Sending is SendMessage alone: nothing the outbox runs reads a queue's URL or attributes. */
const SEND = ['sqs:SendMessage on Arn'];
const STREAM_READ = [
  'dynamodb:DescribeStream on StreamArn',
  'dynamodb:GetRecords on StreamArn',
  'dynamodb:GetShardIterator on StreamArn',
];

// The first synthesis of a process loads most of aws-cdk-lib; the tests below then take about a second each.
beforeAll(() => {
  templateOf(outboxService().stack);
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox', () => {
  describe('outbox table', () => {
    it('is keyed by message id, streams new and old images, and has the due, byAggregate, attention and byOrderKey indexes', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      const table = propertiesOf(json, resolvedTarget(service.stack, service.outbox.table.tableName));
      expect(table).toMatchObject({
        KeySchema: [{ AttributeName: 'messageId', KeyType: 'HASH' }],
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
      expect(
        (table.GlobalSecondaryIndexes as { IndexName: string }[]).map((index) => index.IndexName),
      ).toEqual(['due', 'byAggregate', 'attention', 'byOrderKey']);
      // byAggregate holds keys only (readers read each message by key): a status change never rewrites it.
      expect(
        (table.GlobalSecondaryIndexes as { IndexName: string; Projection: unknown }[]).find(
          (index) => index.IndexName === 'byAggregate',
        )?.Projection,
      ).toEqual({ ProjectionType: 'KEYS_ONLY' });
      expect(service.outbox.streamArn).toBe(service.outbox.table.tableStreamArn);
    });

    it('outlives the stack by default: it holds the only copy of an undelivered message', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      expect(
        resource(json, resolvedTarget(service.stack, service.outbox.table.tableName)).DeletionPolicy,
      ).toBe('Retain');
      for (const id of idsOfType(json, 'AWS::Logs::LogGroup'))
        expect(resource(json, id).DeletionPolicy).toBe('Retain');
    });

    it('applies removalPolicy to the tables, log groups and keys it creates', () => {
      const service = outboxService({ removalPolicy: RemovalPolicy.DESTROY });
      service.outbox.addConsumer('Consumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
      const json = templateOf(service.stack);
      const owned = [
        ...idsOfType(json, 'AWS::DynamoDB::Table'),
        ...idsOfType(json, 'AWS::Logs::LogGroup'),
        ...idsOfType(json, 'AWS::KMS::Key'),
      ];
      // The outbox, the inbox and the audit table; three functions' log groups; the alarm topic's key.
      expect(owned).toHaveLength(3 + 3 + 1);
      for (const id of owned) expect(resource(json, id).DeletionPolicy, id).toBe('Delete');
    });

    it('merges outboxTableProps over the defaults, keeping the key, stream, indexes and TTL', () => {
      const service = outboxService({
        outboxTableProps: {
          tableName: 'orders-outbox',
          deletionProtection: true,
          tableClass: dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS,
        },
      });
      const json = templateOf(service.stack);
      const table = propertiesOf(json, resolvedTarget(service.stack, service.outbox.table.tableName));
      expect(table).toMatchObject({
        TableName: 'orders-outbox',
        DeletionProtectionEnabled: true,
        TableClass: 'STANDARD_INFREQUENT_ACCESS',
        KeySchema: [{ AttributeName: 'messageId', KeyType: 'HASH' }],
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
      expect(table.GlobalSecondaryIndexes).toHaveLength(4);
    });

    describe('existingOutboxTable', () => {
      const STREAM_ARN =
        'arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox/stream/2026-01-01T00:00:00.000';
      const withExisting = () => {
        let existing: dynamodb.ITable | undefined;
        const service = outboxService({}, (stack) => {
          existing = dynamodb.Table.fromTableAttributes(stack, 'ExistingOutbox', {
            tableName: 'orders-outbox',
            tableStreamArn: STREAM_ARN,
          });
          return { existingOutboxTable: existing };
        });
        if (existing === undefined) throw new Error('no table');
        return { ...service, existing };
      };

      it('uses the table it is given and creates no outbox table', () => {
        const { stack, outbox, existing } = withExisting();
        const json = templateOf(stack);
        expect(outbox.table).toBe(existing);
        expect(idsOfType(json, 'AWS::DynamoDB::Table')).toEqual([
          resolvedTarget(stack, outbox.auditTable.tableName),
        ]);
      });

      it('relays from its stream and configures the relay and the sweeper with its name', () => {
        const { stack } = withExisting();
        const json = templateOf(stack);
        const [mapping] = idsOfType(json, 'AWS::Lambda::EventSourceMapping');
        expect(propertiesOf(json, mapping ?? '').EventSourceArn).toBe(STREAM_ARN);
        for (const name of ['Outbox/Relay', 'Outbox/Sweeper']) {
          expect(environmentOf(json, functionId(json, name)).OUTBOX_TABLE, name).toBe('orders-outbox');
        }
      });

      it('grants the relay and the sweeper what they need on that table', () => {
        const { stack, existing } = withExisting();
        const json = templateOf(stack);
        const tableArn = stack.resolve(existing.tableArn);
        const relay = roleStatements(json, functionId(json, 'Outbox/Relay'));
        expect(actionsOnArn(relay, tableArn)).toEqual(['dynamodb:UpdateItem']);
        expect(actionsOnArn(relay, STREAM_ARN)).toEqual([
          'dynamodb:DescribeStream',
          'dynamodb:GetRecords',
          'dynamodb:GetShardIterator',
        ]);
        const sweeper = roleStatements(json, functionId(json, 'Outbox/Sweeper'));
        expect(actionsOnArn(sweeper, tableArn)).toEqual(['dynamodb:UpdateItem']);
        expect(actionsOnArn(sweeper, stack.resolve(`${existing.tableArn}/index/due`))).toEqual([
          'dynamodb:Query',
        ]);
      });

      it('refuses a table without a stream, which the relay could not read', () => {
        expect(() =>
          outboxService({}, (stack) => ({
            existingOutboxTable: dynamodb.Table.fromTableName(stack, 'NoStream', 'orders-outbox'),
          })),
        ).toThrow(/no stream/);
      });
    });
  });

  describe('queues', () => {
    it('routes each topic to its queue, in the relay and the sweeper alike', () => {
      const service = outboxService({
        queues: {
          orders: { topics: ['order.created', 'order.cancelled'] },
          payments: { topics: ['payment.captured'] },
        },
      });
      const json = templateOf(service.stack);
      const orders = queueIds(service, 'orders').queue;
      const payments = queueIds(service, 'payments').queue;
      for (const name of ['Outbox/Relay', 'Outbox/Sweeper']) {
        const routes: unknown = JSON.parse(
          renderString(environmentOf(json, functionId(json, name)).TOPIC_QUEUES),
        );
        expect(routes, name).toEqual({
          'order.created': `\${${orders}}`,
          'order.cancelled': `\${${orders}}`,
          'payment.captured': `\${${payments}}`,
        });
      }
      expect(service.outbox.topicRoutes.get('payment.captured')).toBe(service.outbox.queues.payments?.queue);
    });

    it('takes the queue settings it is given', () => {
      const service = outboxService({
        queues: {
          orderEvents: {
            topics: ['order.created'],
            maxReceiveCount: 3,
            visibilityTimeout: Duration.minutes(5),
            retentionPeriod: Duration.days(2),
            deadLetterRetention: Duration.days(7),
          },
        },
      });
      const json = templateOf(service.stack);
      const { queue, deadLetters } = queueIds(service);
      expect(propertiesOf(json, queue)).toMatchObject({
        VisibilityTimeout: 300,
        MessageRetentionPeriod: 2 * 86_400,
        RedrivePolicy: { maxReceiveCount: 3, deadLetterTargetArn: { 'Fn::GetAtt': [deadLetters, 'Arn'] } },
      });
      expect(propertiesOf(json, deadLetters).MessageRetentionPeriod).toBe(7 * 86_400);
    });

    it('encrypts every queue and refuses plain HTTP to each', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      const ids = Object.values(queueIds(service));
      expect(idsOfType(json, 'AWS::SQS::Queue').sort()).toEqual([...ids].sort());
      for (const id of ids) {
        expect(propertiesOf(json, id).SqsManagedSseEnabled, id).toBe(true);
        const denies = idsOfType(json, 'AWS::SQS::QueuePolicy')
          .map((policyId) => propertiesOf(json, policyId))
          .filter((policy) => JSON.stringify(policy.Queues) === JSON.stringify([{ Ref: id }]))
          .flatMap((policy) => (policy.PolicyDocument as { Statement: unknown[] }).Statement);
        expect(denies, id).toContainEqual(
          expect.objectContaining({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        );
      }
    });

    it('sends stream batches the relay gave up on to the failure queue, kept 14 days', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      const mapping = mappingFrom(json, resolvedTarget(service.stack, service.outbox.table.tableName));
      const { failure } = queueIds(service);
      expect(mapping.DestinationConfig).toEqual({
        OnFailure: { Destination: { 'Fn::GetAtt': [failure, 'Arn'] } },
      });
      expect(propertiesOf(json, failure).MessageRetentionPeriod).toBe(14 * 86_400);
    });
  });

  describe('relay', () => {
    it('runs the shipped relay on Node 24 / ARM64 with the documented defaults', () => {
      const json = templateOf(outboxService().stack);
      const relay = functionId(json, 'Outbox/Relay');
      expect(propertiesOf(json, relay)).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: 30,
        MemorySize: 512,
      });
      expect(environmentOf(json, relay).POWERTOOLS_SERVICE_NAME).toBe('outbox-relay');
      expect(entryOf(json, relay)).toBe('shared/lambda/entries/relay.ts');
    });

    it('reads the stream from the oldest record, new messages only, with the documented settings', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      expect(mappingFrom(json, resolvedTarget(service.stack, service.outbox.table.tableName))).toMatchObject({
        FunctionName: { Ref: functionId(json, 'Outbox/Relay') },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 100,
        MaximumBatchingWindowInSeconds: 0,
        MaximumRetryAttempts: 10,
        MaximumRecordAgeInSeconds: 3600,
        BisectBatchOnFunctionError: true,
        ParallelizationFactor: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        FilterCriteria: { Filters: [{ Pattern: '{"eventName":["INSERT"]}' }] },
      });
    });

    it('takes the stream settings it is given', () => {
      const service = outboxService({
        streamProps: {
          batchSize: 10,
          maxBatchingWindow: Duration.seconds(5),
          retryAttempts: 2,
          maxRecordAge: Duration.minutes(10),
          bisectBatchOnError: false,
          parallelizationFactor: 4,
        },
      });
      const json = templateOf(service.stack);
      expect(mappingFrom(json, resolvedTarget(service.stack, service.outbox.table.tableName))).toMatchObject({
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 5,
        MaximumRetryAttempts: 2,
        MaximumRecordAgeInSeconds: 600,
        BisectBatchOnFunctionError: false,
        ParallelizationFactor: 4,
        FilterCriteria: { Filters: [{ Pattern: '{"eventName":["INSERT"]}' }] },
      });
    });

    it('merges relayFunctionProps over the defaults without losing the shipped handler or its settings', () => {
      const json = templateOf(
        outboxService({
          relayFunctionProps: {
            timeout: Duration.seconds(90),
            memorySize: 1024,
            description: 'relays the order outbox',
            environment: { EXTRA: 'kept', OUTBOX_TABLE: 'not-the-outbox' },
          },
        }).stack,
      );
      const relay = functionId(json, 'Outbox/Relay');
      expect(propertiesOf(json, relay)).toMatchObject({
        Timeout: 90,
        MemorySize: 1024,
        Description: 'relays the order outbox',
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
      });
      const environment = environmentOf(json, relay);
      expect(environment.EXTRA).toBe('kept');
      expect(environment.OUTBOX_TABLE).toEqual({ Ref: expect.any(String) });
      expect(Object.keys(environment)).toEqual(
        expect.arrayContaining(['TOPIC_QUEUES', 'RETRY_POLICIES', 'CONFIRM_DEADLINE_MS', 'RETENTION_DAYS']),
      );
      expect(entryOf(json, relay)).toBe('shared/lambda/entries/relay.ts');
    });

    // The shipped module exports `handler`; any other name would fail the function at its first invocation.
    it('keeps the shipped handler export whatever handler relayFunctionProps names', () => {
      const json = templateOf(outboxService({ relayFunctionProps: { handler: 'main' } }).stack);
      expect(propertiesOf(json, functionId(json, 'Outbox/Relay')).Handler).toBe('index.handler');
    });

    it('may only update outbox messages, read the stream, and send to the topic and failure queues', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      const statements = roleStatements(json, functionId(json, 'Outbox/Relay'));
      const { queue, deadLetters, failure } = queueIds(service);
      const table = resolvedTarget(service.stack, service.outbox.table.tableName);
      expect(grantsOn(statements, table)).toEqual(['dynamodb:UpdateItem on Arn', ...STREAM_READ].sort());
      expect(grantsOn(statements, queue)).toEqual(SEND);
      // Lambda sends a skipped batch's metadata to the on-failure destination with the function's role.
      expect(grantsOn(statements, failure)).toEqual(SEND);
      expect(grantsOn(statements, deadLetters)).toEqual([]);
    });
  });

  describe('sweeper', () => {
    it('runs the shipped sweeper every minute on Node 24 / ARM64, with its own log group', () => {
      const json = templateOf(outboxService().stack);
      const sweeper = functionId(json, 'Outbox/Sweeper');
      const properties = propertiesOf(json, sweeper);
      expect(properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: 60,
        MemorySize: 512,
      });
      const logGroup = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(resource(json, logGroup).Type).toBe('AWS::Logs::LogGroup');
      expect(environmentOf(json, sweeper).POWERTOOLS_SERVICE_NAME).toBe('outbox-sweeper');
      expect(entryOf(json, sweeper)).toBe('shared/lambda/entries/sweeper.ts');
      const rule = propertiesOf(json, ruleTargeting(json, sweeper));
      expect(rule.ScheduleExpression).toBe('rate(1 minute)');
      // A failed run is superseded by the next one: a couple of retries, not EventBridge's 185.
      expect(rule.Targets).toEqual([
        expect.objectContaining({ RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 300 } }),
      ]);
      expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(2);
    });

    it('runs on the schedule it is given', () => {
      const json = templateOf(
        outboxService({ sweeperSchedule: events.Schedule.rate(Duration.minutes(5)) }).stack,
      );
      const rule = propertiesOf(json, ruleTargeting(json, functionId(json, 'Outbox/Sweeper')));
      expect(rule.ScheduleExpression).toBe('rate(5 minutes)');
    });

    it('bounds a run draining a backlog at 600 messages a second unless told otherwise', () => {
      const defaults = templateOf(outboxService().stack);
      expect(
        environmentOf(defaults, functionId(defaults, 'Outbox/Sweeper')).SWEEPER_MAX_MESSAGES_PER_SECOND,
      ).toBe('600');
      const tuned = templateOf(outboxService({ sweeperMaxMessagesPerSecond: 2_000 }).stack);
      expect(environmentOf(tuned, functionId(tuned, 'Outbox/Sweeper')).SWEEPER_MAX_MESSAGES_PER_SECOND).toBe(
        '2000',
      );
    });

    it('merges sweeperFunctionProps over the defaults without losing the shipped handler or its settings', () => {
      const service = outboxService(
        {
          dueShards: 16,
        },
        (stack) => ({
          sweeperFunctionProps: {
            timeout: Duration.minutes(2),
            memorySize: 1024,
            environment: { EXTRA: 'kept', DUE_SHARDS: '1', POWERTOOLS_LOG_LEVEL: 'DEBUG' },
            logGroup: new logs.LogGroup(stack, 'SweeperLogs', { retention: logs.RetentionDays.ONE_WEEK }),
          },
        }),
      );
      const json = templateOf(service.stack);
      const sweeper = functionId(json, 'Outbox/Sweeper');
      expect(propertiesOf(json, sweeper)).toMatchObject({
        Timeout: 120,
        MemorySize: 1024,
        LoggingConfig: {
          LogGroup: { Ref: idByName(json, { type: 'AWS::Logs::LogGroup', name: 'SweeperLogs' }) },
        },
      });
      expect(environmentOf(json, sweeper)).toMatchObject({
        EXTRA: 'kept',
        DUE_SHARDS: '16',
        POWERTOOLS_LOG_LEVEL: 'DEBUG',
        POWERTOOLS_SERVICE_NAME: 'outbox-sweeper',
      });
      expect(Object.keys(environmentOf(json, sweeper))).toEqual(
        expect.arrayContaining(['OUTBOX_TABLE', 'TOPIC_QUEUES', 'DELIVERY_INBOXES', 'RETRY_POLICIES']),
      );
      expect(entryOf(json, sweeper)).toBe('shared/lambda/entries/sweeper.ts');
      // The log group it was given replaces the sweeper's own.
      expect(idsOfType(json, 'AWS::Logs::LogGroup')).toHaveLength(2);
    });

    it('shares the outbox table, routes, retry policies, deadline and retention with the relay', () => {
      const json = templateOf(
        outboxService({
          retryPolicies: { 'order.created': { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 } },
          confirmDeadline: Duration.minutes(2),
          retention: Duration.days(7),
        }).stack,
      );
      const relay = environmentOf(json, functionId(json, 'Outbox/Relay'));
      const sweeper = environmentOf(json, functionId(json, 'Outbox/Sweeper'));
      for (const name of [
        'OUTBOX_TABLE',
        'TOPIC_QUEUES',
        'RETRY_POLICIES',
        'CONFIRM_DEADLINE_MS',
        'RETENTION_DAYS',
      ]) {
        expect(sweeper[name], name).toEqual(relay[name]);
      }
      expect(JSON.parse(String(sweeper.RETRY_POLICIES))).toEqual({
        'order.created': { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 },
      });
      expect(sweeper.CONFIRM_DEADLINE_MS).toBe('120000');
      expect(sweeper.RETENTION_DAYS).toBe('7');
    });

    it('configures the documented defaults: no per-topic policy, a 5-minute deadline, 8 shards, no inboxes', () => {
      const json = templateOf(outboxService().stack);
      expect(environmentOf(json, functionId(json, 'Outbox/Sweeper'))).toMatchObject({
        RETRY_POLICIES: '{}',
        CONFIRM_DEADLINE_MS: String(DEFAULT_CONFIRM_DEADLINE_MS),
        DUE_SHARDS: '8',
        RETENTION_DAYS: '30',
      });
      // Without consumers no topic has a reconciliation check: unconfirmed messages are resent.
      const inboxes = environmentOf(json, functionId(json, 'Outbox/Sweeper')).DELIVERY_INBOXES;
      expect(JSON.parse(renderString(inboxes))).toEqual({});
    });

    it('may query the due and attention indexes, update messages and send to the topic queues — nothing else', () => {
      const service = outboxService();
      const json = templateOf(service.stack);
      const statements = roleStatements(json, functionId(json, 'Outbox/Sweeper'));
      const { queue, deadLetters, failure } = queueIds(service);
      const table = resolvedTarget(service.stack, service.outbox.table.tableName);
      expect(grantsOn(statements, table)).toEqual([
        'dynamodb:Query on index/attention',
        'dynamodb:Query on index/due',
        'dynamodb:UpdateItem on Arn',
      ]);
      expect(grantsOn(statements, queue)).toEqual(SEND);
      expect(grantsOn(statements, deadLetters)).toEqual([]);
      expect(grantsOn(statements, failure)).toEqual([]);
    });
  });

  describe('addConsumer', () => {
    const withConsumer = (
      options: Partial<Parameters<OutboxService['outbox']['addConsumer']>[1]> = {},
      props: Parameters<typeof outboxService>[0] = {},
    ) => {
      const service = outboxService(props);
      const consumer = service.outbox.addConsumer('Consumer', {
        queue: 'orderEvents',
        entry: CONSUMER_ENTRY,
        ...options,
      });
      return { ...service, consumer, json: templateOf(service.stack) };
    };

    it('builds the consumer from its entry, with the defaults and its own log group', () => {
      const { json } = withConsumer();
      const consumer = functionId(json, 'Outbox/Consumer');
      expect(propertiesOf(json, consumer)).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: 30,
        MemorySize: 256,
      });
      expect(entryOf(json, consumer)).toBe('test/infra/constructs/fixtures/consumer-handler.ts');
      expect(environmentOf(json, consumer).POWERTOOLS_SERVICE_NAME).toBe('consumer');
    });

    it('creates an inbox keyed by message id that expires its rows', () => {
      const { stack, consumer, json } = withConsumer();
      expect(propertiesOf(json, resolvedTarget(stack, consumer.inboxTable.tableName))).toMatchObject({
        KeySchema: [{ AttributeName: 'messageId', KeyType: 'HASH' }],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    });

    it('feeds its queue to it with partial batch failures', () => {
      const service = withConsumer();
      expect(mappingFrom(service.json, queueIds(service).queue)).toMatchObject({
        FunctionName: { Ref: functionId(service.json, 'Outbox/Consumer') },
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    });

    it('takes the batch settings, retention and function props it is given, keeping its settings', () => {
      const service = withConsumer({
        batchSize: 5,
        maxBatchingWindow: Duration.seconds(3),
        inboxRetention: Duration.days(60),
        functionProps: {
          timeout: Duration.seconds(60),
          memorySize: 512,
          environment: { STOCK_TABLE: 'stock' },
        },
      });
      const consumer = functionId(service.json, 'Outbox/Consumer');
      expect(propertiesOf(service.json, consumer)).toMatchObject({ Timeout: 60, MemorySize: 512 });
      expect(environmentOf(service.json, consumer)).toMatchObject({
        STOCK_TABLE: 'stock',
        INBOX_RETENTION_DAYS: '60',
        INBOX_TABLE: { Ref: resolvedTarget(service.stack, service.consumer.inboxTable.tableName) },
      });
      expect(mappingFrom(service.json, queueIds(service).queue)).toMatchObject({
        BatchSize: 5,
        MaximumBatchingWindowInSeconds: 3,
      });
    });

    it('gives the consumer its inbox, its queue, the queue’s DLQ and redrive count, and the outbox', () => {
      const service = withConsumer(
        {},
        { queues: { orderEvents: { topics: ['order.created'], maxReceiveCount: 3 } } },
      );
      const { queue, deadLetters } = queueIds(service);
      expect(environmentOf(service.json, functionId(service.json, 'Outbox/Consumer'))).toMatchObject({
        INBOX_TABLE: { Ref: resolvedTarget(service.stack, service.consumer.inboxTable.tableName) },
        SOURCE_QUEUE_URL: { Ref: queue },
        DEAD_LETTER_QUEUE_URL: { Ref: deadLetters },
        MAX_RECEIVE_COUNT: '3',
        OUTBOX_TABLE: { Ref: resolvedTarget(service.stack, service.outbox.table.tableName) },
        RETENTION_DAYS: '30',
        INBOX_RETENTION_DAYS: '30',
      });
    });

    it('may put inbox rows, confirm outbox messages, consume its queue and dead-letter — nothing else', () => {
      const service = withConsumer();
      const statements = roleStatements(service.json, functionId(service.json, 'Outbox/Consumer'));
      const { queue, deadLetters, failure } = queueIds(service);
      expect(
        grantsOn(statements, resolvedTarget(service.stack, service.consumer.inboxTable.tableName)),
      ).toEqual(['dynamodb:PutItem on Arn']);
      expect(grantsOn(statements, resolvedTarget(service.stack, service.outbox.table.tableName))).toEqual([
        'dynamodb:UpdateItem on Arn',
      ]);
      expect(grantsOn(statements, queue)).toEqual([
        'sqs:ChangeMessageVisibility on Arn',
        'sqs:DeleteMessage on Arn',
        'sqs:GetQueueAttributes on Arn',
        'sqs:ReceiveMessage on Arn',
      ]);
      expect(grantsOn(statements, deadLetters)).toEqual(SEND);
      expect(grantsOn(statements, failure)).toEqual([]);
    });

    it('registers its inbox as the proof of delivery of its queue’s topics, which the sweeper may only read', () => {
      const service = outboxService({
        queues: {
          orders: { topics: ['order.created', 'order.cancelled'] },
          payments: { topics: ['payment.captured'] },
        },
      });
      const consumer = service.outbox.addConsumer('OrderConsumer', {
        queue: 'orders',
        entry: CONSUMER_ENTRY,
      });
      const json = templateOf(service.stack);
      const sweeper = functionId(json, 'Outbox/Sweeper');
      const inbox = resolvedTarget(service.stack, consumer.inboxTable.tableName);
      expect(JSON.parse(renderString(environmentOf(json, sweeper).DELIVERY_INBOXES))).toEqual({
        'order.created': `\${${inbox}}`,
        'order.cancelled': `\${${inbox}}`,
      });
      expect(grantsOn(roleStatements(json, sweeper), inbox)).toEqual(['dynamodb:GetItem on Arn']);
    });

    it('uses an existingInboxTable instead of creating one', () => {
      const service = outboxService();
      const inbox = dynamodb.Table.fromTableName(service.stack, 'PaymentsInbox', 'payments-inbox');
      service.outbox.addConsumer('Consumer', {
        queue: 'orderEvents',
        entry: CONSUMER_ENTRY,
        existingInboxTable: inbox,
      });
      const json = templateOf(service.stack);
      expect(idsOfType(json, 'AWS::DynamoDB::Table').sort()).toEqual(
        [
          resolvedTarget(service.stack, service.outbox.table.tableName),
          resolvedTarget(service.stack, service.outbox.auditTable.tableName),
        ].sort(),
      );
      const consumer = functionId(json, 'Outbox/Consumer');
      const sweeper = functionId(json, 'Outbox/Sweeper');
      expect(environmentOf(json, consumer).INBOX_TABLE).toBe('payments-inbox');
      expect(JSON.parse(renderString(environmentOf(json, sweeper).DELIVERY_INBOXES))).toEqual({
        'order.created': 'payments-inbox',
      });
      const inboxArn = service.stack.resolve(inbox.tableArn);
      expect(actionsOnArn(roleStatements(json, consumer), inboxArn)).toEqual(['dynamodb:PutItem']);
      expect(actionsOnArn(roleStatements(json, sweeper), inboxArn)).toEqual(['dynamodb:GetItem']);
    });

    it('merges inboxTableProps over the inbox defaults, keeping the key and TTL', () => {
      const { stack, consumer, json } = withConsumer({
        inboxTableProps: { tableName: 'inventory-inbox', deletionProtection: true },
      });
      expect(propertiesOf(json, resolvedTarget(stack, consumer.inboxTable.tableName))).toMatchObject({
        TableName: 'inventory-inbox',
        DeletionProtectionEnabled: true,
        KeySchema: [{ AttributeName: 'messageId', KeyType: 'HASH' }],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      });
    });

    it('with confirm: false, neither tells it the outbox nor lets it touch the outbox', () => {
      const service = withConsumer({ confirm: false });
      const consumer = functionId(service.json, 'Outbox/Consumer');
      const environment = environmentOf(service.json, consumer);
      expect(environment.OUTBOX_TABLE).toBeUndefined();
      expect(environment.RETENTION_DAYS).toBeUndefined();
      const table = resolvedTarget(service.stack, service.outbox.table.tableName);
      expect(grantsOn(roleStatements(service.json, consumer), table)).toEqual([]);
    });

    it('with reconcile: false, keeps its inbox out of the sweeper’s delivery checks and reach', () => {
      const service = outboxService({
        queues: { orders: { topics: ['order.created'] }, payments: { topics: ['payment.captured'] } },
      });
      const quiet = service.outbox.addConsumer('Quiet', {
        queue: 'orders',
        entry: CONSUMER_ENTRY,
        reconcile: false,
      });
      const checked = service.outbox.addConsumer('Checked', { queue: 'payments', entry: CONSUMER_ENTRY });
      const json = templateOf(service.stack);
      const sweeper = functionId(json, 'Outbox/Sweeper');
      const checkedInbox = resolvedTarget(service.stack, checked.inboxTable.tableName);
      expect(JSON.parse(renderString(environmentOf(json, sweeper).DELIVERY_INBOXES))).toEqual({
        'payment.captured': `\${${checkedInbox}}`,
      });
      const statements = roleStatements(json, sweeper);
      expect(grantsOn(statements, resolvedTarget(service.stack, quiet.inboxTable.tableName))).toEqual([]);
      expect(grantsOn(statements, checkedInbox)).toEqual(['dynamodb:GetItem on Arn']);
    });

    it('refuses a queue the outbox does not have, naming the ones it has', () => {
      const { outbox } = outboxService();
      expect(() => outbox.addConsumer('Consumer', { queue: 'payments', entry: CONSUMER_ENTRY })).toThrow(
        /queue 'payments'.*orderEvents/,
      );
    });
  });

  describe('bindWriter', () => {
    it('tells the writer the outbox table, the sweeper’s shard count and the stream grace period', () => {
      const service = outboxService({ dueShards: 16, streamGracePeriod: Duration.seconds(30) });
      service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
      const json = templateOf(service.stack);
      const writer = environmentOf(json, functionId(json, 'Writer'));
      expect(writer).toMatchObject({
        OUTBOX_TABLE: { Ref: resolvedTarget(service.stack, service.outbox.table.tableName) },
        DUE_SHARDS: '16',
        STREAM_GRACE_MS: '30000',
      });
      expect(writer.DUE_SHARDS).toBe(environmentOf(json, functionId(json, 'Outbox/Sweeper')).DUE_SHARDS);
    });

    it('lets the writer put messages into the outbox and do nothing else there', () => {
      const service = outboxService();
      service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
      const json = templateOf(service.stack);
      const statements = roleStatements(json, functionId(json, 'Writer'));
      const table = resolvedTarget(service.stack, service.outbox.table.tableName);
      expect(grantsOn(statements, table)).toEqual(['dynamodb:PutItem on Arn']);
      // Besides X-Ray and its own log group: the outbox item, and a large payload's object in the claim check.
      expect(statements).toEqual([
        XRAY_STATEMENT,
        expect.objectContaining({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'] }),
        expect.objectContaining({ Action: 'dynamodb:PutItem' }),
        expect.objectContaining({ Action: 's3:PutObject' }),
      ]);
    });
  });

  describe('bindReader', () => {
    it('tells the reader the outbox table and lets it query the byAggregate index and read messages by key only', () => {
      const service = outboxService();
      service.outbox.bindReader(serviceFunction(service.stack, 'Reader'));
      const json = templateOf(service.stack);
      const reader = functionId(json, 'Reader');
      const table = resolvedTarget(service.stack, service.outbox.table.tableName);
      expect(environmentOf(json, reader).OUTBOX_TABLE).toEqual({ Ref: table });
      expect(environmentOf(json, reader).DUE_SHARDS).toBeUndefined();
      expect(grantsOn(roleStatements(json, reader), table).sort()).toEqual([
        'dynamodb:GetItem on Arn',
        'dynamodb:Query on index/byAggregate',
      ]);
    });
  });

  it('records an existing handler module for every function it builds', () => {
    const service = outboxService();
    service.outbox.addConsumer('Consumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
    service.outbox.bindWriter(serviceFunction(service.stack, 'Writer', { entry: WRITER_ENTRY }));
    const json = templateOf(service.stack);
    const functions = idsOfType(json, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(4);
    for (const id of functions) {
      const entry = entryOf(json, id);
      expect(entry, id).toMatch(/\.ts$/);
      expect(existsSync(resolve(entry ?? '')), entry).toBe(true);
    }
  });
});
