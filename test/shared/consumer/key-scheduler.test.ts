import { describe, expect, it } from 'vitest';
import { scheduleByKeys } from '../../../shared/consumer/key-scheduler.ts';

/**
 * Runs a batch whose item `i` touches `keys[i]` through the scheduler, each item's work a few macrotasks long,
 * and records when each work started and finished (as event order, not time) and which items were running at once.
 */
async function runBatch(keys: readonly (readonly string[])[], failing: ReadonlySet<number> = new Set()) {
  const scheduler = scheduleByKeys(keys);
  const events: string[] = [];
  const running = new Set<number>();
  const overlaps: [number, number][] = [];
  const outcomes = await Promise.allSettled(
    keys.map((_, index) =>
      scheduler.run(index, async () => {
        for (const other of running) overlaps.push([other, index]);
        running.add(index);
        events.push(`start ${index}`);
        // Several turns of the event loop, so that anything allowed to overlap does.
        for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setTimeout(resolve, 1));
        running.delete(index);
        events.push(`end ${index}`);
        if (failing.has(index)) throw new Error(`item ${index} failed`);
        return index;
      }),
    ),
  );
  return { events, overlaps, outcomes };
}

function sharesKey(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.some((key) => b.includes(key));
}

describe('scheduleByKeys', () => {
  it('never runs two items that share a key at the same time', async () => {
    const keys = [['a'], ['b'], ['a', 'b'], ['c'], ['a'], ['c', 'd'], ['b']];

    const { overlaps } = await runBatch(keys);

    expect(overlaps.filter(([x, y]) => sharesKey(keys[x], keys[y]))).toEqual([]);
  });

  it('runs the items of one key in batch order', async () => {
    const { events } = await runBatch([['sku-1'], ['sku-2'], ['sku-1'], ['sku-1'], ['sku-2']]);

    const startsOf = (indexes: number[]) =>
      events.filter((event) => indexes.some((index) => event === `start ${index}`));
    expect(startsOf([0, 2, 3])).toEqual(['start 0', 'start 2', 'start 3']);
    expect(startsOf([1, 4])).toEqual(['start 1', 'start 4']);
    expect(events.indexOf('start 2')).toBeGreaterThan(events.indexOf('end 0'));
    expect(events.indexOf('start 3')).toBeGreaterThan(events.indexOf('end 2'));
  });

  it('runs items with disjoint keys at the same time', async () => {
    const { overlaps, events } = await runBatch([['a'], ['b'], ['c']]);

    expect(overlaps).toEqual([
      [0, 1],
      [0, 2],
      [1, 2],
    ]);
    expect(events.slice(0, 3)).toEqual(['start 0', 'start 1', 'start 2']);
  });

  it('waits for every earlier holder of any of its keys', async () => {
    const { events } = await runBatch([['a'], ['b'], ['a', 'b']]);

    expect(events.indexOf('start 2')).toBeGreaterThan(events.indexOf('end 0'));
    expect(events.indexOf('start 2')).toBeGreaterThan(events.indexOf('end 1'));
  });

  it('runs one item after another when every item shares one key', async () => {
    const { events } = await runBatch([['batch'], ['batch'], ['batch']]);

    expect(events).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('still runs the later items of a key after an earlier one failed, and reports each outcome alone', async () => {
    const { events, outcomes } = await runBatch([['a'], ['a'], ['a']], new Set([0]));

    expect(events).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(outcomes[1]).toEqual({ status: 'fulfilled', value: 1 });
  });

  it('lets an item without keys run beside everything and hold nothing up', async () => {
    const { overlaps } = await runBatch([['a'], [], ['a']]);

    expect(overlaps).toContainEqual([0, 1]);
    expect(overlaps).toContainEqual([1, 2]);
    expect(overlaps).not.toContainEqual([0, 2]);
  });

  it('refuses an index outside the batch or one that already ran', async () => {
    const scheduler = scheduleByKeys([['a']]);

    await expect(scheduler.run(1, async () => 'x')).rejects.toThrow(RangeError);
    await scheduler.run(0, async () => 'first');
    await expect(scheduler.run(0, async () => 'again')).rejects.toThrow('already run');
  });
});
