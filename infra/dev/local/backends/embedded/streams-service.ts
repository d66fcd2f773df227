/**
 * The DynamoDB Streams API (`DynamoDBStreams_20120810`) of the embedded backend: DescribeStream,
 * ListStreams, GetShardIterator and GetRecords over the in-memory streams, records marshalled as the
 * service sends them.
 */
import {
  MemoryStreamError,
  type MemoryStreamRecord,
  type MemoryStreams,
  type ShardIteratorType,
} from '../../../../../shared/memory/index.ts';
import { toWireItem } from './attribute-values.ts';
import { WireError } from './wire-error.ts';
import type { WireService } from './wire-server.ts';

type Input = Record<string, unknown>;

const ITERATOR_TYPES = new Set(['TRIM_HORIZON', 'LATEST', 'AT_SEQUENCE_NUMBER', 'AFTER_SEQUENCE_NUMBER']);

/**
 * The Streams service over `streams`; `region` goes into each record's `awsRegion`.
 * @example
 * await startWireServer({ services: [streamsService(streams, 'us-east-1')], log });
 */
export function streamsService(streams: MemoryStreams, region: string): WireService {
  return {
    target: 'DynamoDBStreams_20120810',
    errorNamespace: 'com.amazonaws.dynamodb.v20120810',
    toWireError: (error) =>
      error instanceof MemoryStreamError ? new WireError(error.code, error.message) : undefined,
    operations: {
      DescribeStream: (input) => {
        const description = streams.describe(text(input, 'StreamArn'));
        const start = input.ExclusiveStartShardId;
        const shards = description.shards.filter(
          (shard) => typeof start !== 'string' || shard.shardId > start,
        );
        return {
          StreamDescription: {
            StreamArn: description.streamArn,
            StreamLabel: description.streamLabel,
            StreamStatus: description.status,
            StreamViewType: description.viewType,
            CreationRequestDateTime: description.createdAt.getTime() / 1000,
            TableName: description.tableName,
            KeySchema: [
              { AttributeName: description.keySchema.partitionKey, KeyType: 'HASH' },
              ...(description.keySchema.sortKey === undefined
                ? []
                : [{ AttributeName: description.keySchema.sortKey, KeyType: 'RANGE' }]),
            ],
            Shards: shards.map((shard) => ({
              ShardId: shard.shardId,
              SequenceNumberRange: {
                StartingSequenceNumber: shard.startingSequenceNumber,
                ...(shard.endingSequenceNumber === undefined
                  ? {}
                  : { EndingSequenceNumber: shard.endingSequenceNumber }),
              },
            })),
          },
        };
      },
      ListStreams: (input) => {
        const tableName = typeof input.TableName === 'string' ? input.TableName : undefined;
        return {
          Streams: streams.list(tableName).map((stream) => ({
            StreamArn: stream.streamArn,
            TableName: stream.tableName,
            StreamLabel: stream.streamLabel,
          })),
        };
      },
      GetShardIterator: (input) => {
        const type = text(input, 'ShardIteratorType');
        if (!ITERATOR_TYPES.has(type)) throw validation(`Invalid ShardIteratorType: ${type}`);
        const sequenceNumber = input.SequenceNumber;
        return {
          ShardIterator: streams.shardIterator(text(input, 'StreamArn'), {
            shardId: text(input, 'ShardId'),
            type: type as ShardIteratorType,
            ...(typeof sequenceNumber === 'string' ? { sequenceNumber } : {}),
          }),
        };
      },
      GetRecords: (input) => {
        const limit = input.Limit === undefined ? 1000 : input.Limit;
        if (typeof limit !== 'number') throw validation('Limit must be a number');
        const { records, nextIterator } = streams.records(text(input, 'ShardIterator'), limit);
        return {
          Records: records.map((record) => wireRecord(record, region)),
          ...(nextIterator === undefined ? {} : { NextShardIterator: nextIterator }),
        };
      },
    },
  };
}

function wireRecord(record: MemoryStreamRecord, region: string): Record<string, unknown> {
  return {
    eventID: record.eventId,
    eventName: record.eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    dynamodb: {
      // The Streams API rounds the creation time down to the second.
      ApproximateCreationDateTime: Math.floor(record.createdAt.getTime() / 1000),
      Keys: toWireItem(record.keys),
      ...(record.newImage === undefined ? {} : { NewImage: toWireItem(record.newImage) }),
      ...(record.oldImage === undefined ? {} : { OldImage: toWireItem(record.oldImage) }),
      SequenceNumber: record.sequenceNumber,
      SizeBytes: record.sizeBytes,
      StreamViewType: record.viewType,
    },
  };
}

function text(input: Input, field: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') throw validation(`${field} is required`);
  return value;
}

function validation(message: string): WireError {
  return new WireError('ValidationException', message);
}
