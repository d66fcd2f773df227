import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorResponse } from '../../../functions/http/responses.ts';
import { stockRequestSchema } from '../../../functions/inventory/put-stock/stock-request.ts';
import { orderRequestSchema } from '../../../functions/orders/create-order/order-request.ts';
import type { OutboxExampleStack } from '../../../infra/stacks/outbox-example-stack.ts';
import { buildExampleStack } from '../../../infra/synth-template.ts';
import {
  deadLetterQueueOutputName,
  type EnvValue,
  type FunctionKey,
  type QueueKey,
  queueOutputName,
  type TableKey,
  tableOutputName,
  topicQueues,
  topology,
} from '../../../infra/topology.ts';
import { OUTBOX_KEYS } from '../../../shared/outbox/outbox-item.ts';
import {
  type CfnTemplate,
  environmentOf,
  functionId,
  idsOfType,
  outputTarget,
  propertiesOf,
  references,
  refTarget,
  renderString,
  resource,
  templateJson,
} from '../template-queries.ts';

let stack: OutboxExampleStack;
let template: Template;
let json: CfnTemplate;

beforeAll(() => {
  stack = buildExampleStack();
  template = Template.fromStack(stack);
  json = templateJson(template);
});

const tableKeys = Object.keys(topology.tables) as TableKey[];
const queueKeys = Object.keys(topology.queues) as QueueKey[];
const functionKeys = Object.keys(topology.functions) as FunctionKey[];

const tableId = (key: TableKey) => outputTarget(json, tableOutputName(key));
const queueId = (key: QueueKey) => outputTarget(json, queueOutputName(key));
const deadLetterQueueId = (key: QueueKey) => outputTarget(json, deadLetterQueueOutputName(key));

/** The one event source mapping whose source is `sourceId`. */
function mappingFrom(sourceId: string): Readonly<Record<string, unknown>> {
  const ids = idsOfType(json, 'AWS::Lambda::EventSourceMapping').filter((id) =>
    references(propertiesOf(json, id).EventSourceArn, sourceId),
  );
  expect(ids).toHaveLength(1);
  return propertiesOf(json, ids[0] ?? '');
}

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
  expect(ids, `${method} ${path}`).toHaveLength(1);
  return propertiesOf(json, ids[0] ?? '');
}

describe('tables', () => {
  it.each(tableKeys)(
    'keys the %s table by its partition key, on demand, with point-in-time recovery',
    (key) => {
      expect(propertiesOf(json, tableId(key))).toMatchObject({
        KeySchema: [{ AttributeName: topology.tables[key].partitionKey, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    },
  );

  it('streams new and old images of the outbox table only', () => {
    for (const key of tableKeys) {
      const stream = propertiesOf(json, tableId(key)).StreamSpecification;
      if (key === 'outbox') expect(stream).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
      else expect(stream).toBeUndefined();
    }
  });

  it('indexes the outbox by due shard and next attempt, and by aggregate', () => {
    const outbox = propertiesOf(json, tableId('outbox'));
    expect(outbox.GlobalSecondaryIndexes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          IndexName: 'due',
          KeySchema: [
            { AttributeName: 'dueShard', KeyType: 'HASH' },
            { AttributeName: 'nextAttemptAt', KeyType: 'RANGE' },
          ],
        }),
        expect.objectContaining({
          IndexName: 'byAggregate',
          KeySchema: [
            { AttributeName: 'aggregateId', KeyType: 'HASH' },
            { AttributeName: 'messageId', KeyType: 'RANGE' },
          ],
        }),
      ]),
    );
    expect(outbox.AttributeDefinitions).toEqual(
      expect.arrayContaining(
        ['messageId', 'dueShard', 'nextAttemptAt', 'aggregateId'].map((name) => ({
          AttributeName: name,
          AttributeType: 'S',
        })),
      ),
    );
  });

  it('agrees with the key names the outbox adapters use', () => {
    expect(OUTBOX_KEYS.dueIndex).toEqual({ name: 'due', partitionKey: 'dueShard', sortKey: 'nextAttemptAt' });
    expect(topology.tables.outbox.globalIndexes).toEqual([OUTBOX_KEYS.dueIndex, OUTBOX_KEYS.aggregateIndex]);
  });

  it.each(tableKeys.filter((key) => topology.tables[key].ttlAttribute !== undefined))(
    'expires items of the %s table through its TTL attribute',
    (key) => {
      expect(propertiesOf(json, tableId(key)).TimeToLiveSpecification).toEqual({
        AttributeName: topology.tables[key].ttlAttribute,
        Enabled: true,
      });
    },
  );
});

describe('queues', () => {
  it.each(queueKeys)('moves poison messages of %s to its DLQ after maxReceiveCount receives', (key) => {
    expect(propertiesOf(json, queueId(key)).RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterQueueId(key), 'Arn'] },
      maxReceiveCount: topology.queues[key].maxReceiveCount,
    });
  });

  it.each(queueKeys)('keeps dead letters of %s for 14 days, encrypted', (key) => {
    expect(propertiesOf(json, deadLetterQueueId(key))).toMatchObject({
      MessageRetentionPeriod: 14 * 24 * 60 * 60,
      SqsManagedSseEnabled: true,
    });
    expect(propertiesOf(json, queueId(key)).SqsManagedSseEnabled).toBe(true);
  });

  it.each(queueKeys)('hides a received %s message for at least 6 × its consumer timeout', (key) => {
    const consumerTimeouts = Object.values(topology.functions)
      .filter((fn) => fn.queueSource?.queue === key)
      .map((fn) => fn.timeoutSeconds);
    const visibility = propertiesOf(json, queueId(key)).VisibilityTimeout;
    expect(visibility).toBeGreaterThanOrEqual(6 * Math.max(0, ...consumerTimeouts));
    expect(visibility).toBeLessThanOrEqual(12 * 60 * 60);
  });

  it('refuses plain-HTTP access to every queue and DLQ', () => {
    for (const key of queueKeys) {
      for (const id of [queueId(key), deadLetterQueueId(key)]) {
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: id }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Deny',
                Action: 'sqs:*',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              }),
            ]),
          },
        });
      }
    }
  });
});

describe('event source mappings', () => {
  const relay = topology.functions.relay;
  const stream = relay.streamSource;
  if (stream === undefined) throw new Error('the topology relay has no stream source');

  it('feeds new outbox records to the relay with the topology stream settings', () => {
    expect(mappingFrom(tableId(stream.table))).toMatchObject({
      FunctionName: { Ref: functionId(json, 'relay') },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: stream.batchSize,
      MaximumBatchingWindowInSeconds: stream.maxBatchingWindowSeconds,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: stream.retryAttempts,
      MaximumRecordAgeInSeconds: stream.maxRecordAgeSeconds,
      ParallelizationFactor: stream.parallelizationFactor,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('filters the outbox stream to INSERT records', () => {
    const filters = mappingFrom(tableId('outbox')).FilterCriteria;
    expect(filters).toEqual({ Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] });
  });

  it('sends batches the relay gave up on to the failure queue', () => {
    expect(mappingFrom(tableId('outbox')).DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [queueId(stream.onFailureQueue), 'Arn'] } },
    });
  });

  it('feeds each consumer queue to its function with partial batch failures', () => {
    for (const key of functionKeys) {
      const source = topology.functions[key].queueSource;
      if (source === undefined) continue;
      expect(mappingFrom(queueId(source.queue))).toMatchObject({
        FunctionName: { Ref: functionId(json, key) },
        BatchSize: source.batchSize,
        MaximumBatchingWindowInSeconds: source.maxBatchingWindowSeconds,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
  });

  it('maps exactly the sources the topology names', () => {
    const expected = functionKeys.filter(
      (key) =>
        topology.functions[key].queueSource !== undefined ||
        topology.functions[key].streamSource !== undefined,
    );
    expect(idsOfType(json, 'AWS::Lambda::EventSourceMapping')).toHaveLength(expected.length);
  });
});

describe('functions', () => {
  it.each(functionKeys)('runs %s on Node 22 / ARM64 with the topology timeout and memory', (key) => {
    const spec = topology.functions[key];
    expect(propertiesOf(json, functionId(json, key))).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: spec.timeoutSeconds,
      MemorySize: spec.memoryMb,
      Description: spec.description,
    });
  });

  it.each(functionKeys)('logs %s to its own log group kept for a month', (key) => {
    const loggingConfig = propertiesOf(json, functionId(json, key)).LoggingConfig as { LogGroup: unknown };
    const logGroupId = refTarget(loggingConfig.LogGroup);
    expect(resource(json, logGroupId ?? '')).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
    });
  });

  it('sets log retention without the custom-resource Lambda emulators cannot run', () => {
    expect(idsOfType(json, 'Custom::LogRetention')).toEqual([]);
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(functionKeys.length);
  });

  it.each(functionKeys)('gives %s the environment the topology describes', (key) => {
    const environment = environmentOf(json, functionId(json, key));
    expect(environment).toMatchObject({ POWERTOOLS_SERVICE_NAME: key, POWERTOOLS_LOG_LEVEL: 'INFO' });
    for (const [name, value] of Object.entries(topology.functions[key].environment) as [string, EnvValue][]) {
      const actual = environment[name];
      if ('tableName' in value) expect(actual, name).toEqual({ Ref: tableId(value.tableName) });
      else if ('queueUrl' in value) expect(actual, name).toEqual({ Ref: queueId(value.queueUrl) });
      else if ('deadLetterQueueUrl' in value)
        expect(actual, name).toEqual({ Ref: deadLetterQueueId(value.deadLetterQueueUrl) });
      else if ('tableNamesByTopic' in value) {
        const tables = Object.fromEntries(
          Object.entries(value.tableNamesByTopic).map(([topic, table]) => [topic, `\${${tableId(table)}}`]),
        );
        expect(JSON.parse(renderString(actual)), name).toEqual(tables);
      } else if ('literal' in value) expect(actual, name).toBe(value.literal);
      else {
        const routes = Object.fromEntries(
          [...topicQueues()].map(([topic, queue]) => [topic, `\${${queueId(queue)}}`]),
        );
        expect(JSON.parse(renderString(actual)), name).toEqual(routes);
      }
    }
  });

  it('routes order.created to the order events queue in the relay environment', () => {
    const routes = renderString(environmentOf(json, functionId(json, 'relay')).TOPIC_QUEUES);
    expect(JSON.parse(routes)).toEqual({ 'order.created': `\${${queueId('orderEvents')}}` });
  });
});

describe('outbox sweeper', () => {
  const sweeperId = () => functionId(json, 'sweeper');
  const environment = () => environmentOf(json, sweeperId());

  it('builds one sweeper, through the TransactionalOutbox: seven functions in all', () => {
    expect(functionKeys).toHaveLength(7);
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(7);
    // functionId finds functions by service name and fails unless exactly one matches.
    expect(sweeperId()).toBe(stack.getLogicalId(stack.outbox.sweeper.node.defaultChild as never));
    expect(stack.functions.sweeper).toBe(stack.outbox.sweeper);
  });

  it('runs the sweeper on Node 22 / ARM64 for up to 60 s with its own log group', () => {
    const properties = propertiesOf(json, sweeperId());
    expect(properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: 60 });
    const logGroupId = refTarget((properties.LoggingConfig as { LogGroup: unknown }).LogGroup);
    expect(resource(json, logGroupId ?? '').Type).toBe('AWS::Logs::LogGroup');
  });

  it('invokes the sweeper every minute from an EventBridge rule, with few retries', () => {
    const rules = idsOfType(json, 'AWS::Events::Rule').filter((id) =>
      references(propertiesOf(json, id).Targets, sweeperId()),
    );
    expect(rules).toHaveLength(1);
    const rule = propertiesOf(json, rules[0] ?? '');
    expect(rule).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    const [target, ...others] = rule.Targets as {
      Arn: unknown;
      RetryPolicy?: { MaximumRetryAttempts: number };
    }[];
    expect(others).toEqual([]);
    expect(target?.Arn).toEqual({ 'Fn::GetAtt': [sweeperId(), 'Arn'] });
    expect(target?.RetryPolicy?.MaximumRetryAttempts).toBeLessThanOrEqual(2);
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [sweeperId(), 'Arn'] },
      SourceArn: { 'Fn::GetAtt': [rules[0], 'Arn'] },
    });
  });

  it('creates one rule per scheduled function and no other', () => {
    const scheduled = functionKeys.filter((key) => topology.functions[key].schedule !== undefined);
    expect(scheduled).toEqual(['sweeper']);
    expect(idsOfType(json, 'AWS::Events::Rule')).toHaveLength(scheduled.length);
  });

  it('gives the sweeper the outbox table, the topic queues and the order.created retry policy', () => {
    expect(environment().OUTBOX_TABLE).toEqual({ Ref: tableId('outbox') });
    expect(JSON.parse(renderString(environment().TOPIC_QUEUES))).toEqual({
      'order.created': `\${${queueId('orderEvents')}}`,
    });
    const policies: unknown = JSON.parse(String(environment().RETRY_POLICIES));
    expect(policies).toEqual({ 'order.created': topology.topics['order.created']?.retry });
    expect(policies).toMatchObject({
      'order.created': {
        baseDelayMs: expect.any(Number),
        multiplier: expect.any(Number),
        maxDelayMs: expect.any(Number),
        maxAttempts: expect.any(Number),
      },
    });
  });

  it('tells the sweeper which inbox proves an order.created delivery', () => {
    expect(JSON.parse(renderString(environment().DELIVERY_INBOXES))).toEqual({
      'order.created': `\${${tableId('inbox')}}`,
    });
  });

  it('configures the relay and the sweeper with the same retry policies and confirmation deadline', () => {
    const relay = environmentOf(json, functionId(json, 'relay'));
    for (const name of ['RETRY_POLICIES', 'CONFIRM_DEADLINE_MS']) {
      expect(typeof environment()[name], name).toBe('string');
      expect(environment()[name], name).toEqual(relay[name]);
    }
    expect(environment().CONFIRM_DEADLINE_MS).toBe(String(topology.confirmDeadlineMs));
  });
});

describe('REST API', () => {
  it.each(topology.routes)('serves $method $path through a Lambda proxy to $function', (route) => {
    const method = methodOf(route.method, route.path);
    const integration = method.Integration as Record<string, unknown>;
    expect(integration.Type).toBe('AWS_PROXY');
    expect(references(integration.Uri, functionId(json, route.function))).toBe(true);
  });

  it('validates the bodies of POST /orders and PUT /inventory/{sku} against the zod schemas', () => {
    const validators = idsOfType(json, 'AWS::ApiGateway::RequestValidator');
    expect(validators).toHaveLength(1);
    expect(propertiesOf(json, validators[0] ?? '')).toMatchObject({ ValidateRequestBody: true });
    const cases = [
      { method: 'POST', path: '/orders', schema: orderRequestSchema },
      { method: 'PUT', path: '/inventory/{sku}', schema: stockRequestSchema },
    ] as const;
    for (const { method, path, schema } of cases) {
      const properties = methodOf(method, path);
      expect(properties.RequestValidatorId).toEqual({ Ref: validators[0] });
      const modelId = refTarget((properties.RequestModels as Record<string, unknown>)['application/json']);
      expect(propertiesOf(json, modelId ?? '')).toMatchObject({
        ContentType: 'application/json',
        Schema: z.toJSONSchema(schema, { target: 'draft-4' }),
      });
    }
  });

  it('leaves GET routes without body validation', () => {
    for (const route of topology.routes.filter((candidate) => candidate.method === 'GET')) {
      expect(methodOf(route.method, route.path).RequestValidatorId).toBeUndefined();
    }
  });

  it('answers an invalid body with the handlers’ {error, details: [{field, problem}]} 400', () => {
    const ids = idsOfType(json, 'AWS::ApiGateway::GatewayResponse').filter(
      (id) => propertiesOf(json, id).ResponseType === 'BAD_REQUEST_BODY',
    );
    expect(ids).toHaveLength(1);
    const properties = propertiesOf(json, ids[0] ?? '');
    expect(properties.StatusCode).toBe('400');
    const body = (properties.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
    expect(body).toContain('$context.error.validationErrorString');
    // What API Gateway's validator says about a body like {"items": [{"sku": "A", "quantity": 0}]}.
    const problem = '[numeric instance is lower than the required minimum (minimum: 1, found: 0)]';
    const answered: unknown = JSON.parse(body.replaceAll('$context.error.validationErrorString', problem));
    expect(answered).toEqual({ error: 'invalid request body', details: [{ field: '(body)', problem }] });
    expect(Array.isArray((answered as { details: unknown }).details)).toBe(true);
    // The same shape, field for field, as a handler's own 400 for an invalid body.
    const fromHandler: unknown = JSON.parse(
      errorResponse(400, 'invalid request body', [{ field: '(body)', problem }]).body,
    );
    expect(answered).toEqual(fromHandler);
  });
});

describe('outputs', () => {
  it('names every output as the topology says, without hashes', () => {
    const expected = [
      ...tableKeys.map(tableOutputName),
      ...queueKeys.flatMap((key) => [queueOutputName(key), deadLetterQueueOutputName(key)]),
      'outboxStreamArn',
      'apiUrl',
    ];
    expect(Object.keys(json.Outputs)).toEqual(expect.arrayContaining(expected));
  });

  it('points table, queue and DLQ outputs at resources of the right type', () => {
    for (const key of tableKeys) expect(resource(json, tableId(key)).Type).toBe('AWS::DynamoDB::Table');
    for (const key of queueKeys) {
      expect(resource(json, queueId(key)).Type).toBe('AWS::SQS::Queue');
      expect(resource(json, deadLetterQueueId(key)).Type).toBe('AWS::SQS::Queue');
      expect(queueId(key)).not.toBe(deadLetterQueueId(key));
    }
  });

  it('exports the outbox stream ARN and the API URL', () => {
    expect(json.Outputs.outboxStreamArn?.Value).toEqual({ 'Fn::GetAtt': [tableId('outbox'), 'StreamArn'] });
    const apiId = idsOfType(json, 'AWS::ApiGateway::RestApi')[0] ?? '';
    expect(references(json.Outputs.apiUrl?.Value, apiId)).toBe(true);
  });
});
