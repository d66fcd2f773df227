/** SendMessageBatch limits: 10 entries, and a total payload within the queue's default 256 KiB. */
export const SQS_BATCH_LIMITS = { maxEntries: 10, maxBatchBytes: 256 * 1024 } as const;

/**
 * Splits messages into SendMessageBatch-sized chunks: at most 10 entries, and a total body size that SQS
 * accepts, so one large message does not get a whole batch refused.
 */
export function chunkForSendMessageBatch<T>(messages: readonly T[], sizeOf: (message: T) => number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let currentBytes = 0;
  for (const message of messages) {
    const bytes = sizeOf(message);
    const full =
      current.length === SQS_BATCH_LIMITS.maxEntries || currentBytes + bytes > SQS_BATCH_LIMITS.maxBatchBytes;
    if (full && current.length > 0) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(message);
    currentBytes += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * SendMessageBatch calls for runs of messages that must keep their order (one order key's messages, by seq; an
 * unordered message is a run of one). A run that fits one batch shares a batch with other runs and is never split
 * across two batches sent side by side; a longer run gets consecutive batches of its own, which the caller sends
 * one after another. Returns lanes: the batches of one lane go out in turn, lanes go out in parallel.
 */
export function packRunsForSendMessageBatch<T>(
  runs: readonly (readonly T[])[],
  sizeOf: (message: T) => number,
): T[][][] {
  const shared: T[][] = [];
  const lanes: T[][][] = [];
  let current: T[] = [];
  let currentBytes = 0;
  for (const run of runs) {
    const batches = chunkForSendMessageBatch(run, sizeOf);
    const [only] = batches;
    if (batches.length !== 1 || only === undefined) {
      if (batches.length > 1) lanes.push(batches);
      continue;
    }
    const bytes = only.reduce((sum, message) => sum + sizeOf(message), 0);
    const full =
      current.length + only.length > SQS_BATCH_LIMITS.maxEntries ||
      currentBytes + bytes > SQS_BATCH_LIMITS.maxBatchBytes;
    if (full && current.length > 0) {
      shared.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(...only);
    currentBytes += bytes;
  }
  if (current.length > 0) shared.push(current);
  return [...shared.map((batch) => [batch]), ...lanes];
}
