import { describe, expect, it } from 'vitest';
import { countOrderCapacity, type OrderCapacity } from '../../../infra/dev/bench/capacity.ts';
import {
  cheaperRanges,
  consumerInvocations,
  monthlyCost,
  relayInvocations,
} from '../../../infra/dev/bench/cost-model.ts';
import { measureIdleCost, scheduleCost } from '../../../infra/dev/bench/idle-cost.ts';

let capacity: OrderCapacity;

describe('cost model', () => {
  it('prices the relay only where there is one, and drops the SENT bookkeeping with Pipes', async () => {
    capacity ??= await countOrderCapacity(10);
    const stream = monthlyCost(10_000_000, capacity, 'stream relay (this outbox)');
    const pipes = monthlyCost(10_000_000, capacity, 'EventBridge Pipes');
    const polling = monthlyCost(10_000_000, capacity, 'table-polling relay (1 s)');

    expect(stream['Lambda: relay']).toBeGreaterThan(0);
    expect(pipes).not.toHaveProperty('Lambda: relay');
    expect(polling).not.toHaveProperty('Lambda: relay');
    expect(pipes['EventBridge Pipes']).toBeCloseTo(4, 6);
    expect(pipes['DynamoDB writes']).toBeLessThan(stream['DynamoDB writes'] ?? 0);
    // Everything else the same flow pays alike.
    expect(pipes['API Gateway (REST)']).toBe(stream['API Gateway (REST)']);
    expect(stream['API Gateway (REST)']).toBeCloseTo(35, 6);
  });

  it('batches relay and consumer invocations once traffic fills them, never more than one per message', () => {
    expect(relayInvocations(1_000)).toBe(1_000);
    expect(relayInvocations(10_000_000_000)).toBe(100_000_000);
    expect(consumerInvocations(1_000)).toBe(1_000);
    expect(consumerInvocations(1_000_000_000)).toBe(100_000_000);
  });

  it('finds where a polling relay is cheaper as ranges of volume', async () => {
    capacity ??= await countOrderCapacity(10);
    const ranges = cheaperRanges(capacity, 'table-polling relay (1 s)', 'stream relay (this outbox)');
    for (const { from, to } of ranges) {
      expect(from).toBeLessThanOrEqual(to);
      const total = (variant: Parameters<typeof monthlyCost>[2]) =>
        Object.values(monthlyCost(from, capacity, variant)).reduce((sum, value) => sum + value, 0);
      expect(total('table-polling relay (1 s)')).toBeLessThan(total('stream relay (this outbox)'));
    }
    // An idle outbox: the poller's fixed cost makes polling dearer.
    expect(ranges.every(({ from }) => from > 100_000)).toBe(true);
  });
});

describe('idle cost', () => {
  it('ends an idle sweeper run at once (the section throws otherwise) and prices schedules by their runs', async () => {
    const section = await measureIdleCost({
      size: 'tiny',
      repeats: 1,
      sqsLatencyMs: 0,
      dynamoLatencyMs: 0,
      snsLatencyMs: 0,
    });
    expect(section.targets[0]?.holds).toBe(true);

    const minute = scheduleCost({ everyMinutes: 1, runMs: 55_000, memoryMb: 512 });
    expect(minute.runs).toBe(43_200);
    expect(minute.gbSeconds).toBe(1_188_000);
    expect(minute.dollars).toBeCloseTo(1_188_000 * 0.000_013_333_4 + 0.043_2 * 0.2, 6);
  });
});
