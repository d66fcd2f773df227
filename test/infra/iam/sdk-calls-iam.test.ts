import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityBatchCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { confirmUpdate } from '../../../shared/aws/outbox-table/transition-updates.ts';
import { describeCommand, updatedAttributes } from '../../support/sdk-calls.ts';
import {
  describePermission,
  keyPermissions,
  logPermissions,
  permissionsForCall,
  permissionsForEventSource,
} from '../../support/sdk-calls-iam.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
const needs = (command: { input?: unknown }) =>
  permissionsForCall(describeCommand('Fn', command)).map(describePermission);

describe('describeCommand', () => {
  it('names the top-level attributes an update sets, removes and appends to, through placeholders', () => {
    expect(
      updatedAttributes(
        'SET #s = :s, a.b = :x, #h = list_append(if_not_exists(#h, :e), :v) REMOVE #d, c[0]',
        {
          '#s': 'status',
          '#h': 'history',
          '#d': 'dueShard',
        },
      ),
    ).toEqual(['a', 'c', 'dueShard', 'history', 'status']);
    expect(updatedAttributes('ADD #n :one DELETE tags :t', { '#n': 'count' })).toEqual(['count', 'tags']);
  });

  it('records the real confirmation’s attributes and that it asks for no return values', () => {
    const update = confirmUpdate({ messageId: 'm', now: new Date(0), outcome: 'APPLIED' });
    const call = describeCommand('Consumer', new UpdateCommand({ TableName: 'outbox', ...update }));
    expect(call).toMatchObject({
      service: 'dynamodb',
      command: 'UpdateItem',
      table: 'outbox',
      returnValues: 'NONE',
    });
    expect(call.attributes).toContain('status');
    expect(call.attributes).not.toContain('payload');
  });
});

describe('permissionsForCall', () => {
  it('authorises each item of a transaction as its own action on its own table', () => {
    const transaction = new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: 'inbox', Item: { messageId: 'm' } } },
        { Update: { TableName: 'stock', Key: { sku: 's' }, UpdateExpression: 'SET n = :n' } },
        {
          ConditionCheck: {
            TableName: 'orders',
            Key: { id: 'o' },
            ConditionExpression: 'attribute_exists(id)',
          },
        },
        { Delete: { TableName: 'holds', Key: { id: 'h' } } },
      ],
    });
    expect(needs(transaction)).toEqual([
      'dynamodb:PutItem on table inbox',
      'dynamodb:UpdateItem on table stock',
      'dynamodb:ConditionCheckItem on table orders',
      'dynamodb:DeleteItem on table holds',
    ]);
  });

  it('authorises a query of an index on the index, not the table', () => {
    expect(needs(new QueryCommand({ TableName: 'outbox', IndexName: 'due' }))).toEqual([
      'dynamodb:Query on index outbox/due',
    ]);
  });

  it('authorises SQS batches as their single-message actions', () => {
    expect(needs(new SendMessageBatchCommand({ QueueUrl: QUEUE, Entries: [] }))).toEqual([
      `sqs:SendMessage on queue ${QUEUE}`,
    ]);
    expect(needs(new ChangeMessageVisibilityBatchCommand({ QueueUrl: QUEUE, Entries: [] }))).toEqual([
      `sqs:ChangeMessageVisibility on queue ${QUEUE}`,
    ]);
  });

  it('authorises an S3 object on its bucket and key prefix', () => {
    expect(needs(new PutObjectCommand({ Bucket: 'b', Key: 'claim-check/2026/m.json' }))).toEqual([
      's3:PutObject on objects b/claim-check/2026/*',
    ]);
  });
});

describe('what Lambda needs besides the code', () => {
  it('reads the stream (ListStreams on *) and sends a failed batch to the on-failure queue', () => {
    expect(
      permissionsForEventSource({ kind: 'stream', table: 'outbox', onFailureQueue: 'failures' }).map(
        describePermission,
      ),
    ).toEqual([
      'dynamodb:DescribeStream on stream outbox',
      'dynamodb:GetRecords on stream outbox',
      'dynamodb:GetShardIterator on stream outbox',
      'dynamodb:ListStreams on *',
      'sqs:SendMessage on queue failures',
    ]);
  });

  it('receives, deletes, hides and reads the attributes of an SQS source', () => {
    expect(permissionsForEventSource({ kind: 'queue', queue: 'q' }).map(describePermission).sort()).toEqual([
      'sqs:ChangeMessageVisibility on queue q',
      'sqs:DeleteMessage on queue q',
      'sqs:GetQueueAttributes on queue q',
      'sqs:ReceiveMessage on queue q',
    ]);
  });

  it('writes logs to its own log group only', () => {
    expect(logPermissions('fn-logs').map(describePermission)).toEqual([
      'logs:CreateLogStream on logGroup fn-logs',
      'logs:PutLogEvents on logGroup fn-logs',
    ]);
  });
});

describe('keyPermissions', () => {
  const key = (target: { kind: string; name?: string }) => (target.name === 'plain' ? undefined : 'cmk');

  it('asks decrypt for reads, also encrypt and data keys for writes, and nothing for AWS-owned keys', () => {
    const permissions = [
      ...permissionsForCall(
        describeCommand('Fn', new QueryCommand({ TableName: 'outbox', IndexName: 'due' })),
      ),
      ...permissionsForCall(describeCommand('Fn', new UpdateCommand({ TableName: 'plain', Key: {} }))),
    ];
    expect(keyPermissions(permissions, key).map(describePermission)).toEqual([
      'kms:Decrypt on key cmk',
      'kms:DescribeKey on key cmk',
    ]);
    const write = permissionsForCall(
      describeCommand('Fn', new UpdateCommand({ TableName: 'outbox', Key: {} })),
    );
    expect(keyPermissions(write, key).map(describePermission)).toEqual([
      'kms:Decrypt on key cmk',
      'kms:DescribeKey on key cmk',
      'kms:Encrypt on key cmk',
      'kms:GenerateDataKey* on key cmk',
    ]);
  });

  it('asks a sender for a data key and decrypt, a receiver (the SQS event source) for decrypt', () => {
    const send = permissionsForCall(
      describeCommand('Fn', new SendMessageBatchCommand({ QueueUrl: QUEUE, Entries: [] })),
    );
    expect(keyPermissions(send, key).map(describePermission)).toEqual([
      'kms:Decrypt on key cmk',
      'kms:GenerateDataKey on key cmk',
    ]);
    const receive = permissionsForEventSource({ kind: 'queue', queue: QUEUE });
    expect(keyPermissions(receive, key).map(describePermission)).toEqual(['kms:Decrypt on key cmk']);
  });
});
