import { beforeAll, describe, expect, it } from 'vitest';
import type { BenchSection } from '../../../infra/dev/bench/bench-section.ts';
import { measureLatency } from '../../../infra/dev/bench/latency.ts';
import {
  awsLatencyModel,
  extraRelayCostPerShardMonth,
  sumHops,
} from '../../../infra/dev/bench/latency-model.ts';

/** The latency section at tiny size: a few orders through the local runtime, per batching-window setting. */

let section: BenchSection;

beforeAll(async () => {
  section = await measureLatency({
    size: 'tiny',
    repeats: 1,
    sqsLatencyMs: 20,
    dynamoLatencyMs: 8,
    snsLatencyMs: 20,
  });
}, 60_000);

const number = (cell: unknown): number => Number(String(cell).replaceAll(',', ''));
const column = (name: string): number => section.columns.indexOf(name);
const measuredRows = () => section.rows.filter((row) => String(row[0]).startsWith('local · '));
const modelTotals = () => section.rows.filter((row) => String(row[0]).startsWith('AWS · total, '));

describe('the latency section', () => {
  it('confirms every order and applies each exactly once, for every window setting it runs', () => {
    expect(section.targets.length).toBeGreaterThanOrEqual(2);
    for (const target of section.targets) expect(target, target.name).toMatchObject({ holds: true });
    for (const row of measuredRows()) {
      const [confirmed, posted] = String(row[column('orders')]).split('/').map(Number);
      expect(posted).toBeGreaterThan(0);
      expect(confirmed).toBe(posted);
    }
  });

  it('reports a p50 no larger than the p99 for the measured runs and the model alike', () => {
    const rows = [...measuredRows(), ...modelTotals()];
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) {
      const p50 = number(row[column('p50 ms')]);
      const p99 = number(row[column('p99 ms')]);
      expect(p50, String(row[0])).toBeGreaterThan(0);
      expect(p50, String(row[0])).toBeLessThanOrEqual(p99);
    }
  });

  it('runs the windows as synthesized first, then with the relay window at 0 s, and counts invocations', () => {
    const labels = measuredRows().map((row) => String(row[0]));
    expect(labels[0]).toMatch(/\(as synthesized\)$/);
    expect(labels).toContain('local · relay window 0 s, consumer 0 s');
    expect(new Set(labels).size).toBe(labels.length);
    for (const row of measuredRows()) {
      expect(number(row[column('relay inv./100')])).toBeGreaterThan(0);
      expect(number(row[column('consumer inv./100')])).toBeGreaterThan(0);
    }
  });

  it('fills every row to the width of the columns and cites the pages its documented figures come from', () => {
    for (const row of section.rows) expect(row).toHaveLength(section.columns.length);
    expect(section.notes.some((note) => note.includes('https://docs.aws.amazon.com/lambda/'))).toBe(true);
    expect(section.notes.some((note) => /idle poll every \d+ ms/.test(note))).toBe(true);
  });
});

describe('the AWS latency model', () => {
  it('takes exactly the windows it drops off the total', () => {
    const windowed = sumHops(awsLatencyModel({ relaySeconds: 1, consumerSeconds: 1 }));
    const relayOff = sumHops(awsLatencyModel({ relaySeconds: 0, consumerSeconds: 1 }));
    const bothOff = sumHops(awsLatencyModel({ relaySeconds: 0, consumerSeconds: 0 }));

    expect(windowed.p50Ms - relayOff.p50Ms).toBe(1000);
    expect(relayOff.p50Ms - bothOff.p50Ms).toBe(1000);
    expect(bothOff.p50Ms).toBeGreaterThan(0);
    expect(bothOff.p50Ms).toBeLessThan(bothOff.p99Ms);
  });

  it('costs nothing extra when the relay has no window, and at most 3 invocations a second per shard at 1 s', () => {
    expect(extraRelayCostPerShardMonth({ windowSeconds: 0, memoryMb: 512 })).toEqual({
      invocations: 0,
      dollars: 0,
    });
    const oneSecond = extraRelayCostPerShardMonth({ windowSeconds: 1, memoryMb: 512 });
    expect(oneSecond.invocations).toBe(3 * 30 * 24 * 3600);
    expect(oneSecond.dollars).toBeGreaterThan(0);
    expect(extraRelayCostPerShardMonth({ windowSeconds: 1, memoryMb: 1024 }).dollars).toBeGreaterThan(
      oneSecond.dollars,
    );
  });
});
