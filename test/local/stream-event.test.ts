import type { _Record as SdkStreamRecord } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import {
  StreamDiscardCondition,
  streamFailureMessage,
  toLambdaStreamRecord,
} from '../../infra/dev/local/events/stream-event.ts';
import { expiredPrefix } from '../../infra/dev/local/events/stream-poller.ts';

const STREAM_ARN = 'arn:aws:dynamodb:us-east-1:123456789012:table/outbox/stream/2024-05-01T00:00:00.000';

/** A record as the DynamoDB Streams API (SDK v3) returns it. */
function sdkStreamRecord(
  sequenceNumber = '1100000000017454423009',
  created = '2024-05-01T12:00:00.000Z',
): SdkStreamRecord {
  return {
    eventID: 'e-1',
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: new Date(created),
      Keys: { messageId: { S: 'm-1' } },
      NewImage: {
        messageId: { S: 'm-1' },
        attempts: { N: '0' },
        blob: { B: new Uint8Array([1, 2, 3]) },
        nested: { M: { tags: { SS: ['a'] }, list: { L: [{ BOOL: true }, { NULL: true }] } } },
      },
      SequenceNumber: sequenceNumber,
      SizeBytes: 120,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

describe('toLambdaStreamRecord', () => {
  it('gives the record Lambda would: source ARN, epoch-second time, base64 binaries', () => {
    expect(toLambdaStreamRecord(sdkStreamRecord(), STREAM_ARN)).toEqual({
      eventID: 'e-1',
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      eventSourceARN: STREAM_ARN,
      dynamodb: {
        ApproximateCreationDateTime: 1714564800,
        Keys: { messageId: { S: 'm-1' } },
        NewImage: {
          messageId: { S: 'm-1' },
          attempts: { N: '0' },
          blob: { B: 'AQID' },
          nested: { M: { tags: { SS: ['a'] }, list: { L: [{ BOOL: true }, { NULL: true }] } } },
        },
        SequenceNumber: '1100000000017454423009',
        SizeBytes: 120,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    });
  });

  it('survives a JSON round trip unchanged, as a Lambda event does', () => {
    const record = toLambdaStreamRecord(sdkStreamRecord(), STREAM_ARN);
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
  });
});

describe('streamFailureMessage', () => {
  it('describes the discarded batch with metadata only, like Lambda’s invocation record', () => {
    const records = [
      sdkStreamRecord('101', '2024-05-01T12:00:00.000Z'),
      sdkStreamRecord('105', '2024-05-01T12:00:03.000Z'),
    ].map((record) => toLambdaStreamRecord(record, STREAM_ARN));
    const message = streamFailureMessage({
      records,
      condition: StreamDiscardCondition.RETRIES_EXHAUSTED,
      shardId: 'shardId-1',
      streamArn: STREAM_ARN,
      functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:relay',
      requestId: 'req-9',
      invokeCount: 11,
      functionError: true,
      now: new Date('2024-05-01T12:01:00.000Z'),
    });
    expect(message).toEqual({
      requestContext: {
        requestId: 'req-9',
        functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:relay',
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: 11,
      },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      timestamp: '2024-05-01T12:01:00.000Z',
      DDBStreamBatchInfo: {
        shardId: 'shardId-1',
        startSequenceNumber: '101',
        endSequenceNumber: '105',
        approximateArrivalOfFirstRecord: '2024-05-01T12:00:00.000Z',
        approximateArrivalOfLastRecord: '2024-05-01T12:00:03.000Z',
        batchSize: 2,
        streamArn: STREAM_ARN,
      },
    });
    expect(JSON.stringify(message)).not.toContain('NewImage');
  });
});

describe('expiredPrefix', () => {
  const records = ['2024-05-01T10:00:00.000Z', '2024-05-01T11:30:00.000Z', '2024-05-01T10:30:00.000Z'].map(
    (created, index) => toLambdaStreamRecord(sdkStreamRecord(String(100 + index), created), STREAM_ARN),
  );
  const now = new Date('2024-05-01T12:00:00.000Z').getTime();

  it('returns the leading records older than the maximum age', () => {
    expect(expiredPrefix(records, 3_600, now).map((record) => record.dynamodb?.SequenceNumber)).toEqual([
      '100',
    ]);
  });

  it('keeps everything when the maximum age is -1 (infinite)', () => {
    expect(expiredPrefix(records, -1, now)).toEqual([]);
  });
});
