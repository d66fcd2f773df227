import type { Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { batchItemFailureIds } from '../../infra/dev/local/events/batch-response.ts';
import { messagesToDelete, toLambdaSqsRecord } from '../../infra/dev/local/events/sqs-event.ts';

const source = { queueArn: 'arn:aws:sqs:us-east-1:123456789012:orders', region: 'us-east-1' };

/** A message as ReceiveMessage (SDK v3) returns it with all attributes requested. */
function sdkMessage(id = 'm-1', overrides: Partial<Message> = {}): Message {
  return {
    MessageId: id,
    ReceiptHandle: `rh-${id}`,
    MD5OfBody: 'md5',
    Body: '{"hello":"world"}',
    Attributes: {
      SenderId: 'AIDA',
      SentTimestamp: '1714564800000',
      ApproximateReceiveCount: '2',
      ApproximateFirstReceiveTimestamp: '1714564800100',
    },
    ...overrides,
  };
}

describe('toLambdaSqsRecord', () => {
  it('gives the record Lambda would', () => {
    expect(toLambdaSqsRecord(sdkMessage(), source)).toEqual({
      messageId: 'm-1',
      receiptHandle: 'rh-m-1',
      body: '{"hello":"world"}',
      attributes: {
        SenderId: 'AIDA',
        SentTimestamp: '1714564800000',
        ApproximateReceiveCount: '2',
        ApproximateFirstReceiveTimestamp: '1714564800100',
      },
      messageAttributes: {},
      md5OfBody: 'md5',
      eventSource: 'aws:sqs',
      eventSourceARN: source.queueArn,
      awsRegion: 'us-east-1',
    });
  });

  it('converts message attributes to Lambda’s camelCase form with base64 binaries', () => {
    const record = toLambdaSqsRecord(
      sdkMessage('m-2', {
        MD5OfMessageAttributes: 'md5attrs',
        MessageAttributes: {
          traceparent: { DataType: 'String', StringValue: '00-abc' },
          blob: { DataType: 'Binary', BinaryValue: new Uint8Array([104, 105]) },
        },
      }),
      source,
    );
    expect(record.md5OfMessageAttributes).toBe('md5attrs');
    expect(record.messageAttributes).toEqual({
      traceparent: { stringValue: '00-abc', stringListValues: [], binaryListValues: [], dataType: 'String' },
      blob: { binaryValue: 'aGk=', stringListValues: [], binaryListValues: [], dataType: 'Binary' },
    });
  });
});

describe('messagesToDelete', () => {
  const records: SQSRecord[] = ['a', 'b', 'c'].map((id) => toLambdaSqsRecord(sdkMessage(id), source));
  const ids = (list: SQSRecord[] | undefined) => list?.map((record) => record.messageId);

  it('deletes every message after a success', () => {
    expect(ids(messagesToDelete(records, undefined))).toEqual(['a', 'b', 'c']);
    expect(ids(messagesToDelete(records, { batchItemFailures: [] }))).toEqual(['a', 'b', 'c']);
  });

  it('keeps the reported failures for redelivery', () => {
    expect(ids(messagesToDelete(records, { batchItemFailures: [{ itemIdentifier: 'b' }] }))).toEqual([
      'a',
      'c',
    ]);
  });

  it('deletes nothing when the response names a message that is not in the batch', () => {
    expect(messagesToDelete(records, { batchItemFailures: [{ itemIdentifier: 'zzz' }] })).toBeUndefined();
  });
});

describe('batchItemFailureIds', () => {
  it('reads item identifiers and rejects malformed responses', () => {
    expect(batchItemFailureIds(null)).toEqual([]);
    expect(batchItemFailureIds({})).toEqual([]);
    expect(batchItemFailureIds({ batchItemFailures: [{ itemIdentifier: 'x' }] })).toEqual(['x']);
    expect(batchItemFailureIds('ok')).toBeUndefined();
    expect(batchItemFailureIds({ batchItemFailures: 'x' })).toBeUndefined();
    expect(batchItemFailureIds({ batchItemFailures: [{ itemIdentifier: '' }] })).toBeUndefined();
    expect(batchItemFailureIds({ batchItemFailures: [{}] })).toBeUndefined();
  });
});
