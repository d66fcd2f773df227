/**
 * Turns DynamoDB Streams API records into the records Lambda hands a function, and builds the metadata
 * message Lambda sends to a stream mapping's on-failure destination. Pure.
 */
import type {
  AttributeValue as SdkAttributeValue,
  _Record as SdkStreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';

/**
 * Why Lambda gave up on a batch: retries exhausted, or records older than MaximumRecordAgeInSeconds.
 * The values are the `requestContext.condition` of Lambda's invocation record.
 */
export const StreamDiscardCondition = {
  RETRIES_EXHAUSTED: 'RetryAttemptsExhausted',
  RECORD_AGE_EXCEEDED: 'RecordAgeExceeded',
} as const;

/** One of the {@link StreamDiscardCondition} values. */
export type StreamDiscardCondition = (typeof StreamDiscardCondition)[keyof typeof StreamDiscardCondition];

/** The message Lambda sends to a stream mapping's on-failure destination: metadata only, never the records. */
export interface StreamFailureMessage {
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    readonly condition: StreamDiscardCondition;
    readonly approximateInvokeCount: number;
  };
  readonly responseContext: {
    readonly statusCode: number;
    readonly executedVersion: string;
    readonly functionError?: string;
  };
  readonly version: '1.0';
  readonly timestamp: string;
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly approximateArrivalOfFirstRecord: string;
    readonly approximateArrivalOfLastRecord: string;
    readonly batchSize: number;
    readonly streamArn: string;
  };
}

/**
 * The record Lambda would hand the function for a Streams API record: the same fields, binary values as
 * base64 and `ApproximateCreationDateTime` as epoch seconds, as in Lambda's JSON event.
 */
export function toLambdaStreamRecord(record: SdkStreamRecord, streamArn: string): DynamoDBRecord {
  const stream = record.dynamodb ?? {};
  const created = stream.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion,
    dynamodb: {
      ...(created === undefined ? {} : { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) }),
      ...(stream.Keys === undefined ? {} : { Keys: toLambdaImage(stream.Keys) }),
      ...(stream.NewImage === undefined ? {} : { NewImage: toLambdaImage(stream.NewImage) }),
      ...(stream.OldImage === undefined ? {} : { OldImage: toLambdaImage(stream.OldImage) }),
      SequenceNumber: stream.SequenceNumber,
      SizeBytes: stream.SizeBytes,
      StreamViewType: stream.StreamViewType,
    },
    eventSourceARN: streamArn,
    // TTL deletions carry the service principal; Lambda passes it through.
    ...(record.userIdentity === undefined ? {} : { userIdentity: record.userIdentity }),
  };
}

/** A whole item image in Lambda's JSON form. */
export function toLambdaImage(image: Record<string, SdkAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaAttribute(value)]));
}

function toLambdaAttribute(value: SdkAttributeValue): AttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((item) => Buffer.from(item).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaAttribute) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  return { NULL: true };
}

/** Everything {@link streamFailureMessage} needs about a discarded batch. */
export interface DiscardedBatch {
  readonly records: readonly DynamoDBRecord[];
  readonly condition: StreamDiscardCondition;
  readonly shardId: string;
  readonly streamArn: string;
  readonly functionArn: string;
  readonly requestId: string;
  /** Invocations made for the batch (0 when it aged out before any). */
  readonly invokeCount: number;
  /** Whether the last invocation threw (`functionError: 'Unhandled'`) rather than reported item failures. */
  readonly functionError: boolean;
  readonly now: Date;
}

/** The on-failure destination message for a discarded batch, shaped like Lambda's invocation record. */
export function streamFailureMessage(batch: DiscardedBatch): StreamFailureMessage {
  const first = batch.records[0]?.dynamodb;
  const last = batch.records[batch.records.length - 1]?.dynamodb;
  return {
    requestContext: {
      requestId: batch.requestId,
      functionArn: batch.functionArn,
      condition: batch.condition,
      approximateInvokeCount: batch.invokeCount,
    },
    responseContext: {
      statusCode: 200,
      executedVersion: '$LATEST',
      ...(batch.functionError ? { functionError: 'Unhandled' } : {}),
    },
    version: '1.0',
    timestamp: batch.now.toISOString(),
    DDBStreamBatchInfo: {
      shardId: batch.shardId,
      startSequenceNumber: first?.SequenceNumber ?? '',
      endSequenceNumber: last?.SequenceNumber ?? '',
      approximateArrivalOfFirstRecord: arrival(first?.ApproximateCreationDateTime),
      approximateArrivalOfLastRecord: arrival(last?.ApproximateCreationDateTime),
      batchSize: batch.records.length,
      streamArn: batch.streamArn,
    },
  };
}

function arrival(epochSeconds: number | undefined): string {
  return epochSeconds === undefined ? '' : new Date(epochSeconds * 1000).toISOString();
}
