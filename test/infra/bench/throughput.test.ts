import { describe, expect, it } from 'vitest';
import type { BenchOptions } from '../../../infra/dev/bench/bench-section.ts';
import { drainBacklog, modelledRecoveryRate } from '../../../infra/dev/bench/recovery.ts';
import { measureRelay } from '../../../infra/dev/bench/relay-throughput.ts';
import { DEFAULT_SWEEPER_SETTINGS } from '../../../shared/sweeper/sweep.ts';

const NO_LATENCY: BenchOptions = {
  size: 'tiny',
  repeats: 1,
  sqsLatencyMs: 0,
  dynamoLatencyMs: 0,
  snsLatencyMs: 0,
};

describe('relay bench', () => {
  it('drains every record through the relay core in batches of 10 sends, and the naive relay one call each', async () => {
    const section = await measureRelay(NO_LATENCY);

    const [relay, naive] = section.rows;
    // SQS calls per message: 0.1 for the relay (SendMessageBatch of 10), 1 for the naive one; one update each.
    expect(relay?.[3]).toBe('0.100');
    expect(naive?.[3]).toBe('1.000');
    expect(relay?.[4]).toBe('1.000');
    expect(section.targets.map((target) => target.name)).toEqual([
      'relay msg/s per shard-equivalent',
      'relay vs naive',
    ]);
  });
});

describe('recovery bench', () => {
  it('sends every due message of a backlog the relay never handled, once, with a claim and a SENT per message', async () => {
    const run = await drainBacklog(120, {
      ...NO_LATENCY,
      settings: { maxMessagesPerSecond: Number.POSITIVE_INFINITY, pageSize: 10 },
    });

    expect(run.messages).toBe(120);
    // Per message: its claim and its SENT update, plus its share of the due-index pages.
    expect(run.dynamoCallsPerMessage).toBeGreaterThanOrEqual(2);
    expect(run.dynamoCallsPerMessage).toBeLessThan(3);
    // SendMessageBatch of up to 10.
    expect(run.sqsCallsPerMessage).toBeLessThanOrEqual(0.2);
  });

  it('models a round as four round trips over every shard page, capped by the sweeper bound', () => {
    const settings = { ...DEFAULT_SWEEPER_SETTINGS, pageSize: 25, dueShards: 8, maxMessagesPerSecond: 600 };
    const rate = modelledRecoveryRate({
      settings,
      dynamoLatencyMs: 10,
      sqsLatencyMs: 20,
      cpuMsPerMessage: 0,
    });

    // 200 messages per 50 ms round.
    expect(rate.uncapped).toBeCloseTo(4_000, 6);
    expect(rate.capped).toBe(600);
  });
});
