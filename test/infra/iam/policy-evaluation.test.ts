import { describe, expect, it } from 'vitest';
import { isAllowed, matchesPattern, type ResolvedStatement } from './policy-evaluation.ts';

const TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/Orders';

const allow = (actions: string[], resources: string[], condition?: ResolvedStatement['condition']) =>
  ({ effect: 'Allow', actions, resources, ...(condition === undefined ? {} : { condition }) }) as const;

describe('matchesPattern', () => {
  it.each([
    ['arn:aws:s3:::bucket/claim-check/*', 'arn:aws:s3:::bucket/claim-check/a/b', true],
    ['arn:aws:s3:::bucket/claim-check/*', 'arn:aws:s3:::bucket/other/a', false],
    ['arn:aws:logs:r:a:log-group:g:*', 'arn:aws:logs:r:a:log-group:g:*', true],
    [`${TABLE}`, `${TABLE}/index/byAggregate`, false],
    [`${TABLE}/index/*`, `${TABLE}/index/byAggregate`, true],
    ['arn:aws:sqs:us-east-1:1:queue-?', 'arn:aws:sqs:us-east-1:1:queue-a', true],
    ['arn:aws:sqs:us-east-1:1:queue.a', 'arn:aws:sqs:us-east-1:1:queueXa', false],
    ['*', 'anything', true],
  ])('%s matches %s: %s', (pattern, value, expected) => {
    expect(matchesPattern(pattern, value)).toBe(expected);
  });
});

describe('isAllowed', () => {
  it('allows an action on a resource an Allow statement names, and nothing else', () => {
    const statements = [allow(['dynamodb:GetItem', 'dynamodb:PutItem'], [TABLE])];

    expect(isAllowed({ action: 'dynamodb:GetItem', resource: TABLE }, statements)).toBe(true);
    expect(isAllowed({ action: 'dynamodb:DeleteItem', resource: TABLE }, statements)).toBe(false);
    expect(isAllowed({ action: 'dynamodb:GetItem', resource: `${TABLE}-other` }, statements)).toBe(false);
  });

  it('lets an explicit Deny win over an Allow', () => {
    const statements: ResolvedStatement[] = [
      allow(['dynamodb:*'], [TABLE]),
      { effect: 'Deny', actions: ['dynamodb:DeleteItem'], resources: ['*'] },
    ];

    expect(isAllowed({ action: 'dynamodb:DeleteItem', resource: TABLE }, statements)).toBe(false);
    expect(isAllowed({ action: 'dynamodb:GetItem', resource: TABLE }, statements)).toBe(true);
  });

  it('holds an UpdateItem to the attributes and return values its conditions list', () => {
    const statements = [
      allow(['dynamodb:UpdateItem'], [TABLE], {
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['status', 'confirmedAt'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
      }),
    ];
    const update = { action: 'dynamodb:UpdateItem', resource: TABLE };

    expect(isAllowed({ ...update, attributes: ['status'], returnValues: 'NONE' }, statements)).toBe(true);
    expect(
      isAllowed({ ...update, attributes: ['status', 'payload'], returnValues: 'NONE' }, statements),
    ).toBe(false);
    expect(isAllowed({ ...update, attributes: ['status'], returnValues: 'ALL_NEW' }, statements)).toBe(false);
    // A key the request does not set passes an IfExists condition.
    expect(isAllowed({ ...update, attributes: ['status'] }, statements)).toBe(true);
  });

  it('refuses to judge a condition it cannot evaluate', () => {
    const statements = [allow(['sqs:SendMessage'], ['*'], { StringEquals: { 'aws:SourceVpc': ['vpc-1'] } })];

    expect(() => isAllowed({ action: 'sqs:SendMessage', resource: 'arn:aws:sqs:r:a:q' }, statements)).toThrow(
      /aws:SourceVpc/,
    );
  });
});
