import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import { DynamoOutboxStore, MessageStatus } from '../../../shared/index.ts';
import {
  DEFAULT_SWEEPER_SETTINGS,
  newOutboxItem,
  type SweeperSettings,
  sweep,
} from '../../../shared/memory/index.ts';
import { type BenchOptions, type BenchSection, formatNumber, median, repeat } from './bench-section.ts';
import { CapacityMeter } from './capacity-meter.ts';
import { EXAMPLE_TABLES, ExamplePipeline } from './example-pipeline.ts';
import { type CallCounts, delayedDocumentClient, delayedPublisher, pause } from './simulated-latency.ts';

/** A million due messages drained in half an hour: the recovery target after a long relay outage. */
export const RECOVERY_TARGET_PER_SECOND = 1_000_000 / (30 * 60);

/** One timed drain of a due backlog by sweeper runs. */
export interface RecoveryRun {
  readonly messages: number;
  readonly perSecond: number;
  readonly dynamoCallsPerMessage: number;
  readonly sqsCallsPerMessage: number;
  readonly writeUnitsPerMessage: number;
  readonly readUnitsPerMessage: number;
  readonly rounds: number;
}

/**
 * Drains `count` due PENDING messages (records the stream relay never handled) with back-to-back sweeper runs
 * on in-memory tables behind simulated latency, and counts what each message cost.
 */
export async function drainBacklog(
  count: number,
  options: BenchOptions & { readonly settings: Partial<SweeperSettings> },
): Promise<RecoveryRun> {
  const dynamo: CallCounts = { calls: 0 };
  const sqs: CallCounts = { calls: 0 };
  let meter: CapacityMeter | undefined;
  const pipeline = new ExamplePipeline({
    client: (client, actor) =>
      delayedDocumentClient((meter as CapacityMeter).client(client, actor), {
        latencyMs: options.dynamoLatencyMs,
        counts: dynamo,
      }),
    publisher: (publisher) => delayedPublisher(publisher, { latencyMs: options.sqsLatencyMs, counts: sqs }),
  });
  const settings: SweeperSettings = { ...DEFAULT_SWEEPER_SETTINGS, ...options.settings };
  const created = new Date(Date.now() - 3_600_000);
  for (let n = 0; n < count; n += 1) {
    const item = newOutboxItem(
      {
        messageId: ulid(),
        topic: ORDER_CREATED,
        aggregateId: `order-${n}`,
        payload: { orderId: `order-${n}`, items: [{ sku: `SKU-${n % 50}`, quantity: 1 }] },
        headers: {},
        createdAt: created.toISOString(),
        schemaVersion: 1,
      },
      { now: created, dueShards: settings.dueShards },
    );
    await pipeline.memory.send(new PutCommand({ TableName: 'outbox', Item: { ...item } }));
  }
  // The relay gave up on these records: only the sweeper can deliver them.
  pipeline.loseStream();
  meter = new CapacityMeter(pipeline.memory, EXAMPLE_TABLES);
  const base = pipeline.relayDeps('sweeper');
  const store = new DynamoOutboxStore({
    client: pipeline.client('sweeper'),
    tableName: 'outbox',
    actor: 'sweeper',
    dueShards: settings.dueShards,
  });
  const started = performance.now();
  let rounds = 0;
  let sent = 0;
  for (let run = 0; sent < count && run < 1_000; run += 1) {
    // A one-minute run as Lambda gives it, timed on the real clock.
    const runEnds = performance.now() + 60_000;
    const report = await sweep({
      ...base,
      store,
      owner: `bench-run-${run}`,
      deliveryCheckFor: () => undefined,
      remainingMs: () => runEnds - performance.now(),
      sleep: pause,
      settings,
    });
    rounds += report.rounds;
    sent += report.sent;
    if (report.claimed === 0) break;
  }
  const seconds = (performance.now() - started) / 1_000;
  const notSent = pipeline.memory.items('outbox').filter((item) => item.status !== MessageStatus.SENT).length;
  if (sent !== count || notSent > 0) {
    throw new Error(`sweeper sent ${sent} of ${count} due messages; ${notSent} not SENT`);
  }
  const totals = meter.totals();
  return {
    messages: count,
    perSecond: count / seconds,
    dynamoCallsPerMessage: dynamo.calls / count,
    sqsCallsPerMessage: sqs.calls / count,
    writeUnitsPerMessage: totals.writeUnits / count,
    readUnitsPerMessage: totals.readUnits / count,
    rounds,
  };
}

/**
 * The rate one sweeper run reaches on AWS by this model: a round reads a page from every shard, claims what it
 * read, sends it in batches of 10 and marks it SENT — four round trips in sequence, each call of a step in
 * parallel — plus the CPU time this machine spent per message; capped by `maxMessagesPerSecond`.
 */
export function modelledRecoveryRate(model: {
  readonly settings: SweeperSettings;
  readonly dynamoLatencyMs: number;
  readonly sqsLatencyMs: number;
  readonly cpuMsPerMessage: number;
}): { uncapped: number; capped: number } {
  const perRound = model.settings.pageSize * model.settings.dueShards;
  const roundMs = 3 * model.dynamoLatencyMs + model.sqsLatencyMs + perRound * model.cpuMsPerMessage;
  const uncapped = (perRound / roundMs) * 1_000;
  return { uncapped, capped: Math.min(uncapped, model.settings.maxMessagesPerSecond) };
}

/** Bench section 6: how fast the sweeper drains a due backlog, and what that costs per second. */
export async function measureRecovery(options: BenchOptions): Promise<BenchSection> {
  const backlog = options.size === 'tiny' ? 200 : 5_000;
  const bounded = options.size === 'tiny' ? 60 : 3_000;
  const unbounded = { maxMessagesPerSecond: Number.POSITIVE_INFINITY };
  // Each drain takes seconds at full size: three repeats give a stable median.
  const repeats = Math.min(options.repeats, 3);
  const oneShard = await repeat(repeats, () =>
    drainBacklog(backlog, { ...options, settings: { ...unbounded, dueShards: 1 } }),
  );
  const allShards = await repeat(repeats, () => drainBacklog(backlog, { ...options, settings: unbounded }));
  const capped = await repeat(Math.min(options.repeats, 2), () =>
    drainBacklog(bounded, { ...options, settings: {} }),
  );
  // CPU per message on this machine: the same drain with no simulated latency.
  const cpu = await repeat(Math.min(options.repeats, 3), () =>
    drainBacklog(backlog, { ...options, dynamoLatencyMs: 0, sqsLatencyMs: 0, settings: unbounded }),
  );
  const rate = (runs: readonly RecoveryRun[]) => median(runs.map((run) => run.perSecond));
  const cpuMsPerMessage = 1_000 / rate(cpu);
  const settings = DEFAULT_SWEEPER_SETTINGS;
  const aws = modelledRecoveryRate({
    settings,
    dynamoLatencyMs: options.dynamoLatencyMs,
    sqsLatencyMs: options.sqsLatencyMs,
    cpuMsPerMessage,
  });
  const sample = allShards[0] as RecoveryRun;
  const minutesForMillion = 1_000_000 / aws.capped / 60;
  const row = (name: string, runs: readonly RecoveryRun[]) => {
    const first = runs[0] as RecoveryRun;
    return [
      name,
      formatNumber(first.messages),
      formatNumber(rate(runs)),
      formatNumber(first.writeUnitsPerMessage, 2),
      formatNumber(first.dynamoCallsPerMessage, 2),
      formatNumber(first.sqsCallsPerMessage, 2),
    ];
  };
  return {
    title: `Recovery: the sweeper draining a backlog of due messages (SQS ${options.sqsLatencyMs} ms, DynamoDB ${options.dynamoLatencyMs} ms per call)`,
    columns: ['sweeper', 'messages', 'msg/s', 'write units/msg', 'DynamoDB calls/msg', 'SQS calls/msg'],
    rows: [
      row('one due shard, unbounded rate', oneShard),
      row(`${settings.dueShards} due shards, unbounded rate`, allShards),
      row(`${settings.dueShards} due shards, default bound (${settings.maxMessagesPerSecond}/s)`, capped),
      [
        `AWS model: ${settings.dueShards} shards × ${settings.pageSize} per round, 4 round trips`,
        '1,000,000',
        formatNumber(aws.capped),
        formatNumber(sample.writeUnitsPerMessage, 2),
        '',
        '',
      ],
    ],
    targets: [
      {
        name: '1 million due messages drained (AWS model)',
        measured: `${formatNumber(minutesForMillion, 1)} min at ${formatNumber(aws.capped)} msg/s`,
        target: `≤ 30 min (≥ ${formatNumber(RECOVERY_TARGET_PER_SECOND)} msg/s)`,
        holds: aws.capped >= RECOVERY_TARGET_PER_SECOND,
      },
    ],
    notes: [
      `a run keeps claiming while work remains (up to ${formatNumber(settings.maxMessagesPerRun)} per run) at most ${settings.maxMessagesPerSecond} msg/s on average; runs start every minute`,
      `at the bound that costs about ${formatNumber(aws.capped * sample.writeUnitsPerMessage)} write units/s on the outbox table and ${formatNumber(aws.capped * sample.sqsCallsPerMessage)} SQS requests/s`,
      `model: ${formatNumber(aws.uncapped)} msg/s unbounded per run (${formatNumber(cpuMsPerMessage, 3)} ms CPU per message measured here, in-memory services included)`,
    ],
  };
}
