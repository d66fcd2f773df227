/**
 * Stands in for a DynamoDB stream → Lambda event source mapping: reads each shard, filters, batches and
 * invokes the function, and applies the mapping's retry settings the way Lambda does (see
 * stream-checkpoint.ts), sending discarded batches' metadata to the on-failure queue.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import type { StreamSourceSpec } from '../topology.ts';
import { batchItemFailureIds } from './batch-response.ts';
import { compileFilters } from './event-filter.ts';
import type { Invocation, LocalFunction } from './local-function.ts';
import { type CycleResult, createPollLoop, type Poller, type PollerStats } from './poll-loop.ts';
import {
  compareSequenceNumbers,
  decideCheckpoint,
  INITIAL_CURSOR,
  type InvocationOutcome,
  nextBatchLimit,
  type ShardCursor,
  skipTo,
} from './stream-checkpoint.ts';
import { StreamDiscardCondition, streamFailureMessage, toLambdaStreamRecord } from './stream-event.ts';

/** Options of {@link createStreamPoller}. */
export interface StreamPollerOptions {
  readonly fn: LocalFunction;
  readonly source: StreamSourceSpec;
  /** Physical name of the source table (from the stack outputs). */
  readonly tableName: string;
  /** URL of the on-failure destination queue. */
  readonly failureQueueUrl: string;
  readonly clients: {
    readonly dynamodb: DynamoDBClient;
    readonly streams: DynamoDBStreamsClient;
    readonly sqs: SQSClient;
  };
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/** The source table has no stream, or the stream cannot be read. */
export class StreamSourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

// GetRecords returns at most 1,000 records (or 1 MB) per call.
const GET_RECORDS_LIMIT = 1_000;

/**
 * A poller for `source`'s stream, not yet started.
 * @example
 * const relay = createStreamPoller({ fn, source: topology.functions.relay.streamSource, tableName, failureQueueUrl, clients });
 * relay.start();
 */
export function createStreamPoller(options: StreamPollerOptions): Poller {
  const { fn, source, clients } = options;
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const matches = compileFilters(source.filters);
  const settings = {
    batchSize: source.batchSize,
    retryAttempts: source.retryAttempts,
    bisectBatchOnError: source.bisectBatchOnError,
  };
  const cursors = new Map<string, ShardCursor>();
  /** When the record now at the head of each shard was first seen: the batching window runs from there. */
  const headSeen = new Map<string, { sequenceNumber: string; at: number }>();
  const stats: PollerStats = { invocations: 0, failedInvocations: 0, records: 0, discardedBatches: 0 };
  let streamArn: string | undefined;

  const cycle = async ({ flush, signal }: { flush: boolean; signal: AbortSignal }): Promise<CycleResult> => {
    streamArn ??= await latestStreamArn(clients.dynamodb, options.tableName, signal);
    const shards = await listShards(clients.streams, streamArn, signal);
    let progressed = 0;
    let idle = true;
    for (const shard of shards) {
      if (shard.ShardId === undefined || !parentDone(shard, shards)) continue;
      const result = await pollShard(streamArn, shard.ShardId, flush, signal);
      progressed += result.progressed;
      idle &&= result.idle;
    }
    return { progressed, idle };
  };

  /** Lambda reads a child shard only once its parent is drained, to keep per-item order. */
  const parentDone = (shard: Shard, shards: readonly Shard[]): boolean => {
    const parent = shards.find((candidate) => candidate.ShardId === shard.ParentShardId);
    if (parent?.ShardId === undefined) return true;
    const end = parent.SequenceNumberRange?.EndingSequenceNumber;
    const checkpoint = cursors.get(parent.ShardId)?.checkpoint;
    return end !== undefined && checkpoint !== undefined && compareSequenceNumbers(checkpoint, end) >= 0;
  };

  const pollShard = async (
    arn: string,
    shardId: string,
    flush: boolean,
    signal: AbortSignal,
  ): Promise<CycleResult> => {
    const cursor = cursors.get(shardId) ?? INITIAL_CURSOR;
    // A fresh iterator on every poll: after a cancelled transaction moto restores an old table copy, and an
    // iterator taken before that sees phantom records (DESIGN §5).
    const { ShardIterator } = await clients.streams.send(
      new GetShardIteratorCommand({
        StreamArn: arn,
        ShardId: shardId,
        ...(cursor.checkpoint === undefined
          ? { ShardIteratorType: 'TRIM_HORIZON' }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: cursor.checkpoint }),
      }),
      { abortSignal: signal },
    );
    if (ShardIterator === undefined) return { progressed: 0, idle: true };
    const { Records } = await clients.streams.send(
      new GetRecordsCommand({ ShardIterator, Limit: GET_RECORDS_LIMIT }),
      { abortSignal: signal },
    );
    const records = (Records ?? []).map((record) => toLambdaStreamRecord(record, arn));
    if (records.length === 0) return { progressed: 0, idle: true };

    const limit = nextBatchLimit(cursor, settings);
    const batch: DynamoDBRecord[] = [];
    let lastExamined = '';
    for (const record of records) {
      if (batch.length >= limit) break;
      lastExamined = sequenceOf(record);
      // Lambda drops records that match no filter before batching, and moves past them.
      if (matches(record)) batch.push(record);
    }
    if (batch.length === 0) {
      cursors.set(shardId, skipTo(cursor, lastExamined));
      return { progressed: records.length, idle: false };
    }

    const expired = expiredPrefix(batch, source.maxRecordAgeSeconds, now());
    if (expired.length > 0) {
      const last = sequenceOf(expired[expired.length - 1]);
      await sendToFailureQueue(
        expired,
        StreamDiscardCondition.RECORD_AGE_EXCEEDED,
        shardId,
        arn,
        '',
        0,
        false,
      );
      cursors.set(shardId, skipTo(cursor, last));
      return { progressed: expired.length, idle: false };
    }

    if (!flush && batch.length < limit && source.maxBatchingWindowSeconds > 0) {
      const head = sequenceOf(batch[0]);
      const seen = headSeen.get(shardId);
      const since = seen?.sequenceNumber === head ? seen.at : now();
      headSeen.set(shardId, { sequenceNumber: head, at: since });
      // Lambda gathers records for up to MaximumBatchingWindowInSeconds before invoking a partial batch.
      if (now() - since < source.maxBatchingWindowSeconds * 1000) return { progressed: 0, idle: false };
    }

    const invocation = await fn.invoke({ Records: batch });
    stats.invocations += 1;
    stats.records += batch.length;
    const outcome = toOutcome(invocation);
    const sequenceNumbers = batch.map(sequenceOf);
    const decision = decideCheckpoint(cursor, sequenceNumbers, outcome, settings);
    if (outcome.kind !== 'succeeded') {
      stats.failedInvocations += 1;
      log(
        `[${fn.key}] batch of ${batch.length} (${sequenceNumbers[0]}…${sequenceNumbers[sequenceNumbers.length - 1]}) ` +
          `${describeOutcome(invocation, outcome)}; failures of this batch so far: ${decision.cursor.failures}`,
      );
    }
    if (decision.discarded.length > 0) {
      const discarded = new Set(decision.discarded);
      await sendToFailureQueue(
        batch.filter((record) => discarded.has(sequenceOf(record))),
        StreamDiscardCondition.RETRIES_EXHAUSTED,
        shardId,
        arn,
        invocation.requestId,
        settings.retryAttempts + 1,
        outcome.kind === 'failed',
      );
    }
    cursors.set(shardId, decision.cursor);
    const moved =
      decision.cursor.checkpoint !== undefined &&
      (cursor.checkpoint === undefined ||
        compareSequenceNumbers(decision.cursor.checkpoint, cursor.checkpoint) > 0);
    // A batch that was split or must be retried has not moved: the loop waits an interval before the retry.
    return { progressed: moved ? batch.length : 0, idle: false };
  };

  const sendToFailureQueue = async (
    records: readonly DynamoDBRecord[],
    condition: StreamDiscardCondition,
    shardId: string,
    arn: string,
    requestId: string,
    invokeCount: number,
    functionError: boolean,
  ): Promise<void> => {
    stats.discardedBatches += 1;
    const message = streamFailureMessage({
      records,
      condition,
      shardId,
      streamArn: arn,
      functionArn: fn.arn,
      requestId,
      invokeCount,
      functionError,
      now: new Date(now()),
    });
    log(
      `[${fn.key}] gave up on ${records.length} record(s) (${condition}); metadata sent to ${source.onFailureQueue}`,
    );
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: options.failureQueueUrl, MessageBody: JSON.stringify(message) }),
    );
  };

  const control = createPollLoop({ name: fn.key, cycle, intervalMs: options.intervalMs, log });
  const filters = source.filters.length === 0 ? 'no filter' : `filter ${JSON.stringify(source.filters)}`;
  return {
    ...control,
    get paused() {
      return control.paused;
    },
    functionKey: fn.key,
    description:
      `${fn.key} ← ${source.table} stream: batch ${source.batchSize}, window ${source.maxBatchingWindowSeconds}s, ` +
      `${filters}, retries ${source.retryAttempts}, bisect ${source.bisectBatchOnError ? 'on' : 'off'}, ` +
      `max age ${source.maxRecordAgeSeconds}s, on failure → ${source.onFailureQueue}`,
    stats: () => ({ ...stats }),
  };
}

/** The leading records older than `maxAgeSeconds` (-1: no limit), which Lambda discards without invoking. */
export function expiredPrefix(
  records: readonly DynamoDBRecord[],
  maxAgeSeconds: number,
  nowMs: number,
): DynamoDBRecord[] {
  if (maxAgeSeconds < 0) return [];
  const expired: DynamoDBRecord[] = [];
  for (const record of records) {
    const created = record.dynamodb?.ApproximateCreationDateTime;
    if (created === undefined || nowMs - created * 1000 <= maxAgeSeconds * 1000) break;
    expired.push(record);
  }
  return expired;
}

function toOutcome(invocation: Invocation): InvocationOutcome {
  if (!invocation.ok) return { kind: 'failed' };
  const itemIds = batchItemFailureIds(invocation.result);
  if (itemIds === undefined) return { kind: 'failed' };
  return itemIds.length === 0 ? { kind: 'succeeded' } : { kind: 'partial', itemIds };
}

function describeOutcome(invocation: Invocation, outcome: InvocationOutcome): string {
  if (!invocation.ok) return `failed: ${invocation.error.name}: ${invocation.error.message}`;
  if (outcome.kind === 'partial') return `reported ${outcome.itemIds.length} item failure(s)`;
  return 'returned a malformed batch response';
}

function sequenceOf(record: DynamoDBRecord | undefined): string {
  return record?.dynamodb?.SequenceNumber ?? '0';
}

async function latestStreamArn(
  client: DynamoDBClient,
  tableName: string,
  signal: AbortSignal,
): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }), {
    abortSignal: signal,
  });
  const arn = Table?.LatestStreamArn;
  if (arn === undefined)
    throw new StreamSourceError(`table ${tableName} has no stream, but the topology maps one to a function`);
  return arn;
}

async function listShards(
  client: DynamoDBStreamsClient,
  streamArn: string,
  signal: AbortSignal,
): Promise<Shard[]> {
  const shards: Shard[] = [];
  let start: string | undefined;
  do {
    const { StreamDescription } = await client.send(
      new DescribeStreamCommand({
        StreamArn: streamArn,
        ...(start === undefined ? {} : { ExclusiveStartShardId: start }),
      }),
      { abortSignal: signal },
    );
    shards.push(...(StreamDescription?.Shards ?? []));
    start = StreamDescription?.LastEvaluatedShardId;
  } while (start !== undefined);
  return shards;
}
