import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorResponse } from '../../../functions/http/responses.ts';
import { stockRequestSchema } from '../../../functions/inventory/put-stock/stock-request.ts';
import { cancelOrderRequestSchema } from '../../../functions/orders/cancel-order/cancel-request.ts';
import { orderRequestSchema } from '../../../functions/orders/create-order/order-request.ts';
import {
  CONSUMER_DEFAULTS,
  FUNCTION_DEFAULTS,
  OUTBOX_STREAM_DEFAULTS,
  QUEUE_DEFAULTS,
  RELAY_DEFAULTS,
  SCHEDULE_DEFAULTS,
  SWEEPER_DEFAULTS,
} from '../../../infra/constructs/defaults.ts';
import { ADMIN_DEFAULTS } from '../../../infra/constructs/outbox-admin-api.ts';
import { SUMMARY_ATTRIBUTES } from '../../../shared/admin/message-summary.ts';
import { INBOX_KEYS } from '../../../shared/aws/inbox-table.ts';
import { OUTBOX_KEYS } from '../../../shared/aws/outbox-table.ts';
import { OutboxMetricName } from '../../../shared/observability/metric-names.ts';
import { DEFAULT_GAP_TIMEOUT_MS } from '../../../shared/ordering/ordering.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import { redeliveryHorizonMs } from '../../../shared/outbox/redelivery-horizon.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import { buildSingleQueueExample } from '../../support/single-queue-example.ts';
import {
  type CfnTemplate,
  constructName,
  entryOf,
  environmentOf,
  functionId,
  idsByRole,
  idsOfType,
  mappingFrom,
  onlyId,
  outputTarget,
  propertiesOf,
  references,
  refTarget,
  renderString,
  resource,
  ruleTargeting,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';

let json: CfnTemplate;

beforeAll(() => {
  json = templateOf(buildSingleQueueExample());
}, SYNTH_TIMEOUT_MS);

/** The example's functions by the name the local runtime gives them, with what each is built from. */
const FUNCTIONS = {
  'Outbox/Relay': {
    service: 'outbox-relay',
    entry: 'shared/lambda/entries/relay.ts',
    timeout: RELAY_DEFAULTS.timeout.toSeconds(),
    memory: RELAY_DEFAULTS.memorySize,
  },
  'Outbox/Sweeper': {
    service: 'outbox-sweeper',
    entry: 'shared/lambda/entries/sweeper.ts',
    timeout: SWEEPER_DEFAULTS.timeout.toSeconds(),
    memory: SWEEPER_DEFAULTS.memorySize,
  },
  'Outbox/InventoryConsumer': {
    service: 'inventory-consumer',
    entry: 'functions/inventory/apply-order/handler.ts',
    timeout: CONSUMER_DEFAULTS.timeout.toSeconds(),
    memory: CONSUMER_DEFAULTS.memorySize,
  },
  CreateOrder: {
    service: 'create-order',
    entry: 'functions/orders/create-order/handler.ts',
    timeout: FUNCTION_DEFAULTS.timeout.toSeconds(),
    memory: FUNCTION_DEFAULTS.memorySize,
  },
  CancelOrder: {
    service: 'cancel-order',
    entry: 'functions/orders/cancel-order/handler.ts',
    timeout: FUNCTION_DEFAULTS.timeout.toSeconds(),
    memory: FUNCTION_DEFAULTS.memorySize,
  },
  GetOrder: {
    service: 'get-order',
    entry: 'functions/orders/get-order/handler.ts',
    timeout: FUNCTION_DEFAULTS.timeout.toSeconds(),
    memory: FUNCTION_DEFAULTS.memorySize,
  },
  PutStock: {
    service: 'put-stock',
    entry: 'functions/inventory/put-stock/handler.ts',
    timeout: FUNCTION_DEFAULTS.timeout.toSeconds(),
    memory: FUNCTION_DEFAULTS.memorySize,
  },
  GetStock: {
    service: 'get-stock',
    entry: 'functions/inventory/get-stock/handler.ts',
    timeout: FUNCTION_DEFAULTS.timeout.toSeconds(),
    memory: FUNCTION_DEFAULTS.memorySize,
  },
  'Outbox/Admin': {
    service: 'outbox-admin',
    entry: 'shared/lambda/entries/admin.ts',
    timeout: ADMIN_DEFAULTS.timeout.toSeconds(),
    memory: ADMIN_DEFAULTS.memorySize,
  },
} as const;
type FunctionName = keyof typeof FUNCTIONS;
const functionNames = Object.keys(FUNCTIONS) as FunctionName[];

const TABLE_OUTPUTS = ['ordersTableName', 'inventoryTableName', 'outboxTableName', 'inboxTableName'] as const;
const QUEUE_OUTPUTS = [
  'orderEventsQueueUrl',
  'orderEventsDeadLetterQueueUrl',
  'relayFailureQueueUrl',
] as const;

const target = (output: string) => outputTarget(json, output);
const fn = (name: FunctionName) => functionId(json, name);
const env = (name: FunctionName) => environmentOf(json, fn(name));
const ref = (output: string) => ({ Ref: target(output) });

/** The API path of an AWS::ApiGateway::Resource, rebuilt from its parents (the root is the RestApi). */
function apiPath(resourceId: string | undefined): string {
  if (resourceId === undefined || resource(json, resourceId).Type !== 'AWS::ApiGateway::Resource') return '';
  const properties = propertiesOf(json, resourceId);
  return `${apiPath(refTarget(properties.ParentId))}/${String(properties.PathPart)}`;
}

/** The API Gateway method of a route. */
function methodOf(method: string, path: string): Readonly<Record<string, unknown>> {
  const ids = idsOfType(json, 'AWS::ApiGateway::Method').filter((id) => {
    const properties = propertiesOf(json, id);
    return properties.HttpMethod === method && apiPath(refTarget(properties.ResourceId)) === path;
  });
  return propertiesOf(json, onlyId(ids, `method ${method} ${path}`));
}

describe('tables', () => {
  const KEYS = {
    ordersTableName: 'orderId',
    inventoryTableName: 'sku',
    outboxTableName: OUTBOX_KEYS.partitionKey,
    inboxTableName: INBOX_KEYS.partitionKey,
  } as const;

  it.each(TABLE_OUTPUTS)(
    'keys the %s table by its partition key, on demand, with point-in-time recovery',
    (output) => {
      expect(propertiesOf(json, target(output))).toMatchObject({
        KeySchema: [{ AttributeName: KEYS[output], KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    },
  );

  it('has exactly the four tables it outputs, and the outbox’s audit trail', () => {
    const audit = onlyId(idsByRole(json, 'audit-table'), 'audit table');
    expect(idsOfType(json, 'AWS::DynamoDB::Table').sort()).toEqual(
      [...TABLE_OUTPUTS.map(target), audit].sort(),
    );
  });

  it('streams new and old images of the outbox table only', () => {
    for (const output of TABLE_OUTPUTS) {
      const stream = propertiesOf(json, target(output)).StreamSpecification;
      if (output === 'outboxTableName') expect(stream).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
      else expect(stream, output).toBeUndefined();
    }
  });

  it('indexes the outbox by due shard and next attempt, by aggregate, by attention, and by order key', () => {
    const outbox = propertiesOf(json, target('outboxTableName'));
    const indexes = [
      OUTBOX_KEYS.dueIndex,
      OUTBOX_KEYS.aggregateIndex,
      OUTBOX_KEYS.attentionIndex,
      OUTBOX_KEYS.orderIndex,
    ].map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
    }));
    expect(
      (outbox.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[]).map(
        ({ IndexName, KeySchema }) => ({ IndexName, KeySchema }),
      ),
    ).toEqual(indexes);
    expect(outbox.AttributeDefinitions).toEqual(
      expect.arrayContaining(
        ['messageId', 'dueShard', 'nextAttemptAt', 'aggregateId', 'attentionKey', 'createdAt'].map(
          (name) => ({
            AttributeName: name,
            AttributeType: 'S',
          }),
        ),
      ),
    );
    // An order key's messages sort by their seq as numbers: seq 10 comes after seq 9.
    expect(outbox.AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: 'orderKey', AttributeType: 'S' },
        { AttributeName: 'seq', AttributeType: 'N' },
      ]),
    );
  });

  it('holds keys only in the byAggregate index, whose keys never change: a status change never rewrites it', () => {
    const indexes = propertiesOf(json, target('outboxTableName')).GlobalSecondaryIndexes as {
      IndexName: string;
      Projection: unknown;
    }[];
    expect(indexes.find((index) => index.IndexName === 'byAggregate')?.Projection).toEqual({
      ProjectionType: 'KEYS_ONLY',
    });
  });

  it('holds keys only in the byOrderKey index, whose readers fetch the message they find', () => {
    const indexes = propertiesOf(json, target('outboxTableName')).GlobalSecondaryIndexes as {
      IndexName: string;
      Projection: unknown;
    }[];
    expect(indexes.find((index) => index.IndexName === 'byOrderKey')?.Projection).toEqual({
      ProjectionType: 'KEYS_ONLY',
    });
  });

  it('holds in the due index what its readers read, and never the payload, headers or history', () => {
    const indexes = propertiesOf(json, target('outboxTableName')).GlobalSecondaryIndexes as {
      IndexName: string;
      Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
    }[];
    const due = indexes.find((index) => index.IndexName === 'due')?.Projection;
    expect(due?.ProjectionType).toBe('INCLUDE');
    // The claim's condition, the backlog gauges and an operator's listing. A delivery's subscriber is read from its
    // key (`<messageId>#<subscriber>`), which every index holds, so the index need not hold it again.
    expect(due?.NonKeyAttributes).toEqual(
      expect.arrayContaining(
        [...SUMMARY_ATTRIBUTES, 'sentAt'].filter((a) => a !== 'messageId' && a !== 'subscriber'),
      ),
    );
    for (const heavy of ['payload', 'headers', 'history']) expect(due?.NonKeyAttributes).not.toContain(heavy);
  });

  it('agrees with the index names the outbox adapters query', () => {
    expect(OUTBOX_KEYS.dueIndex).toMatchObject({
      name: 'due',
      partitionKey: 'dueShard',
      sortKey: 'nextAttemptAt',
    });
    expect(OUTBOX_KEYS.aggregateIndex).toMatchObject({
      name: 'byAggregate',
      partitionKey: 'aggregateId',
      sortKey: 'messageId',
    });
    expect(OUTBOX_KEYS.orderIndex).toMatchObject({
      name: 'byOrderKey',
      partitionKey: 'orderKey',
      sortKey: 'seq',
    });
  });

  it('expires outbox and inbox items through their TTL attribute, and no business item', () => {
    expect(propertiesOf(json, target('outboxTableName')).TimeToLiveSpecification).toEqual({
      AttributeName: OUTBOX_KEYS.ttlAttribute,
      Enabled: true,
    });
    expect(propertiesOf(json, target('inboxTableName')).TimeToLiveSpecification).toEqual({
      AttributeName: INBOX_KEYS.ttlAttribute,
      Enabled: true,
    });
    for (const output of ['ordersTableName', 'inventoryTableName']) {
      expect(propertiesOf(json, target(output)).TimeToLiveSpecification, output).toBeUndefined();
    }
  });

  it('removes every table with the stack: an example that `cdk destroy` cleans up', () => {
    for (const output of TABLE_OUTPUTS)
      expect(resource(json, target(output)).DeletionPolicy, output).toBe('Delete');
  });
});

describe('queues', () => {
  const queue = () => propertiesOf(json, target('orderEventsQueueUrl'));
  const deadLetters = () => propertiesOf(json, target('orderEventsDeadLetterQueueUrl'));

  it('moves poison order events to their DLQ after the receives the consumer is told about', () => {
    expect(queue().RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [target('orderEventsDeadLetterQueueUrl'), 'Arn'] },
      maxReceiveCount: QUEUE_DEFAULTS.maxReceiveCount,
    });
    // The consumer dead-letters a message itself on its last receive: it must know the same count.
    expect(env('Outbox/InventoryConsumer').MAX_RECEIVE_COUNT).toBe(String(QUEUE_DEFAULTS.maxReceiveCount));
  });

  it('keeps dead letters for 14 days, longer than the queue keeps messages', () => {
    expect(deadLetters().MessageRetentionPeriod).toBe(14 * 24 * 60 * 60);
    expect(Number(queue().MessageRetentionPeriod)).toBeLessThan(Number(deadLetters().MessageRetentionPeriod));
  });

  it('keeps the metadata of skipped stream batches for 14 days', () => {
    expect(propertiesOf(json, target('relayFailureQueueUrl')).MessageRetentionPeriod).toBe(14 * 24 * 60 * 60);
  });

  it.each(QUEUE_OUTPUTS)('encrypts %s with SQS-managed keys', (output) => {
    expect(propertiesOf(json, target(output)).SqsManagedSseEnabled).toBe(true);
  });

  it('hides a received order event for at least 6 × its consumer timeout, and at most 12 h', () => {
    const visibility = Number(queue().VisibilityTimeout);
    expect(visibility).toBeGreaterThanOrEqual(
      6 * Number(propertiesOf(json, fn('Outbox/InventoryConsumer')).Timeout),
    );
    expect(visibility).toBeLessThanOrEqual(12 * 60 * 60);
  });

  it('has exactly the three queues it outputs', () => {
    expect(idsOfType(json, 'AWS::SQS::Queue').sort()).toEqual(QUEUE_OUTPUTS.map(target).sort());
  });

  it.each(QUEUE_OUTPUTS)('refuses plain-HTTP access to %s', (output) => {
    const policies = idsOfType(json, 'AWS::SQS::QueuePolicy').filter((id) =>
      references(propertiesOf(json, id).Queues, target(output)),
    );
    const statements = policies.flatMap(
      (id) => (propertiesOf(json, id).PolicyDocument as { Statement: unknown[] }).Statement,
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sqs:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
  });
});

describe('event source mappings', () => {
  const outboxStream = () => mappingFrom(json, target('outboxTableName'));

  it('feeds new outbox records to the relay from the oldest record, with the documented stream settings', () => {
    expect(outboxStream()).toMatchObject({
      FunctionName: { Ref: fn('Outbox/Relay') },
      EventSourceArn: { 'Fn::GetAtt': [target('outboxTableName'), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: OUTBOX_STREAM_DEFAULTS.batchSize,
      MaximumBatchingWindowInSeconds: OUTBOX_STREAM_DEFAULTS.maxBatchingWindow.toSeconds(),
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: OUTBOX_STREAM_DEFAULTS.retryAttempts,
      MaximumRecordAgeInSeconds: OUTBOX_STREAM_DEFAULTS.maxRecordAge.toSeconds(),
      ParallelizationFactor: OUTBOX_STREAM_DEFAULTS.parallelizationFactor,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('filters the outbox stream to INSERT records', () => {
    expect(outboxStream().FilterCriteria).toEqual({
      Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }],
    });
  });

  it('sends stream batches the relay gave up on to the relay failure queue', () => {
    expect(outboxStream().DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [target('relayFailureQueueUrl'), 'Arn'] } },
    });
  });

  it('feeds order events to the inventory consumer with partial batch failures', () => {
    expect(mappingFrom(json, target('orderEventsQueueUrl'))).toMatchObject({
      FunctionName: { Ref: fn('Outbox/InventoryConsumer') },
      BatchSize: CONSUMER_DEFAULTS.batchSize,
      MaximumBatchingWindowInSeconds: CONSUMER_DEFAULTS.maxBatchingWindow.toSeconds(),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('maps nothing else: no function reads a dead-letter or failure queue', () => {
    expect(idsOfType(json, 'AWS::Lambda::EventSourceMapping')).toHaveLength(2);
  });
});

describe('functions', () => {
  it('names each function by its construct path, as the local runtime runs it', () => {
    const names = idsOfType(json, 'AWS::Lambda::Function').map((id) => constructName(json, id));
    expect(names.sort()).toEqual([...functionNames].sort());
  });

  it.each(functionNames)('runs %s on Node 24 / ARM64 with its timeout and memory', (name) => {
    expect(propertiesOf(json, fn(name))).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: FUNCTIONS[name].timeout,
      MemorySize: FUNCTIONS[name].memory,
    });
  });

  it.each(functionNames)('logs %s as its service, at INFO, with source-mapped stack traces', (name) => {
    expect(env(name)).toMatchObject({
      POWERTOOLS_SERVICE_NAME: FUNCTIONS[name].service,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it.each(functionNames)('logs %s to its own log group kept for a month', (name) => {
    const loggingConfig = propertiesOf(json, fn(name)).LoggingConfig as { LogGroup: unknown };
    const logGroupId = refTarget(loggingConfig.LogGroup) ?? '';
    expect(resource(json, logGroupId)).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
      DeletionPolicy: 'Delete',
    });
    const sharing = functionNames.filter((other) =>
      references(propertiesOf(json, fn(other)).LoggingConfig, logGroupId),
    );
    expect(sharing).toEqual([name]);
  });

  it.each(functionNames)('traces %s with X-Ray', (name) => {
    expect(propertiesOf(json, fn(name)).TracingConfig).toEqual({ Mode: 'Active' });
  });

  it('sets log retention without the custom-resource Lambda emulators cannot run', () => {
    expect(idsOfType(json, 'Custom::LogRetention')).toEqual([]);
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(functionNames.length);
  });

  it.each(functionNames)('records the handler module of %s in the template, and the file exists', (name) => {
    const entry = entryOf(json, fn(name));
    expect(entry).toBe(FUNCTIONS[name].entry);
    expect(existsSync(resolve(entry ?? '')), entry).toBe(true);
  });
});

describe('function environments', () => {
  /** The variables each function gets besides POWERTOOLS_SERVICE_NAME, POWERTOOLS_LOG_LEVEL and NODE_OPTIONS. */
  const VARIABLES: Readonly<Record<FunctionName, readonly string[]>> = {
    'Outbox/Relay': [
      'OUTBOX_TABLE',
      'TOPIC_QUEUES',
      'RETRY_POLICIES',
      'CONFIRM_DEADLINE_MS',
      'RETENTION_DAYS',
      'DUE_SHARDS',
      'ORDERED_TOPICS',
      'POWERTOOLS_METRICS_NAMESPACE',
    ],
    'Outbox/Sweeper': [
      'OUTBOX_TABLE',
      'TOPIC_QUEUES',
      'RETRY_POLICIES',
      'CONFIRM_DEADLINE_MS',
      'RETENTION_DAYS',
      'DUE_SHARDS',
      'DELIVERY_INBOXES',
      'SWEEPER_MAX_MESSAGES_PER_SECOND',
      'ORDERED_TOPICS',
      'POWERTOOLS_METRICS_NAMESPACE',
    ],
    'Outbox/InventoryConsumer': [
      'INVENTORY_TABLE',
      'INBOX_TABLE',
      'INBOX_RETENTION_DAYS',
      'SOURCE_QUEUE_URL',
      'DEAD_LETTER_QUEUE_URL',
      'MAX_RECEIVE_COUNT',
      'OUTBOX_TABLE',
      'RETENTION_DAYS',
      'CLAIM_CHECK_BUCKET',
      'ORDERED_TOPICS',
      'POWERTOOLS_METRICS_NAMESPACE',
    ],
    // No SEQUENCE_TABLE: each order function numbers its message from the order's version.
    CreateOrder: [
      'ORDERS_TABLE',
      'OUTBOX_TABLE',
      'DUE_SHARDS',
      'STREAM_GRACE_MS',
      'CLAIM_CHECK_BUCKET',
      'CLAIM_CHECK_THRESHOLD_BYTES',
      'ORDERED_TOPICS',
    ],
    CancelOrder: [
      'ORDERS_TABLE',
      'OUTBOX_TABLE',
      'DUE_SHARDS',
      'STREAM_GRACE_MS',
      'CLAIM_CHECK_BUCKET',
      'CLAIM_CHECK_THRESHOLD_BYTES',
      'ORDERED_TOPICS',
    ],
    GetOrder: ['ORDERS_TABLE', 'OUTBOX_TABLE'],
    PutStock: ['INVENTORY_TABLE'],
    GetStock: ['INVENTORY_TABLE'],
    'Outbox/Admin': [
      'OUTBOX_TABLE',
      'AUDIT_TABLE',
      'TOPIC_QUEUES',
      'DEAD_LETTER_QUEUES',
      'DELIVERY_INBOXES',
      'DUE_SHARDS',
      'RETENTION_DAYS',
      'CLAIM_CHECK_BUCKET',
      'ORDERED_TOPICS',
      'POWERTOOLS_METRICS_NAMESPACE',
    ],
  };
  const COMMON = ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_LOG_LEVEL', 'NODE_OPTIONS'];

  it.each(functionNames)('gives %s exactly the variables it reads', (name) => {
    expect(Object.keys(env(name)).sort()).toEqual([...COMMON, ...VARIABLES[name]].sort());
  });

  it('points every table variable at the table of that name', () => {
    const tables = {
      ORDERS_TABLE: 'ordersTableName',
      INVENTORY_TABLE: 'inventoryTableName',
      OUTBOX_TABLE: 'outboxTableName',
      INBOX_TABLE: 'inboxTableName',
    } as const;
    for (const name of functionNames) {
      for (const [variable, output] of Object.entries(tables)) {
        const value = env(name)[variable];
        if (value !== undefined) expect(value, `${name} ${variable}`).toEqual(ref(output));
      }
    }
  });

  it('routes order.created and order.cancelled to the order events queue in the relay and the sweeper alike', () => {
    for (const name of ['Outbox/Relay', 'Outbox/Sweeper'] as const) {
      expect(JSON.parse(renderString(env(name).TOPIC_QUEUES)), name).toEqual({
        'order.created': `\${${target('orderEventsQueueUrl')}}`,
        'order.cancelled': `\${${target('orderEventsQueueUrl')}}`,
      });
    }
  });

  it('configures the relay and the sweeper with the same table, routes, policies, deadline and retention', () => {
    for (const variable of [
      'OUTBOX_TABLE',
      'TOPIC_QUEUES',
      'RETRY_POLICIES',
      'CONFIRM_DEADLINE_MS',
      'RETENTION_DAYS',
    ]) {
      expect(env('Outbox/Sweeper')[variable], variable).toEqual(env('Outbox/Relay')[variable]);
    }
    expect(env('Outbox/Sweeper').CONFIRM_DEADLINE_MS).toBe(String(DEFAULT_CONFIRM_DEADLINE_MS));
    // No topic has a policy of its own: every one gets DEFAULT_RETRY_POLICY.
    expect(env('Outbox/Sweeper').RETRY_POLICIES).toBe('{}');
  });

  it('tells the sweeper which inbox proves an order.created or order.cancelled delivery', () => {
    expect(JSON.parse(renderString(env('Outbox/Sweeper').DELIVERY_INBOXES))).toEqual({
      'order.created': `\${${target('inboxTableName')}}`,
      'order.cancelled': `\${${target('inboxTableName')}}`,
    });
  });

  it('writes messages into the due-index shards the sweeper reads', () => {
    expect(env('CreateOrder').DUE_SHARDS).toBe(env('Outbox/Sweeper').DUE_SHARDS);
    expect(env('CancelOrder').DUE_SHARDS).toBe(env('Outbox/Sweeper').DUE_SHARDS);
  });

  it('gives the writers, the relay, the sweeper, the consumer and the admin API the same ordered topics', () => {
    const ordered = env('Outbox/Relay').ORDERED_TOPICS;
    expect(JSON.parse(renderString(ordered))).toEqual({
      'order.created': {
        scope: 'order',
        gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS,
        sequence: 'aggregate-version',
      },
      'order.cancelled': {
        scope: 'order',
        gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS,
        sequence: 'aggregate-version',
      },
    });
    for (const name of [
      'Outbox/Sweeper',
      'Outbox/InventoryConsumer',
      'Outbox/Admin',
      'CreateOrder',
      'CancelOrder',
    ] as const) {
      expect(env(name).ORDERED_TOPICS, name).toEqual(ordered);
    }
  });

  it('gives the consumer its queue and that queue’s dead-letter queue', () => {
    expect(env('Outbox/InventoryConsumer')).toMatchObject({
      SOURCE_QUEUE_URL: ref('orderEventsQueueUrl'),
      DEAD_LETTER_QUEUE_URL: ref('orderEventsDeadLetterQueueUrl'),
    });
  });

  it('keeps inbox rows longer than any copy of an order.created can still arrive', () => {
    const horizonMs = redeliveryHorizonMs({
      policy: DEFAULT_RETRY_POLICY,
      confirmDeadlineMs: Number(env('Outbox/Sweeper').CONFIRM_DEADLINE_MS),
      queueRetentionMs:
        Number(propertiesOf(json, target('orderEventsQueueUrl')).MessageRetentionPeriod) * 1000,
      deadLetterRetentionMs:
        Number(propertiesOf(json, target('orderEventsDeadLetterQueueUrl')).MessageRetentionPeriod) * 1000,
    });
    const inboxRetentionMs = Number(env('Outbox/InventoryConsumer').INBOX_RETENTION_DAYS) * 86_400_000;
    expect(inboxRetentionMs).toBeGreaterThan(horizonMs);
  });
});

describe('outbox sweeper', () => {
  const sweeper = () => fn('Outbox/Sweeper');

  it('invokes the sweeper every minute from an EventBridge rule, with few retries of a failed run', () => {
    const ruleId = ruleTargeting(json, sweeper());
    const rule = propertiesOf(json, ruleId);
    expect(rule).toMatchObject({
      ScheduleExpression: `rate(${SWEEPER_DEFAULTS.scheduleRate.toMinutes()} minute)`,
      State: 'ENABLED',
    });
    expect(rule.Targets).toEqual([
      expect.objectContaining({
        Arn: { 'Fn::GetAtt': [sweeper(), 'Arn'] },
        RetryPolicy: {
          MaximumRetryAttempts: SCHEDULE_DEFAULTS.retryAttempts,
          MaximumEventAgeInSeconds: SCHEDULE_DEFAULTS.maxEventAge.toSeconds(),
        },
      }),
    ]);
    expect(SCHEDULE_DEFAULTS.retryAttempts).toBeLessThanOrEqual(2);
  });

  it('lets EventBridge invoke the sweeper from that rule only', () => {
    const permissions = idsOfType(json, 'AWS::Lambda::Permission')
      .map((id) => propertiesOf(json, id))
      .filter((permission) => permission.Principal === 'events.amazonaws.com');
    expect(permissions).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [sweeper(), 'Arn'] },
        SourceArn: { 'Fn::GetAtt': [ruleTargeting(json, sweeper()), 'Arn'] },
      },
    ]);
  });

  it('alarms on the first ordering gap the sweeper counts in order.created or order.cancelled', () => {
    const gapAlarms = idsOfType(json, 'AWS::CloudWatch::Alarm')
      .map((id) => propertiesOf(json, id))
      .filter((alarm) => alarm.MetricName === OutboxMetricName.ORDERING_GAPS);
    expect(gapAlarms.map((alarm) => alarm.Dimensions)).toEqual(
      expect.arrayContaining(
        ['order.created', 'order.cancelled'].map((topic) => [
          { Name: 'service', Value: env('Outbox/Sweeper').POWERTOOLS_SERVICE_NAME },
          { Name: 'topic', Value: topic },
        ]),
      ),
    );
    expect(gapAlarms).toHaveLength(2);
    for (const alarm of gapAlarms) {
      expect(alarm).toMatchObject({
        Namespace: env('Outbox/Sweeper').POWERTOOLS_METRICS_NAMESPACE,
        Statistic: 'Sum',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
      });
      expect(alarm.AlarmActions).toHaveLength(1);
    }
  });

  it('creates no schedule but the sweeper’s', () => {
    expect(idsOfType(json, 'AWS::Events::Rule')).toHaveLength(1);
  });
});

describe('REST API', () => {
  const ROUTES = [
    { method: 'POST', path: '/orders', function: 'CreateOrder' },
    { method: 'GET', path: '/orders/{orderId}', function: 'GetOrder' },
    { method: 'POST', path: '/orders/{orderId}/cancel', function: 'CancelOrder' },
    { method: 'PUT', path: '/inventory/{sku}', function: 'PutStock' },
    { method: 'GET', path: '/inventory/{sku}', function: 'GetStock' },
    { method: 'GET', path: '/admin/{proxy+}', function: 'Outbox/Admin' },
    { method: 'POST', path: '/admin/{proxy+}', function: 'Outbox/Admin' },
  ] as const;

  it.each(ROUTES)('serves $method $path through a Lambda proxy to $function', (route) => {
    const integration = methodOf(route.method, route.path).Integration as Record<string, unknown>;
    expect(integration.Type).toBe('AWS_PROXY');
    expect(references(integration.Uri, fn(route.function))).toBe(true);
  });

  it('serves no other route', () => {
    expect(idsOfType(json, 'AWS::ApiGateway::Method')).toHaveLength(ROUTES.length);
  });

  it('authorises every method, /admin included, with IAM by default: callers sign with SigV4', () => {
    for (const route of ROUTES) {
      expect(methodOf(route.method, route.path).AuthorizationType, `${route.method} ${route.path}`).toBe(
        'AWS_IAM',
      );
    }
    expect(idsOfType(json, 'AWS::ApiGateway::Authorizer')).toEqual([]);
  });

  it('traces the API stage with X-Ray', () => {
    const stage = onlyId(idsOfType(json, 'AWS::ApiGateway::Stage'), 'API stage');
    expect(propertiesOf(json, stage).TracingEnabled).toBe(true);
  });

  it('validates the bodies of POST /orders, POST /orders/{orderId}/cancel and PUT /inventory/{sku} against the handlers’ zod schemas', () => {
    const validatorId = onlyId(idsOfType(json, 'AWS::ApiGateway::RequestValidator'), 'request validator');
    expect(propertiesOf(json, validatorId)).toMatchObject({
      ValidateRequestBody: true,
      ValidateRequestParameters: true,
    });
    const cases = [
      { method: 'POST', path: '/orders', schema: orderRequestSchema },
      { method: 'POST', path: '/orders/{orderId}/cancel', schema: cancelOrderRequestSchema },
      { method: 'PUT', path: '/inventory/{sku}', schema: stockRequestSchema },
    ] as const;
    for (const { method, path, schema } of cases) {
      const properties = methodOf(method, path);
      expect(properties.RequestValidatorId).toEqual({ Ref: validatorId });
      const modelId = refTarget((properties.RequestModels as Record<string, unknown>)['application/json']);
      expect(propertiesOf(json, modelId ?? '')).toMatchObject({
        ContentType: 'application/json',
        Schema: z.toJSONSchema(schema, { target: 'draft-4' }),
      });
    }
  });

  it('requires the path parameter of every {orderId} and {sku} route, through the validator', () => {
    const validatorId = onlyId(idsOfType(json, 'AWS::ApiGateway::RequestValidator'), 'request validator');
    const withParameter = ROUTES.filter((route) => /\{(orderId|sku)\}/.test(route.path));
    expect(withParameter).toHaveLength(4);
    for (const route of withParameter) {
      const parameter = /\{(\w+)\}/.exec(route.path)?.[1] ?? '';
      const properties = methodOf(route.method, route.path);
      expect(properties.RequestParameters, `${route.method} ${route.path}`).toEqual({
        [`method.request.path.${parameter}`]: true,
      });
      expect(properties.RequestValidatorId).toEqual({ Ref: validatorId });
    }
  });

  it('gives GET routes no body model', () => {
    for (const route of ROUTES.filter((candidate) => candidate.method === 'GET')) {
      expect(methodOf(route.method, route.path).RequestModels).toBeUndefined();
    }
  });

  it('logs every request as one JSON line (request id, caller, ip, method, route, status, latency), kept a month', () => {
    const stage = propertiesOf(json, onlyId(idsOfType(json, 'AWS::ApiGateway::Stage'), 'API stage'));
    const setting = stage.AccessLogSetting as { DestinationArn: unknown; Format: string };
    const logGroupId = refTarget(setting.DestinationArn) ?? '';
    expect(resource(json, logGroupId)).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
    });
    // API Gateway fills the variables in; the format itself is a JSON object of them.
    const fields = JSON.parse(setting.Format) as Record<string, string>;
    expect(fields).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      caller: '$context.identity.caller',
      userArn: '$context.identity.userArn',
      httpMethod: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
      responseLatency: '$context.responseLatency',
    });
    // Nothing a caller writes (user agent, raw path) reaches the unescaped log line.
    expect(Object.values(fields)).not.toContain('$context.identity.userAgent');
    expect(Object.values(fields)).not.toContain('$context.path');
  });

  it('logs execution errors without bodies to a group kept a month, throttles at 100 rps / 200 burst', () => {
    const stage = propertiesOf(json, onlyId(idsOfType(json, 'AWS::ApiGateway::Stage'), 'API stage'));
    expect(stage.MethodSettings).toEqual([
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        ThrottlingRateLimit: 100,
        ThrottlingBurstLimit: 200,
      }),
    ]);
    const apiId = onlyId(idsOfType(json, 'AWS::ApiGateway::RestApi'), 'REST API');
    const executionLogs = idsOfType(json, 'AWS::Logs::LogGroup').filter((id) =>
      renderString(propertiesOf(json, id).LogGroupName ?? '').startsWith('API-Gateway-Execution-Logs_'),
    );
    const logGroupId = onlyId(executionLogs, 'execution log group');
    expect(renderString(propertiesOf(json, logGroupId).LogGroupName)).toBe(
      `API-Gateway-Execution-Logs_\${${apiId}}/${String(stage.StageName)}`,
    );
    expect(propertiesOf(json, logGroupId).RetentionInDays).toBe(30);
  });

  it('leaves the account’s CloudWatch role, WAF and CORS alone unless asked', () => {
    expect(idsOfType(json, 'AWS::ApiGateway::Account')).toEqual([]);
    expect(idsOfType(json, 'AWS::WAFv2::WebACLAssociation')).toEqual([]);
    const options = idsOfType(json, 'AWS::ApiGateway::Method').filter(
      (id) => propertiesOf(json, id).HttpMethod === 'OPTIONS',
    );
    expect(options).toEqual([]);
  });

  it('answers an invalid body with the handlers’ {error, details: [{field, problem}]} 400', () => {
    const ids = idsOfType(json, 'AWS::ApiGateway::GatewayResponse').filter(
      (id) => propertiesOf(json, id).ResponseType === 'BAD_REQUEST_BODY',
    );
    const properties = propertiesOf(json, onlyId(ids, 'BAD_REQUEST_BODY gateway response'));
    expect(properties.StatusCode).toBe('400');
    const body = (properties.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
    // The same shape, field for field, as a handler's own 400 for an invalid body.
    const fromHandler: unknown = JSON.parse(
      errorResponse(400, 'invalid request body', [
        { field: '(body)', problem: 'does not match the request model' },
      ]).body,
    );
    expect(JSON.parse(body)).toEqual(fromHandler);
  });

  const HOSTILE = [
    'plain',
    'say "hi"',
    'back\\slash \\u0000',
    'line\nbreak\r\ttab',
    '"]}',
    '[object has missing required properties (["customerId"])]',
    '{"injected":true}',
  ];

  /** Every gateway response of the API by its type, with its JSON template. */
  const gatewayResponses = (): Record<string, string> =>
    Object.fromEntries(
      idsOfType(json, 'AWS::ApiGateway::GatewayResponse').map((id) => {
        const properties = propertiesOf(json, id);
        const templates = (properties.ResponseTemplates ?? {}) as Record<string, string>;
        return [String(properties.ResponseType), templates['application/json'] ?? ''];
      }),
    );

  it('answers in JSON for the gateway’s own refusals and failures, the defaults included', () => {
    expect(Object.keys(gatewayResponses())).toEqual(
      expect.arrayContaining([
        'DEFAULT_4XX',
        'DEFAULT_5XX',
        'ACCESS_DENIED',
        'MISSING_AUTHENTICATION_TOKEN',
        'INVALID_SIGNATURE',
        'EXPIRED_TOKEN',
        'UNAUTHORIZED',
        'THROTTLED',
        'WAF_FILTERED',
        'BAD_REQUEST_BODY',
        'BAD_REQUEST_PARAMETERS',
        'INTEGRATION_FAILURE',
        'INTEGRATION_TIMEOUT',
        'AUTHORIZER_FAILURE',
      ]),
    );
  });

  it.each(HOSTILE)(
    'keeps every gateway response valid JSON in the handlers’ shape when API Gateway substitutes %j into it',
    (hostile) => {
      const responses = Object.entries(gatewayResponses());
      expect(responses.length).toBeGreaterThan(10);
      for (const [type, template] of responses) {
        // Gateway response templates are plain substitution: $context.error.messageString arrives quoted as a
        // JSON string; every other variable would arrive as its raw text.
        const substituted = template
          .replaceAll('$context.error.messageString', JSON.stringify(hostile))
          .replaceAll(/\$(context|stageVariables|util|input|method)\.[A-Za-z.]+/g, hostile);
        let body: unknown;
        expect(() => {
          body = JSON.parse(substituted);
        }, `${type}: ${template}`).not.toThrow();
        expect(body, type).toEqual({
          error: expect.any(String),
          details: expect.any(Array),
          ...(template.includes('$context.error.messageString') ? { message: hostile } : {}),
        });
        // The quoted message is the only place user input may reach the answer.
        const { message: _message, ...rest } = body as Record<string, unknown>;
        expect(JSON.stringify(rest), type).not.toContain(hostile);
      }
    },
  );

  it('tells nothing of an internal failure: every 5xx answer is fixed text', () => {
    const serverErrors = [
      'DEFAULT_5XX',
      'INTEGRATION_FAILURE',
      'INTEGRATION_TIMEOUT',
      'AUTHORIZER_FAILURE',
      'AUTHORIZER_CONFIGURATION_ERROR',
      'API_CONFIGURATION_ERROR',
    ];
    const responses = gatewayResponses();
    for (const type of serverErrors) {
      const template = responses[type] ?? '';
      expect(template, type).not.toContain('$');
      expect(JSON.parse(template), type).toEqual({ error: expect.any(String), details: [] });
    }
  });
});

describe('outputs', () => {
  it('names every output the local runtime and the integration tests read, without hashes', () => {
    expect(Object.keys(json.Outputs)).toEqual(
      expect.arrayContaining([...TABLE_OUTPUTS, ...QUEUE_OUTPUTS, 'apiUrl']),
    );
  });

  it('points table and queue outputs at resources of the right type, each at a different one', () => {
    for (const output of TABLE_OUTPUTS)
      expect(resource(json, target(output)).Type, output).toBe('AWS::DynamoDB::Table');
    for (const output of QUEUE_OUTPUTS)
      expect(resource(json, target(output)).Type, output).toBe('AWS::SQS::Queue');
    const targets = [...TABLE_OUTPUTS, ...QUEUE_OUTPUTS].map(target);
    expect(new Set(targets).size).toBe(targets.length);
  });

  it('gives the API’s URL', () => {
    const apiId = onlyId(idsOfType(json, 'AWS::ApiGateway::RestApi'), 'REST API');
    const url = renderString(json.Outputs.apiUrl?.Value);
    expect(url).toMatch(/^https:\/\//);
    expect(references(json.Outputs.apiUrl?.Value, apiId)).toBe(true);
  });
});
