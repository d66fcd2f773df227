/** Runs the work of a batch's items, each gated by the items before it that share one of its keys. */
export interface KeyScheduler {
  /**
   * Runs `work` for the item at `index` once every earlier item of the batch that shares one of its keys has
   * finished, successfully or not, and returns what `work` returns or throws. Each index runs once.
   */
  run<T>(index: number, work: () => Promise<T>): Promise<T>;
}

/**
 * A scheduler for a batch whose item `i` touches `keysPerItem[i]`: items that share a key run one after another
 * in batch order, items with disjoint keys run at once, and an item without keys waits for nothing and holds
 * nothing up. A failed item releases its keys like a successful one, so the items after it still run. Every
 * index must be run, or the later items sharing its keys wait forever.
 * @example
 * const scheduler = scheduleByKeys([['SKU-1'], ['SKU-2'], ['SKU-1']]);
 * // The third waits for the first; the second runs beside both.
 * await Promise.allSettled(items.map((item, index) => scheduler.run(index, () => apply(item))));
 */
export function scheduleByKeys(keysPerItem: readonly (readonly string[])[]): KeyScheduler {
  const predecessors = latestEarlierHolders(keysPerItem);
  const finished = keysPerItem.map(() => settledSignal());
  const started = new Set<number>();
  return {
    async run(index, work) {
      const waitFor = predecessors[index];
      if (waitFor === undefined) throw new RangeError(`no item ${index} in a batch of ${keysPerItem.length}`);
      if (started.has(index)) throw new RangeError(`item ${index} of the batch has already run`);
      started.add(index);
      await Promise.all(waitFor.map((earlier) => finished[earlier]?.settled));
      try {
        return await work();
      } finally {
        finished[index]?.settle();
      }
    },
  };
}

/**
 * For each item, the last earlier item holding each of its keys. Waiting for those is enough: each of them
 * started only after the holders before it had finished.
 */
function latestEarlierHolders(keysPerItem: readonly (readonly string[])[]): number[][] {
  const lastHolder = new Map<string, number>();
  return keysPerItem.map((keys, index) => {
    const earlier = new Set<number>();
    for (const key of keys) {
      const holder = lastHolder.get(key);
      if (holder !== undefined && holder !== index) earlier.add(holder);
      lastHolder.set(key, index);
    }
    return [...earlier];
  });
}

/** A promise settled from outside, when an item's work has finished. */
function settledSignal(): { readonly settled: Promise<void>; readonly settle: () => void } {
  let settle = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { settled, settle };
}
