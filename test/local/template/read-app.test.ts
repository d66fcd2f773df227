import { beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ENTRY_METADATA } from '../../../infra/constructs/local-metadata.ts';
import {
  asTemplate,
  type CloudFormationTemplate,
  type TemplateResource,
} from '../../../infra/dev/local/template/cloudformation-template.ts';
import { type AppDefinition, readApp } from '../../../infra/dev/local/template/read-app.ts';
import { localName } from '../../../infra/dev/local/template/resource-names.ts';
import { synthNotesTemplate } from '../fixtures/notes-app/notes-stack.ts';

/** A function resource with a construct path and, unless told otherwise, a handler entry. */
function fn(
  path: string,
  properties: Record<string, unknown> = {},
  entry: string | null = 'src/fn.ts',
): TemplateResource {
  return {
    Type: 'AWS::Lambda::Function',
    Properties: { Handler: 'index.handler', ...properties },
    Metadata: {
      'aws:cdk:path': `Shop/${path}/Resource`,
      ...(entry === null ? {} : { [LOCAL_ENTRY_METADATA]: entry }),
    },
  };
}

const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });

/** A hand-written template with the shapes the CDK writes, and the ones the runtime must leave out. */
const template: CloudFormationTemplate = {
  Resources: {
    Orders: { Type: 'AWS::DynamoDB::Table', Properties: {} },
    Queue: { Type: 'AWS::SQS::Queue' },
    Api: { Type: 'AWS::ApiGateway::RestApi' },
    Items: {
      Type: 'AWS::ApiGateway::Resource',
      Properties: {
        ParentId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] },
        PathPart: 'items',
        RestApiId: { Ref: 'Api' },
      },
    },
    Item: {
      Type: 'AWS::ApiGateway::Resource',
      Properties: { ParentId: { Ref: 'Items' }, PathPart: '{itemId}', RestApiId: { Ref: 'Api' } },
    },
    Reader: fn('Api/Reader', { Handler: 'src/reader.lambda.main', Timeout: 9, MemorySize: 512 }),
    Legacy: fn('Legacy', {}, null),
    ReaderAlias: {
      Type: 'AWS::Lambda::Alias',
      Properties: { FunctionName: { Ref: 'Reader' }, FunctionVersion: '1', Name: 'live' },
    },
    GetItem: {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        HttpMethod: 'GET',
        ResourceId: { Ref: 'Item' },
        Integration: {
          Type: 'AWS_PROXY',
          Uri: {
            'Fn::Join': [
              '',
              ['arn:aws:apigateway:lambda:path/functions/', { Ref: 'ReaderAlias' }, '/invocations'],
            ],
          },
        },
      },
    },
    AnyRoot: {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        HttpMethod: 'ANY',
        ResourceId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] },
        Integration: { Type: 'AWS_PROXY', Uri: { 'Fn::Join': ['', ['x', arnOf('Reader'), 'y']] } },
      },
    },
    Preflight: {
      Type: 'AWS::ApiGateway::Method',
      Properties: { HttpMethod: 'OPTIONS', ResourceId: { Ref: 'Items' }, Integration: { Type: 'MOCK' } },
    },
    LegacyMethod: {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        HttpMethod: 'POST',
        ResourceId: { Ref: 'Items' },
        Integration: { Type: 'AWS_PROXY', Uri: { 'Fn::Join': ['', [arnOf('Legacy')]] } },
      },
    },
    StreamMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        FunctionName: { Ref: 'Reader' },
        EventSourceArn: { 'Fn::GetAtt': ['Orders', 'StreamArn'] },
      },
    },
    QueueMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: { FunctionName: arnOf('Reader'), EventSourceArn: arnOf('Queue'), Enabled: true },
    },
    ImportedQueueMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        FunctionName: { Ref: 'Reader' },
        EventSourceArn: 'arn:aws:sqs:us-east-1:111111111111:imported',
      },
    },
    KinesisMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: { FunctionName: { Ref: 'Reader' }, EventSourceArn: 'arn:aws:kinesis:us-east-1:1:stream/s' },
    },
    DisabledMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: { FunctionName: { Ref: 'Reader' }, EventSourceArn: arnOf('Queue'), Enabled: false },
    },
    LegacyMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: { FunctionName: { Ref: 'Legacy' }, EventSourceArn: arnOf('Queue') },
    },
    Hourly: {
      Type: 'AWS::Events::Rule',
      Properties: {
        ScheduleExpression: 'rate(2 hours)',
        Targets: [
          { Arn: arnOf('Reader'), Id: 'Target0' },
          { Arn: arnOf('Legacy'), Id: 'Target1' },
        ],
      },
    },
    Nightly: {
      Type: 'AWS::Events::Rule',
      Properties: {
        ScheduleExpression: 'cron(0 3 * * ? *)',
        Targets: [{ Arn: arnOf('Reader'), Id: 'Target0' }],
      },
    },
    Paused: {
      Type: 'AWS::Events::Rule',
      Properties: {
        ScheduleExpression: 'rate(5 minutes)',
        State: 'DISABLED',
        Targets: [{ Arn: arnOf('Reader'), Id: 'T' }],
      },
    },
    OnEvents: {
      Type: 'AWS::Events::Rule',
      Properties: { EventPattern: { source: ['shop'] }, Targets: [{ Arn: arnOf('Reader'), Id: 'T' }] },
    },
  },
};

describe('readApp on a hand-written template', () => {
  let app: AppDefinition;
  beforeAll(() => {
    app = readApp(template);
  });

  it('reads each function with a handler entry: name, entry, export, timeout, memory, environment', () => {
    expect(app.stackName).toBe('Shop');
    expect(app.functions).toEqual([
      {
        name: 'Api/Reader',
        logicalId: 'Reader',
        entry: 'src/fn.ts',
        handlerExport: 'main',
        timeoutSeconds: 9,
        memoryMb: 512,
        environment: {},
      },
    ]);
  });

  it('reports a function without entry metadata, and everything that would invoke it, as not run', () => {
    const skipped = app.skipped.map((item) => `${item.name}: ${item.reason}`);
    expect(skipped).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Legacy: no serverless-outbox:entry metadata/),
        expect.stringMatching(
          /^LegacyMethod: POST \/items: its integration is not a function the runtime runs/,
        ),
        expect.stringMatching(/^LegacyMapping: its function .* is not one the runtime runs/),
        expect.stringMatching(/^Hourly: rate\(2 hours\): target Target1 is not a function the runtime runs/),
      ]),
    );
  });

  it('builds each route’s path from its resource chain, through aliases, ANY included', () => {
    expect(app.routes).toEqual([
      { method: 'GET', path: '/items/{itemId}', functionName: 'Api/Reader' },
      { method: 'ANY', path: '/', functionName: 'Api/Reader' },
    ]);
    expect(app.skipped.map((item) => item.reason)).toContain(
      'OPTIONS /items: a MOCK integration is not served locally (only Lambda proxy)',
    );
  });

  it('reads stream and queue mappings with AWS defaults, and skips disabled and unsupported ones', () => {
    expect(
      app.mappings.map((mapping) => [mapping.logicalId, mapping.source.kind, mapping.batchSize]),
    ).toEqual([
      ['StreamMapping', 'stream', 100],
      ['QueueMapping', 'queue', 10],
      ['ImportedQueueMapping', 'queue', 10],
    ]);
    expect(app.mappings[0]).toMatchObject({
      functionName: 'Api/Reader',
      maxBatchingWindowSeconds: 0,
      maxRetryAttempts: -1,
      maxRecordAgeSeconds: -1,
      parallelizationFactor: 1,
      bisectBatchOnError: false,
      reportBatchItemFailures: false,
      filterPatterns: [],
      onFailureDestination: undefined,
    });
    const reasons = app.skipped.map((item) => `${item.name}: ${item.reason}`);
    expect(reasons).toContain('DisabledMapping: the mapping is disabled (Enabled: false)');
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^KinesisMapping: its source .* is neither a DynamoDB stream nor/),
      ]),
    );
  });

  it('reads rate rules per target; cron, disabled and event-pattern rules are not run', () => {
    expect(app.schedules).toEqual([
      {
        name: 'Hourly',
        functionName: 'Api/Reader',
        expression: 'rate(2 hours)',
        rateSeconds: 7_200,
        input: undefined,
      },
    ]);
    const reasons = app.skipped.map((item) => `${item.name}: ${item.reason}`);
    expect(reasons).toContain(
      'Nightly: cron(0 3 * * ? *): only rate(...) schedules run locally; invoke the function with runtime.invoke',
    );
    expect(reasons).toContain('Paused: rate(5 minutes): the rule is disabled');
    expect(reasons.some((reason) => reason.startsWith('OnEvents'))).toBe(false);
  });

  it('refuses a malformed filter pattern and a setting that is not a number', () => {
    const broken = (properties: Record<string, unknown>): CloudFormationTemplate => ({
      Resources: {
        ...template.Resources,
        QueueMapping: {
          Type: 'AWS::Lambda::EventSourceMapping',
          Properties: { FunctionName: { Ref: 'Reader' }, EventSourceArn: arnOf('Queue'), ...properties },
        },
      },
    });
    expect(() => readApp(broken({ FilterCriteria: { Filters: [{ Pattern: '{not json' }] } }))).toThrow(
      /QueueMapping: filter 0 is not JSON/,
    );
    expect(() => readApp(broken({ BatchSize: 'ten' }))).toThrow(/"ten" is not an integer/);
  });
});

describe('readApp on a synthesized CDK app', () => {
  let app: AppDefinition;
  beforeAll(() => {
    app = readApp(asTemplate(synthNotesTemplate()));
  });

  it('names functions after their construct paths and finds their entries', () => {
    expect(app.stackName).toBe('NotesApp');
    expect(
      app.functions.map(({ name, entry, handlerExport, timeoutSeconds, memoryMb }) => ({
        name,
        entry,
        handlerExport,
        timeoutSeconds,
        memoryMb,
      })),
    ).toEqual([
      {
        name: 'Writer',
        entry: 'test/local/fixtures/writer.ts',
        handlerExport: 'handler',
        timeoutSeconds: 4,
        memoryMb: 128,
      },
      {
        name: 'Audit/Auditor',
        entry: 'test/local/fixtures/auditor.ts',
        handlerExport: 'main',
        timeoutSeconds: 5,
        memoryMb: 192,
      },
    ]);
    expect(app.skipped).toEqual([]);
  });

  it('keeps each function’s environment as the template writes it, intrinsics and all', () => {
    const auditor = app.functions.find((definition) => definition.name === 'Audit/Auditor');
    expect(auditor?.environment.AUDIT_LABEL).toEqual({
      'Fn::Join': [
        '',
        [{ Ref: 'AWS::Region' }, '/', { 'Fn::GetAtt': [expect.stringMatching(/^AuditQueue/), 'QueueName'] }],
      ],
    });
  });

  it('reads every setting of both mappings', () => {
    expect(app.mappings).toEqual([
      expect.objectContaining({
        functionName: 'Audit/Auditor',
        source: { kind: 'stream', arn: { 'Fn::GetAtt': [expect.stringMatching(/^Notes/), 'StreamArn'] } },
        batchSize: 5,
        maxBatchingWindowSeconds: 0,
        filterPatterns: [{ eventName: ['INSERT'] }],
        bisectBatchOnError: true,
        maxRetryAttempts: 2,
        maxRecordAgeSeconds: 3_600,
        reportBatchItemFailures: true,
        onFailureDestination: { 'Fn::GetAtt': [expect.stringMatching(/^AuditStreamFailures/), 'Arn'] },
        startingPosition: 'TRIM_HORIZON',
      }),
      expect.objectContaining({
        functionName: 'Audit/Auditor',
        source: { kind: 'queue', arn: { 'Fn::GetAtt': [expect.stringMatching(/^AuditQueue/), 'Arn'] } },
        batchSize: 3,
        reportBatchItemFailures: true,
      }),
    ]);
  });

  it('reads the routes and the schedule with its constant input', () => {
    expect(app.routes).toEqual([
      { method: 'PUT', path: '/notes/{noteId}', functionName: 'Writer' },
      { method: 'GET', path: '/notes/{noteId}', functionName: 'Writer' },
    ]);
    expect(app.schedules).toEqual([
      {
        name: 'Tick',
        functionName: 'Writer',
        expression: 'rate(1 minute)',
        rateSeconds: 60,
        input: { tick: true },
      },
    ]);
  });
});

describe('localName', () => {
  it('drops the stack segment and a trailing Resource, and falls back to the logical id', () => {
    const at = (path?: string): TemplateResource => ({
      Type: 'AWS::Lambda::Function',
      ...(path === undefined ? {} : { Metadata: { 'aws:cdk:path': path } }),
    });
    expect(localName('X1', at('OutboxExample/Outbox/Relay/Resource'))).toBe('Outbox/Relay');
    expect(localName('X1', at('OutboxExample/CreateOrder/Resource'))).toBe('CreateOrder');
    expect(localName('X1', at('OutboxExample/Outbox/Relay/DynamoDBEventSource:Outbox'))).toBe(
      'Outbox/Relay/DynamoDBEventSource:Outbox',
    );
    expect(localName('X1', at())).toBe('X1');
  });
});
