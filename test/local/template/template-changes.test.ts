import { describe, expect, it } from 'vitest';
import type { CloudFormationTemplate } from '../../../infra/dev/local/template/cloudformation-template.ts';
import {
  describeTemplateChanges,
  templateChanges,
} from '../../../infra/dev/local/template/template-changes.ts';

const fn = (code: string, timeout = 10) => ({
  Type: 'AWS::Lambda::Function',
  Properties: { Code: { S3Key: code }, Timeout: timeout },
  Metadata: { 'aws:cdk:path': 'App/Fn/Resource', 'aws:asset:path': code },
});
const template = (resources: Record<string, unknown>): CloudFormationTemplate =>
  ({ Resources: resources }) as unknown as CloudFormationTemplate;

describe('templateChanges', () => {
  it('sees nothing in a new asset of the same function: hot reload serves that', () => {
    expect(templateChanges(template({ Fn: fn('a.zip') }), template({ Fn: fn('b.zip') }))).toBeUndefined();
  });

  it('names a resource added, one removed and one whose settings changed', () => {
    const changes = templateChanges(
      template({
        Fn: fn('a.zip'),
        Old: { Type: 'AWS::SQS::Queue', Metadata: { 'aws:cdk:path': 'App/Old/Resource' } },
      }),
      template({
        Fn: fn('a.zip', 30),
        Table: { Type: 'AWS::DynamoDB::Table', Metadata: { 'aws:cdk:path': 'App/Table/Resource' } },
      }),
    );
    expect(changes).toEqual({ added: ['Table'], removed: ['Old'], changed: ['Fn'], outputsChanged: false });
    expect(
      describeTemplateChanges(changes ?? { added: [], removed: [], changed: [], outputsChanged: false }),
    ).toBe('added Table; removed Old; changed Fn');
  });
});
