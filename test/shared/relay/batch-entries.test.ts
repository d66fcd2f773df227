import { describe, expect, it } from 'vitest';
import { chunkForSendMessageBatch } from '../../../shared/relay/batch-entries.ts';

const KIB = 1024;

describe('chunkForSendMessageBatch', () => {
  it('splits into chunks of at most 10 entries', () => {
    const chunks = chunkForSendMessageBatch(
      Array.from({ length: 21 }, (_, i) => i),
      () => 1,
    );

    expect(chunks.map((chunk) => chunk.length)).toEqual([10, 10, 1]);
    expect(chunks.flat()).toEqual(Array.from({ length: 21 }, (_, i) => i));
  });

  it('starts a new chunk before the total body size would exceed 256 KiB', () => {
    const sizes = [100 * KIB, 100 * KIB, 100 * KIB, 10 * KIB];

    const chunks = chunkForSendMessageBatch(sizes, (size) => size);

    expect(chunks).toEqual([
      [100 * KIB, 100 * KIB],
      [100 * KIB, 10 * KIB],
    ]);
  });

  it('keeps an oversized message in a chunk of its own, so it fails alone', () => {
    const chunks = chunkForSendMessageBatch([1, 300 * KIB, 1], (size) => size);

    expect(chunks).toEqual([[1], [300 * KIB], [1]]);
  });

  it('returns no chunk for no messages', () => {
    expect(chunkForSendMessageBatch([], () => 1)).toEqual([]);
  });
});
