/**
 * Stands in for a DynamoDB stream → Lambda event source mapping: reads each shard, filters, batches and
 * invokes the function, and applies the mapping's retry settings the way Lambda does (see
 * stream-checkpoint.ts), sending discarded batches' metadata to the on-failure destination. Each shard's
 * checkpoint is saved after every advance, so a restart resumes where the last run stopped.
 */
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type GetShardIteratorCommandInput,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Invocation, LocalFunction } from '../host/local-function.ts';
import type { EventSourceMappingDefinition } from '../template/read-event-source-mappings.ts';
import { batchItemFailureIds } from './batch-response.ts';
import { compileFilters } from './event-filter.ts';
import { type CycleResult, createPollLoop, type Poller, type PollerStats } from './poll-loop.ts';
import type { PollerStateStore } from './poller-state.ts';
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
  /** The mapping's settings, as the template gives them. */
  readonly mapping: EventSourceMappingDefinition;
  /** The stream's ARN on the backend. */
  readonly streamArn: string;
  /** URL of the on-failure destination queue; without one, discarded batches are only logged (as on AWS). */
  readonly failureQueueUrl?: string;
  readonly clients: {
    readonly streams: DynamoDBStreamsClient;
    readonly sqs: SQSClient;
  };
  /** Where the shard checkpoints are kept, and under which key. @default in this poller only */
  readonly state?: { readonly store: PollerStateStore; readonly key: string };
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

// GetRecords returns at most 1,000 records (or 1 MB) per call.
const GET_RECORDS_LIMIT = 1_000;

/**
 * A poller for the mapping's stream, not yet started.
 * @example
 * const relay = createStreamPoller({ fn, mapping, streamArn, failureQueueUrl, clients });
 * relay.start();
 */
export function createStreamPoller(options: StreamPollerOptions): Poller {
  const { fn, mapping, clients, streamArn } = options;
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const matches = compileFilters(mapping.filterPatterns);
  const settings = {
    batchSize: mapping.batchSize,
    retryAttempts: mapping.maxRetryAttempts,
    bisectBatchOnError: mapping.bisectBatchOnError,
  };
  const cursors = new Map<string, ShardCursor>();
  for (const [shardId, checkpoint] of options.state?.store.checkpoints(options.state.key) ?? []) {
    cursors.set(shardId, { ...INITIAL_CURSOR, checkpoint });
  }
  const setCursor = (shardId: string, cursor: ShardCursor): void => {
    const before = cursors.get(shardId)?.checkpoint;
    cursors.set(shardId, cursor);
    if (options.state !== undefined && cursor.checkpoint !== undefined && cursor.checkpoint !== before) {
      options.state.store.saveCheckpoint(options.state.key, shardId, cursor.checkpoint);
    }
  };
  /** When the record now at the head of each shard was first seen: the batching window runs from there. */
  const headSeen = new Map<string, { sequenceNumber: string; at: number }>();
  const stats: PollerStats = { invocations: 0, failedInvocations: 0, records: 0, discardedBatches: 0 };

  const cycle = async ({ flush, signal }: { flush: boolean; signal: AbortSignal }): Promise<CycleResult> => {
    const shards = await listShards(clients.streams, streamArn, signal);
    let progressed = 0;
    let idle = true;
    for (const shard of shards) {
      if (shard.ShardId === undefined || !parentDone(shard, shards)) continue;
      const result = await pollShard(shard.ShardId, flush, signal);
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

  const pollShard = async (shardId: string, flush: boolean, signal: AbortSignal): Promise<CycleResult> => {
    const cursor = cursors.get(shardId) ?? INITIAL_CURSOR;
    // A fresh iterator on every poll: after a cancelled transaction moto restores an old table copy, and an
    // iterator taken before that sees phantom records.
    const ShardIterator = await shardIterator({ StreamArn: streamArn, ShardId: shardId }, cursor, signal);
    if (ShardIterator === undefined) return { progressed: 0, idle: true };
    const { Records } = await clients.streams.send(
      new GetRecordsCommand({ ShardIterator, Limit: GET_RECORDS_LIMIT }),
      { abortSignal: signal },
    );
    const records = (Records ?? []).map((record) => toLambdaStreamRecord(record, streamArn));
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
      setCursor(shardId, skipTo(cursor, lastExamined));
      return { progressed: records.length, idle: false };
    }

    const expired = expiredPrefix(batch, mapping.maxRecordAgeSeconds, now());
    if (expired.length > 0) {
      const last = sequenceOf(expired[expired.length - 1]);
      await sendToFailureQueue({
        records: expired,
        condition: StreamDiscardCondition.RECORD_AGE_EXCEEDED,
        shardId,
        requestId: '',
        invokeCount: 0,
        functionError: false,
      });
      setCursor(shardId, skipTo(cursor, last));
      return { progressed: expired.length, idle: false };
    }

    if (!flush && batch.length < limit && mapping.maxBatchingWindowSeconds > 0) {
      const head = sequenceOf(batch[0]);
      const seen = headSeen.get(shardId);
      const since = seen?.sequenceNumber === head ? seen.at : now();
      headSeen.set(shardId, { sequenceNumber: head, at: since });
      // Lambda gathers records for up to MaximumBatchingWindowInSeconds before invoking a partial batch.
      if (now() - since < mapping.maxBatchingWindowSeconds * 1000) return { progressed: 0, idle: false };
    }

    const invocation = await fn.invoke({ Records: batch });
    stats.invocations += 1;
    stats.records += batch.length;
    const outcome = toOutcome(invocation, mapping.reportBatchItemFailures);
    const sequenceNumbers = batch.map(sequenceOf);
    const decision = decideCheckpoint(cursor, { batch: sequenceNumbers, outcome }, settings);
    if (outcome.kind !== 'succeeded') {
      stats.failedInvocations += 1;
      log(
        `[${fn.name}] batch of ${batch.length} (${sequenceNumbers[0]}…${sequenceNumbers[sequenceNumbers.length - 1]}) ` +
          `${describeOutcome(invocation, outcome)}; failures of this batch so far: ${decision.cursor.failures}`,
      );
    }
    if (decision.discarded.length > 0) {
      const discarded = new Set(decision.discarded);
      await sendToFailureQueue({
        records: batch.filter((record) => discarded.has(sequenceOf(record))),
        condition: StreamDiscardCondition.RETRIES_EXHAUSTED,
        shardId,
        requestId: invocation.requestId,
        invokeCount: settings.retryAttempts + 1,
        functionError: outcome.kind === 'failed',
      });
    }
    setCursor(shardId, decision.cursor);
    const moved =
      decision.cursor.checkpoint !== undefined &&
      (cursor.checkpoint === undefined ||
        compareSequenceNumbers(decision.cursor.checkpoint, cursor.checkpoint) > 0);
    // A batch that was split or must be retried has not moved: the loop waits an interval before the retry.
    return { progressed: moved ? batch.length : 0, idle: false };
  };

  /** A fresh iterator after the checkpoint; from the trim horizon when the checkpoint is gone from the shard. */
  const shardIterator = async (
    input: Pick<GetShardIteratorCommandInput, 'StreamArn' | 'ShardId'>,
    cursor: ShardCursor,
    signal: AbortSignal,
  ): Promise<string | undefined> => {
    const fromStart = { ...input, ShardIteratorType: 'TRIM_HORIZON' } as const;
    if (cursor.checkpoint === undefined) {
      return (await clients.streams.send(new GetShardIteratorCommand(fromStart), { abortSignal: signal }))
        .ShardIterator;
    }
    try {
      const after = {
        ...input,
        ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
        SequenceNumber: cursor.checkpoint,
      } as const;
      return (await clients.streams.send(new GetShardIteratorCommand(after), { abortSignal: signal }))
        .ShardIterator;
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'TrimmedDataAccessException') throw error;
      // The records after the saved checkpoint have left the stream (24 h retention): read what is left.
      log(
        `[${fn.name}] checkpoint ${cursor.checkpoint} of shard ${input.ShardId} is trimmed; reading from the oldest record`,
      );
      return (await clients.streams.send(new GetShardIteratorCommand(fromStart), { abortSignal: signal }))
        .ShardIterator;
    }
  };

  const sendToFailureQueue = async (discarded: {
    readonly records: readonly DynamoDBRecord[];
    readonly condition: StreamDiscardCondition;
    readonly shardId: string;
    readonly requestId: string;
    readonly invokeCount: number;
    readonly functionError: boolean;
  }): Promise<void> => {
    stats.discardedBatches += 1;
    const message = streamFailureMessage({
      ...discarded,
      streamArn,
      functionArn: fn.arn,
      now: new Date(now()),
    });
    if (options.failureQueueUrl === undefined) {
      log(
        `[${fn.name}] gave up on ${discarded.records.length} record(s) (${discarded.condition}); no on-failure destination`,
      );
      return;
    }
    log(
      `[${fn.name}] gave up on ${discarded.records.length} record(s) (${discarded.condition}); metadata sent to ${options.failureQueueUrl}`,
    );
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: options.failureQueueUrl, MessageBody: JSON.stringify(message) }),
    );
  };

  const control = createPollLoop({ name: fn.name, cycle, intervalMs: options.intervalMs, log });
  return {
    ...control,
    get paused() {
      return control.paused;
    },
    functionName: fn.name,
    description: `${fn.name} ← ${tableOfStream(streamArn)} stream: ${describeStreamMapping(mapping)}`,
    stats: () => ({ ...stats }),
  };
}

/** The mapping's settings in one line, for the banner. */
export function describeStreamMapping(mapping: EventSourceMappingDefinition): string {
  const filters =
    mapping.filterPatterns.length === 0 ? 'no filter' : `filter ${JSON.stringify(mapping.filterPatterns)}`;
  const retries = mapping.maxRetryAttempts < 0 ? 'until expired' : String(mapping.maxRetryAttempts);
  const maxAge = mapping.maxRecordAgeSeconds < 0 ? 'none' : `${mapping.maxRecordAgeSeconds}s`;
  return (
    `batch ${mapping.batchSize}, window ${mapping.maxBatchingWindowSeconds}s, ${filters}, retries ${retries}, ` +
    `bisect ${mapping.bisectBatchOnError ? 'on' : 'off'}, max age ${maxAge}` +
    (mapping.reportBatchItemFailures ? ', partial batch responses' : '') +
    // One batch per shard at a time keeps per-key order, which a higher factor also guarantees.
    (mapping.parallelizationFactor > 1
      ? `, parallelization ${mapping.parallelizationFactor} (run as 1)`
      : '') +
    (mapping.onFailureDestination === undefined ? '' : ', on failure → destination queue')
  );
}

/** `arn:aws:dynamodb:us-east-1:123:table/Orders/stream/2024…` → `Orders`. */
function tableOfStream(streamArn: string): string {
  return /:table\/([^/]+)\/stream\//.exec(streamArn)?.[1] ?? streamArn;
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

function toOutcome(invocation: Invocation, reportBatchItemFailures: boolean): InvocationOutcome {
  if (!invocation.ok) return { kind: 'failed' };
  // Without ReportBatchItemFailures, Lambda ignores what the function returns.
  if (!reportBatchItemFailures) return { kind: 'succeeded' };
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
