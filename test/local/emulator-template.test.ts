import { describe, expect, it } from 'vitest';
import {
  type CloudFormationTemplate,
  PLACEHOLDER_FUNCTION_CODE,
  templateForEmulator,
} from '../../infra/dev/local/backends/emulator-template.ts';
import { LocalRuntimeError } from '../../infra/dev/local/local-runtime-error.ts';

const STACK = 'OutboxExample-local';

function cdkTemplate(): CloudFormationTemplate {
  return {
    Description: 'example',
    Parameters: {
      BootstrapVersion: {
        Type: 'AWS::SSM::Parameter::Value<String>',
        Default: '/cdk-bootstrap/hnb659fds/version',
      },
      Other: { Type: 'String' },
    },
    Rules: { CheckBootstrapVersion: { Assertions: [] } },
    Resources: {
      Table: { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [] } },
      Relay: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Code: {
            // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
            S3Bucket: { 'Fn::Sub': 'cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}' },
            S3Key: 'abc.zip',
          },
          Handler: 'index.handler',
          Runtime: 'nodejs22.x',
          Role: { 'Fn::GetAtt': ['RelayRole', 'Arn'] },
          Environment: { Variables: { TABLE: { Ref: 'Table' } } },
        },
        DependsOn: ['RelayRole', 'LogRetention'],
        Metadata: { 'aws:cdk:path': 'Example/Relay/Resource', 'aws:asset:path': 'asset.abc' },
      },
      CDKMetadata: { Type: 'AWS::CDK::Metadata', Properties: { Analytics: 'v2:deflate64:xyz' } },
      RelayRole: { Type: 'AWS::IAM::Role', Properties: {} },
      RelayMapping: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: {
          FunctionName: { Ref: 'Relay' },
          EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
        },
      },
      LogRetention: { Type: 'Custom::LogRetention', Properties: { ServiceToken: 'arn' } },
    },
    Outputs: { tableName: { Value: { Ref: 'Table' } } },
  };
}

describe('templateForEmulator', () => {
  it('removes event source mappings, which moto would run itself and break the stream and queue', () => {
    const result = templateForEmulator(cdkTemplate(), STACK);
    expect(Object.values(result.Resources).map((resource) => resource.Type)).not.toContain(
      'AWS::Lambda::EventSourceMapping',
    );
  });

  it('removes Lambda-backed custom resources and the dependencies on them', () => {
    const result = templateForEmulator(cdkTemplate(), STACK);
    expect(result.Resources.LogRetention).toBeUndefined();
    expect(result.Resources.Relay?.DependsOn).toEqual(['RelayRole']);
  });

  it('removes the CDK bootstrap-version rule and parameter and keeps other parameters', () => {
    const result = templateForEmulator(cdkTemplate(), STACK);
    expect(result.Rules).toBeUndefined();
    expect(result.Parameters).toEqual({ Other: { Type: 'String' } });
  });

  it('gives every function inline placeholder code instead of the CDK asset bucket', () => {
    const relay = templateForEmulator(cdkTemplate(), STACK).Resources.Relay;
    expect(relay?.Properties?.Code).toEqual({ ZipFile: PLACEHOLDER_FUNCTION_CODE });
    expect(relay?.Properties?.Handler).toBe('index.handler');
    expect(relay?.Properties?.Role).toEqual({ 'Fn::GetAtt': ['RelayRole', 'Arn'] });
  });

  it('writes placeholder code that moto can also read back as base64 when it updates the function', () => {
    const base64Letters = PLACEHOLDER_FUNCTION_CODE.replace(/[^A-Za-z0-9+/]/g, '');
    expect(PLACEHOLDER_FUNCTION_CODE).not.toContain('=');
    expect(base64Letters.length % 4).toBe(0);
  });

  it('drops what changes without the resources changing: environment values built from intrinsics, metadata, CDK analytics', () => {
    const result = templateForEmulator(cdkTemplate(), STACK);
    expect(result.Resources.Relay?.Properties?.Environment).toBeUndefined();
    expect(result.Resources.Relay?.Metadata).toBeUndefined();
    expect(result.Resources.CDKMetadata).toBeUndefined();
  });

  it('keeps the literal environment values, which operator tools read from the deployed template', () => {
    const template = cdkTemplate();
    const relay = template.Resources.Relay;
    const result = templateForEmulator(
      {
        ...template,
        Resources: {
          ...template.Resources,
          Relay: {
            ...relay,
            Type: 'AWS::Lambda::Function',
            Properties: {
              ...relay?.Properties,
              Environment: { Variables: { TABLE: { Ref: 'Table' }, DUE_SHARDS: '16' } },
            },
          },
        },
      },
      STACK,
    );
    expect(result.Resources.Relay?.Properties?.Environment).toEqual({ Variables: { DUE_SHARDS: '16' } });
  });

  it('keeps SUBSCRIPTIONS (derived queue URLs, which the operator tools read) and the subscriber metadata', () => {
    const template = cdkTemplate();
    const relay = template.Resources.Relay;
    const derived = {
      'Fn::Join': [
        '',
        ['{"order.created":{"loyalty":"https://sqs.', { Ref: 'AWS::Region' }, '/Orders-loyalty"}}'],
      ],
    };
    const result = templateForEmulator(
      {
        ...template,
        Resources: {
          ...template.Resources,
          Relay: {
            ...relay,
            Type: 'AWS::Lambda::Function',
            Metadata: {
              'serverless-outbox:subscriber': 'loyalty',
              'serverless-outbox:outbox': 'Orders',
              'aws:cdk:path': 'x',
            },
            Properties: {
              ...relay?.Properties,
              Environment: {
                Variables: {
                  SUBSCRIPTIONS: derived,
                  MIXED: { 'Fn::Join': ['', ['x', { Ref: 'Table' }]] },
                  TABLE: { Ref: 'Table' },
                },
              },
            },
          },
        },
      },
      STACK,
    );
    expect(result.Resources.Relay?.Properties?.Environment).toEqual({
      Variables: { SUBSCRIPTIONS: derived },
    });
    expect(result.Resources.Relay?.Metadata).toEqual({
      'serverless-outbox:subscriber': 'loyalty',
      'serverless-outbox:outbox': 'Orders',
    });
  });

  it('turns templates that differ only in code, intrinsic environment values or metadata into the same template', () => {
    const changed = cdkTemplate();
    const relay = changed.Resources.Relay;
    const edited: CloudFormationTemplate = {
      ...changed,
      Resources: {
        ...changed.Resources,
        Relay: {
          ...relay,
          Type: 'AWS::Lambda::Function',
          Properties: {
            ...relay?.Properties,
            Environment: { Variables: { TABLE: { Ref: 'OtherTable' } } },
            Code: { S3Key: 'new.zip' },
          },
          Metadata: { 'aws:asset:path': 'asset.def' },
        },
      },
    };
    expect(templateForEmulator(edited, STACK)).toEqual(templateForEmulator(cdkTemplate(), STACK));
  });

  it('keeps everything else, outputs included, and leaves its input untouched', () => {
    const input = cdkTemplate();
    const snapshot = structuredClone(input);
    const result = templateForEmulator(input, STACK);
    expect(input).toEqual(snapshot);
    expect(result.Description).toBe('example');
    expect(result.Outputs).toEqual(input.Outputs);
    expect(result.Resources.Table).toEqual(input.Resources.Table);
  });

  it('drops DependsOn entirely when only removed resources were listed', () => {
    const template = cdkTemplate();
    const result = templateForEmulator(
      {
        ...template,
        Resources: { ...template.Resources, Queue: { Type: 'AWS::SQS::Queue', DependsOn: 'LogRetention' } },
      },
      STACK,
    );
    expect(result.Resources.Queue).toEqual({ Type: 'AWS::SQS::Queue' });
  });

  it('fails loudly when a kept resource or output needs a removed one', () => {
    const template = cdkTemplate();
    const referring = (value: unknown): CloudFormationTemplate => ({
      ...template,
      Outputs: { mapping: { Value: value } },
    });
    expect(() => templateForEmulator(referring({ Ref: 'RelayMapping' }), STACK)).toThrow(LocalRuntimeError);
    expect(() => templateForEmulator(referring({ 'Fn::GetAtt': 'LogRetention.Arn' }), STACK)).toThrow(
      /LogRetention/,
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
    expect(() => templateForEmulator(referring({ 'Fn::Sub': 'x-${Table}-${RelayMapping}' }), STACK)).toThrow(
      /RelayMapping/,
    );
    expect(() =>
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
      templateForEmulator(referring({ 'Fn::Sub': '${!RelayMapping}-${AWS::Region}' }), STACK),
    ).not.toThrow();
  });

  it('names an unnamed FIFO queue <stack>-<LogicalId>.fifo within 80 characters, as SQS requires, and leaves other queues alone', () => {
    const logicalId = `OrderEventsQueue${'X'.repeat(80)}`;
    const result = templateForEmulator(
      {
        ...cdkTemplate(),
        Resources: {
          [logicalId]: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } },
          Named: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true, QueueName: 'mine.fifo' } },
          Standard: { Type: 'AWS::SQS::Queue', Properties: {} },
        },
      },
      STACK,
    );

    const name = String(result.Resources[logicalId]?.Properties?.QueueName);
    expect(name).toMatch(/^OutboxExample-local-OrderEventsQueueX+\.fifo$/);
    expect(name).toHaveLength(80);
    expect(result.Resources.Named?.Properties?.QueueName).toBe('mine.fifo');
    expect(result.Resources.Standard?.Properties).toEqual({});
  });
});
