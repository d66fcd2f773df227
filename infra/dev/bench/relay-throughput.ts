import type { DynamoDBRecord } from 'aws-lambda';
import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import { relayStreamEvent } from '../../../shared/lambda/index.ts';
import {
  DEFAULT_RETRY_POLICY,
  newOutboxItem,
  type OutboxStore,
  type RelayDeps,
  readStreamRecord,
  toEnvelope,
} from '../../../shared/memory/index.ts';
import { OUTBOX_STREAM_DEFAULTS } from '../../constructs/index.ts';
import { type BenchOptions, type BenchSection, formatNumber, median, repeat } from './bench-section.ts';
import { ORDER_QUEUE, streamRecord } from './example-pipeline.ts';
import { type CallCounts, pause } from './simulated-latency.ts';

/** Regression floors of the relay: messages per second per shard, and the ratio over the naive relay. */
export const RELAY_FLOOR_PER_SECOND = 3_000;
export const RELAY_FLOOR_RATIO = 20;

/** One timed drain: messages per second and the calls it made per message. */
export interface RelayRun {
  readonly messages: number;
  readonly perSecond: number;
  readonly dynamoCallsPerMessage: number;
  readonly sqsCallsPerMessage: number;
}

/**
 * `count` PENDING order messages as their INSERT stream records, and relay adapters that only wait: SQS accepts
 * every entry and DynamoDB every update after a fixed latency per call, so the figure is the relay core's own cost
 * plus the round trips it waits for (no emulator's CPU in it).
 */
function seeded(
  count: number,
  options: BenchOptions,
): { records: DynamoDBRecord[]; deps: RelayDeps; dynamo: CallCounts; sqs: CallCounts } {
  const dynamo: CallCounts = { calls: 0 };
  const sqs: CallCounts = { calls: 0 };
  const records: DynamoDBRecord[] = [];
  const now = new Date();
  for (let n = 0; n < count; n += 1) {
    const item = newOutboxItem(
      {
        messageId: `01BENCH${String(n).padStart(19, '0')}`,
        topic: ORDER_CREATED,
        aggregateId: `order-${n}`,
        payload: { orderId: `order-${n}`, items: [{ sku: `SKU-${n % 50}`, quantity: 1 }] },
        headers: {},
        createdAt: now.toISOString(),
        schemaVersion: 1,
      },
      { now },
    );
    records.push(streamRecord({ ...item }, n + 1));
  }
  const answered = async <T>(counts: CallCounts, latencyMs: number, answer: T): Promise<T> => {
    counts.calls += 1;
    await pause(latencyMs);
    return answer;
  };
  const store: OutboxStore = {
    markSent: () => answered(dynamo, options.dynamoLatencyMs, 'SENT' as const),
    recordSendFailure: () => answered(dynamo, options.dynamoLatencyMs, 'RETRY_SCHEDULED' as const),
    confirm: () => answered(dynamo, options.dynamoLatencyMs, 'CONFIRMED' as const),
  };
  const deps: RelayDeps = {
    publisher: {
      publishBatch: (_queueUrl, messages) =>
        answered(sqs, options.sqsLatencyMs, { sent: messages.map((m) => m.messageId), failed: [] }),
    },
    store,
    queueFor: (topic) => (topic === ORDER_CREATED ? ORDER_QUEUE : undefined),
    retryPolicyFor: () => DEFAULT_RETRY_POLICY,
    clock: () => new Date(),
    random: Math.random,
  };
  return { records, deps, dynamo, sqs };
}

/**
 * The relay core as the stream mapping drives one shard: batches of the mapping's size, one after another
 * (parallelization factor 1), each forwarded by relayStreamEvent.
 */
async function drainWithRelay(count: number, options: BenchOptions): Promise<RelayRun> {
  const { records, deps, dynamo, sqs } = seeded(count, options);
  const quiet = { info: () => {}, warn: () => {} };
  const started = performance.now();
  let sent = 0;
  for (let at = 0; at < records.length; at += OUTBOX_STREAM_DEFAULTS.batchSize) {
    const batch = records.slice(at, at + OUTBOX_STREAM_DEFAULTS.batchSize);
    sent += (await relayStreamEvent({ Records: batch }, deps, quiet)).report.sent;
  }
  const seconds = (performance.now() - started) / 1_000;
  if (sent !== count) throw new Error(`relay sent ${sent} of ${count} messages`);
  return {
    messages: count,
    perSecond: count / seconds,
    dynamoCallsPerMessage: dynamo.calls / count,
    sqsCallsPerMessage: sqs.calls / count,
  };
}

/** The naive relay: per record, one SendMessage and one status update, in sequence. */
async function drainNaively(count: number, options: BenchOptions): Promise<RelayRun> {
  const { records, deps, dynamo, sqs } = seeded(count, options);
  const started = performance.now();
  for (const record of records) {
    const content = readStreamRecord(record);
    if (content.kind !== 'message') throw new Error('unreadable bench record');
    await deps.store.markSent({ messageId: content.message.messageId, now: deps.clock() });
    const result = await deps.publisher.publishBatch(ORDER_QUEUE, [toEnvelope(content.message)]);
    if (result.sent.length !== 1) throw new Error('naive send failed');
  }
  const seconds = (performance.now() - started) / 1_000;
  return {
    messages: count,
    perSecond: count / seconds,
    dynamoCallsPerMessage: dynamo.calls / count,
    sqsCallsPerMessage: sqs.calls / count,
  };
}

/** Bench section 1: the relay core against the naive relay, per shard-equivalent, under simulated latency. */
export async function measureRelay(options: BenchOptions): Promise<BenchSection> {
  const relayMessages = options.size === 'tiny' ? 300 : 10_000;
  // The naive relay takes a round trip per call: a few hundred messages give a stable rate.
  const naiveMessages = options.size === 'tiny' ? 20 : 300;
  const relay = await repeat(options.repeats, () => drainWithRelay(relayMessages, options));
  const naive = await repeat(options.repeats, () => drainNaively(naiveMessages, options));
  const relayRate = median(relay.map((run) => run.perSecond));
  const naiveRate = median(naive.map((run) => run.perSecond));
  const ratio = relayRate / naiveRate;
  const row = (name: string, runs: readonly RelayRun[], rate: number) => [
    name,
    formatNumber(runs[0]?.messages ?? 0),
    formatNumber(rate),
    formatNumber(runs[0]?.sqsCallsPerMessage ?? 0, 3),
    formatNumber(runs[0]?.dynamoCallsPerMessage ?? 0, 3),
    `${formatNumber(rate / naiveRate, 1)}×`,
  ];
  return {
    title: `Relay: one stream shard, batches of ${OUTBOX_STREAM_DEFAULTS.batchSize}, SQS ${options.sqsLatencyMs} ms and DynamoDB ${options.dynamoLatencyMs} ms per call`,
    columns: ['relay', 'messages', 'msg/s per shard', 'SQS calls/msg', 'DynamoDB calls/msg', 'vs naive'],
    rows: [
      row('relay core (relayStreamEvent)', relay, relayRate),
      row('naive: SendMessage + update, in sequence', naive, naiveRate),
    ],
    targets: [
      {
        name: 'relay msg/s per shard-equivalent',
        measured: formatNumber(relayRate),
        target: `≥ ${formatNumber(RELAY_FLOOR_PER_SECOND)}`,
        holds: relayRate >= RELAY_FLOOR_PER_SECOND,
      },
      {
        name: 'relay vs naive',
        measured: `${formatNumber(ratio, 1)}×`,
        target: `≥ ${RELAY_FLOOR_RATIO}×`,
        holds: ratio >= RELAY_FLOOR_RATIO,
      },
    ],
    notes: [
      `median of ${options.repeats} run(s); adapters that accept every call after a fixed delay, so the figure is the relay core and its round trips`,
      'a DynamoDB stream shard carries at most about 1,000 writes/s, so above that rate the relay is not the bottleneck',
    ],
  };
}
