import { describe, expect, it } from 'vitest';
import { LocalRuntimeError } from '../../../infra/dev/local/local-runtime-error.ts';
import {
  type ResolutionContext,
  resolveString,
  resolveValue,
} from '../../../infra/dev/local/template/intrinsics.ts';

const QUEUE_URL = 'http://127.0.0.1:5000/123456789012/Notes-local-Audit-A1';

const context: ResolutionContext = {
  region: 'eu-west-1',
  accountId: '000000000000',
  stackName: 'Notes-local',
  stackId: 'arn:aws:cloudformation:eu-west-1:000000000000:stack/Notes-local/1',
  resources: new Map([
    [
      'Notes',
      {
        type: 'AWS::DynamoDB::Table',
        physicalId: 'Notes-local-Notes-X1',
        attributes: {
          StreamArn: 'arn:aws:dynamodb:eu-west-1:000000000000:table/Notes-local-Notes-X1/stream/2024',
        },
      },
    ],
    ['Audit', { type: 'AWS::SQS::Queue', physicalId: QUEUE_URL }],
    ['Writer', { type: 'AWS::Lambda::Function', physicalId: 'Notes-local-Writer-W1' }],
    ['WriterRole', { type: 'AWS::IAM::Role', physicalId: 'Notes-local-WriterRole-R1' }],
    ['Skipped', { type: 'AWS::ApiGateway::Stage', physicalId: '' }],
  ]),
  parameters: { Stage: 'dev' },
  mappings: { Sizes: { 'eu-west-1': { batch: '25' } } },
};

const resolve = (value: unknown): unknown => resolveValue(value, context, 'test value');

describe('resolveValue', () => {
  it('leaves literals alone and resolves Ref of resources, parameters and pseudo parameters', () => {
    expect(resolve('plain')).toBe('plain');
    expect(resolve(42)).toBe(42);
    expect(resolve({ Ref: 'Notes' })).toBe('Notes-local-Notes-X1');
    expect(resolve({ Ref: 'Audit' })).toBe(QUEUE_URL);
    expect(resolve({ Ref: 'Stage' })).toBe('dev');
    expect(resolve({ Ref: 'AWS::Region' })).toBe('eu-west-1');
    expect(resolve({ Ref: 'AWS::AccountId' })).toBe('000000000000');
    expect(resolve({ Ref: 'AWS::Partition' })).toBe('aws');
    expect(resolve({ Ref: 'AWS::URLSuffix' })).toBe('amazonaws.com');
    expect(resolve({ Ref: 'AWS::StackName' })).toBe('Notes-local');
    expect(resolve({ Ref: 'AWS::StackId' })).toBe(context.stackId);
  });

  it('resolves Fn::GetAtt from what the backend reported, or as AWS builds the attribute', () => {
    expect(resolve({ 'Fn::GetAtt': ['Notes', 'StreamArn'] })).toMatch(
      /table\/Notes-local-Notes-X1\/stream\//,
    );
    expect(resolve({ 'Fn::GetAtt': 'Notes.Arn' })).toBe(
      'arn:aws:dynamodb:eu-west-1:000000000000:table/Notes-local-Notes-X1',
    );
    expect(resolve({ 'Fn::GetAtt': ['Audit', 'Arn'] })).toBe(
      'arn:aws:sqs:eu-west-1:000000000000:Notes-local-Audit-A1',
    );
    expect(resolve({ 'Fn::GetAtt': ['Audit', 'QueueName'] })).toBe('Notes-local-Audit-A1');
    expect(resolve({ 'Fn::GetAtt': ['Audit', 'QueueUrl'] })).toBe(QUEUE_URL);
    expect(resolve({ 'Fn::GetAtt': ['Writer', 'Arn'] })).toBe(
      'arn:aws:lambda:eu-west-1:000000000000:function:Notes-local-Writer-W1',
    );
    expect(resolve({ 'Fn::GetAtt': ['WriterRole', 'Arn'] })).toBe(
      'arn:aws:iam::000000000000:role/Notes-local-WriterRole-R1',
    );
  });

  it('joins, selects and splits', () => {
    expect(
      resolve({ 'Fn::Join': ['/', [{ Ref: 'AWS::Region' }, { 'Fn::GetAtt': ['Audit', 'QueueName'] }]] }),
    ).toBe('eu-west-1/Notes-local-Audit-A1');
    expect(resolve({ 'Fn::Select': [1, { 'Fn::Split': [',', 'a,b,c'] }] })).toBe('b');
    expect(resolve({ 'Fn::FindInMap': ['Sizes', { Ref: 'AWS::Region' }, 'batch'] })).toBe('25');
  });

  it('substitutes names, attributes, pseudo parameters, its own variables and escapes in Fn::Sub', () => {
    expect(
      resolve({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
        'Fn::Sub': '${Notes}|${Audit.QueueName}|${AWS::Region}|${Stage}|${!Literal}',
      }),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: what Fn::Sub writes for the escape ${!Literal}
    ).toBe('Notes-local-Notes-X1|Notes-local-Audit-A1|eu-west-1|dev|${Literal}');
    expect(
      resolve({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
        'Fn::Sub': ['${Prefix}-${Notes}', { Prefix: { 'Fn::Join': ['', ['no', 'tes']] } }],
      }),
    ).toBe('notes-Notes-local-Notes-X1');
  });

  it('builds the URL and ARN of a queue another stack names explicitly from the pseudo parameters alone', () => {
    expect(
      resolve({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
        'Fn::Sub': 'https://sqs.${AWS::Region}.${AWS::URLSuffix}/${AWS::AccountId}/shop-receipts',
      }),
    ).toBe('https://sqs.eu-west-1.amazonaws.com/000000000000/shop-receipts');
    expect(
      resolve({
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':sqs:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            ':shop-receipts',
          ],
        ],
      }),
    ).toBe('arn:aws:sqs:eu-west-1:000000000000:shop-receipts');
    const china = { ...context, partition: 'aws-cn', urlSuffix: 'amazonaws.com.cn' };
    expect(
      resolveValue(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
        { 'Fn::Sub': '${AWS::Partition}|${AWS::URLSuffix}' },
        china,
        'test value',
      ),
    ).toBe('aws-cn|amazonaws.com.cn');
  });

  it('imports the value another stack deployed before exports, by its export name', () => {
    const importing: ResolutionContext = {
      ...context,
      exports: new Map([['Shop:ExportsOutputRefReceipts', 'Shop-local-Receipts-R1']]),
    };
    expect(
      resolveValue({ 'Fn::ImportValue': 'Shop:ExportsOutputRefReceipts' }, importing, 'test value'),
    ).toBe('Shop-local-Receipts-R1');
    expect(
      resolveValue(
        { 'Fn::ImportValue': { 'Fn::Join': [':', ['Shop', 'ExportsOutputRefReceipts']] } },
        importing,
        'test value',
      ),
    ).toBe('Shop-local-Receipts-R1');
    expect(() =>
      resolveValue({ 'Fn::ImportValue': 'Shop:Missing' }, importing, 'function Courier, variable TABLE'),
    ).toThrow(
      'function Courier, variable TABLE: Fn::ImportValue Shop:Missing: no export named Shop:Missing found (no stack deployed before this one exports it)',
    );
    expect(() => resolve({ 'Fn::ImportValue': 'Shop:ExportsOutputRefReceipts' })).toThrow(
      /no export named Shop:ExportsOutputRefReceipts found/,
    );
  });

  it('resolves intrinsics nested in objects and arrays, and drops AWS::NoValue', () => {
    expect(
      resolve({
        tables: [{ Ref: 'Notes' }, { Ref: 'AWS::NoValue' }],
        queue: { url: { Ref: 'Audit' }, gone: { Ref: 'AWS::NoValue' } },
      }),
    ).toEqual({ tables: ['Notes-local-Notes-X1'], queue: { url: QUEUE_URL } });
  });

  it('fails with what it could not resolve and where', () => {
    const failure = (value: unknown): unknown => {
      try {
        resolveValue(value, context, 'function Writer, variable TABLE');
        return undefined;
      } catch (error) {
        return error;
      }
    };
    expect(failure({ Ref: 'Missing' })).toBeInstanceOf(LocalRuntimeError);
    expect(failure({ Ref: 'Missing' })).toMatchObject({
      code: 'UNRESOLVABLE_VALUE',
      message: 'function Writer, variable TABLE: Ref Missing: no such resource or parameter in the stack',
    });
    expect(failure({ Ref: 'Skipped' })).toMatchObject({
      message: /the backend did not create this AWS::ApiGateway::Stage/,
    });
    expect(failure({ 'Fn::GetAtt': ['Writer', 'SnapStartResponse'] })).toMatchObject({
      message: /cannot tell this attribute of a AWS::Lambda::Function/,
    });
    expect(failure({ 'Fn::If': ['IsProd', 'a', 'b'] })).toMatchObject({ message: /Fn::If is not supported/ });
    expect(failure({ 'Fn::Join': ['', 'not a list'] })).toMatchObject({ message: /malformed Fn::Join/ });
  });
});

describe('resolveString', () => {
  it('writes numbers out and refuses values that are not text', () => {
    expect(resolveString(30, context, 'TIMEOUT')).toBe('30');
    expect(resolveString({ Ref: 'Notes' }, context, 'TABLE')).toBe('Notes-local-Notes-X1');
    expect(() => resolveString({ 'Fn::Split': [',', 'a,b'] }, context, 'LIST')).toThrow(/LIST: resolves to/);
  });
});
