import { beforeAll, describe, expect, it } from 'vitest';
import type { BenchSection } from '../../../infra/dev/bench/bench-section.ts';
import { measureConsumer } from '../../../infra/dev/bench/consumer-throughput.ts';

let section: BenchSection;

beforeAll(async () => {
  section = await measureConsumer({
    size: 'tiny',
    repeats: 1,
    sqsLatencyMs: 20,
    dynamoLatencyMs: 4,
    snsLatencyMs: 20,
  });
}, 30_000);

/** The row of `consumer` on `batch`, as a record of column → cell. */
function rowOf(batch: string, consumer: string): Record<string, string | number> {
  const row = section.rows.find((cells) => cells[0] === batch && cells[1] === consumer);
  if (row === undefined) throw new Error(`no row for ${consumer} on ${batch}`);
  return Object.fromEntries(section.columns.map((column, index) => [column, row[index] ?? '']));
}

function ratioOf(cell: string | number | undefined): number {
  return Number(String(cell).replace('×', ''));
}

describe('bench section: consumer', () => {
  it('has one row per batch and consumer, each with every column', () => {
    expect(section.rows.map((row) => [row[0], row[1]])).toEqual([
      ['10 orders, distinct SKUs', 'sequential (default)'],
      ['10 orders, distinct SKUs', 'key-aware (SKUs)'],
      ['10 orders, one SKU', 'sequential (default)'],
      ['10 orders, one SKU', 'key-aware (SKUs)'],
      ['10 orders, one SKU', 'all at once (no keys)'],
    ]);
    for (const row of section.rows) expect(row).toHaveLength(section.columns.length);
    expect(section.notes.length).toBeGreaterThan(0);
  });

  it('applies every order once with the stock exact, sequential or key-aware', () => {
    // The all-at-once row may, rarely, exhaust its conflict retries: that is what it shows.
    for (const row of section.rows.filter((cells) => cells[1] !== 'all at once (no keys)')) {
      const cells = Object.fromEntries(section.columns.map((column, index) => [column, row[index]]));
      expect(cells['applied once, stock exact']).toBe('yes');
      expect(cells['failed records (all runs)']).toBe('0');
    }
  });

  it('runs the orders of one SKU in batch order without a conflict when key-aware', () => {
    const keyAware = rowOf('10 orders, one SKU', 'key-aware (SKUs)');

    expect(keyAware['TransactionConflict (all runs)']).toBe('0');
    expect(keyAware['SKU order = batch order']).toBe('yes');
    expect(section.targets.find((t) => t.name.includes('10 orders of one SKU'))?.holds).toBe(true);
  });

  it('shows the conflicts the keys prevent when one SKU’s orders run all at once', () => {
    const unkeyed = rowOf('10 orders, one SKU', 'all at once (no keys)');

    expect(Number(unkeyed['TransactionConflict (all runs)'])).toBeGreaterThan(0);
  });

  it('reports positive throughputs and ratios, with the same DynamoDB calls for both consumers on distinct SKUs', () => {
    const sequential = rowOf('10 orders, distinct SKUs', 'sequential (default)');
    const keyAware = rowOf('10 orders, distinct SKUs', 'key-aware (SKUs)');

    for (const row of section.rows) {
      expect(Number(String(row[3]).replace(/,/g, ''))).toBeGreaterThan(0);
      expect(ratioOf(row[9])).toBeGreaterThan(0);
    }
    // One transaction (the stock decrement, the order's reservation row and the inbox row) and one
    // confirmation per order, whichever way they are scheduled: orders of distinct SKUs touch no common item,
    // so run at once they never conflict and nothing is retried.
    expect(sequential['DynamoDB calls']).toBe('20');
    expect(keyAware['DynamoDB calls']).toBe('20');
    expect(keyAware['TransactionConflict (all runs)']).toBe('0');
    expect(section.targets.map((target) => target.name)).toContain('key-aware consumer, 10 distinct SKUs');
  });
});
