import { describe, expect, it } from 'vitest';
import {
  chunkForSendMessageBatch,
  packRunsForSendMessageBatch,
} from '../../../shared/relay/batch-entries.ts';

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

describe('packRunsForSendMessageBatch', () => {
  it('packs runs of one exactly as chunkForSendMessageBatch chunks the messages', () => {
    const sizes = [100 * KIB, 100 * KIB, 100 * KIB, 10 * KIB, ...Array.from({ length: 12 }, () => 1)];

    const lanes = packRunsForSendMessageBatch(
      sizes.map((size) => [size]),
      (size) => size,
    );

    expect(lanes).toEqual(chunkForSendMessageBatch(sizes, (size) => size).map((batch) => [batch]));
  });

  it('never splits a run that fits one batch, and gives a longer run consecutive batches of its own', () => {
    const run = (key: string, length: number) => Array.from({ length }, (_, i) => `${key}${i + 1}`);

    const lanes = packRunsForSendMessageBatch([run('a', 6), run('b', 6), run('c', 12), run('d', 4)], () => 1);

    expect(lanes).toEqual([
      [run('a', 6)],
      [[...run('b', 6), ...run('d', 4)]],
      [run('c', 12).slice(0, 10), run('c', 12).slice(10)],
    ]);
  });
});
