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
