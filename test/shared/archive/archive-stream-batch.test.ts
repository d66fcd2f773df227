import { gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import type { ArchiveObject } from '../../../shared/archive/archive-objects.ts';
import { type ArchiveStore, archiveStreamBatch } from '../../../shared/archive/archive-stream-batch.ts';
import { outboxItem, streamRecord } from '../../support/factories.ts';
import { expiredItem, ttlRemoval } from './ttl-records.ts';

/** A store that keeps what it is given and refuses the keys it is told to. */
function memoryStore(refused: readonly string[] = []): ArchiveStore & { readonly objects: ArchiveObject[] } {
  const objects: ArchiveObject[] = [];
  return {
    objects,
    put: async (object) => {
      if (refused.includes(object.key)) throw new Error('SlowDown: reduce your request rate');
      objects.push(object);
    },
  };
}

const logger = () => ({ info: vi.fn(), warn: vi.fn() });

/** Three TTL removals over two days: 501 and 503 on 1 May, 502 on 2 May. */
const records = [
  ttlRemoval({ sequenceNumber: '501', oldImage: expiredItem(1) }),
  ttlRemoval({ sequenceNumber: '502', at: new Date('2024-05-02T00:00:01Z'), oldImage: expiredItem(2) }),
  ttlRemoval({ sequenceNumber: '503', oldImage: expiredItem(3) }),
];

describe('archiveStreamBatch', () => {
  it('writes one object per day and reports no failure', async () => {
    const store = memoryStore();
    const log = logger();

    const response = await archiveStreamBatch({ Records: records }, { store, logger: log });

    expect(response).toEqual({ batchItemFailures: [] });
    expect(store.objects.map((object) => object.key)).toEqual([
      'year=2024/month=05/day=01/501.jsonl.gz',
      'year=2024/month=05/day=02/502.jsonl.gz',
    ]);
    expect(log.info).toHaveBeenCalledWith('archived stream batch', {
      records: 3,
      objects: 2,
      items: 3,
      skipped: 0,
    });
  });

  it('stops at an object it cannot write and reports its first record, so the stream retries from there', async () => {
    const store = memoryStore(['year=2024/month=05/day=02/502.jsonl.gz']);
    const log = logger();

    const response = await archiveStreamBatch({ Records: records }, { store, logger: log });

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '502' }] });
    expect(store.objects.map((object) => object.key)).toEqual(['year=2024/month=05/day=01/501.jsonl.gz']);
    expect(log.warn).toHaveBeenCalledWith(
      'archive object not written; the stream retries from its first record',
      expect.objectContaining({
        key: 'year=2024/month=05/day=02/502.jsonl.gz',
        error: expect.stringMatching(/SlowDown/),
      }),
    );
  });

  it('reports the batch’s first TTL removal when the first object fails, and writes nothing after it', async () => {
    const store = memoryStore(['year=2024/month=05/day=01/501.jsonl.gz']);

    const response = await archiveStreamBatch({ Records: records }, { store, logger: logger() });

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '501' }] });
    expect(store.objects).toEqual([]);
  });

  it('writes nothing for a batch of other records', async () => {
    const store = memoryStore();

    const response = await archiveStreamBatch(
      { Records: [streamRecord(outboxItem())] },
      { store, logger: logger() },
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(store.objects).toEqual([]);
  });

  it('warns about a TTL removal it cannot archive, naming the record and why', async () => {
    const log = logger();

    await archiveStreamBatch(
      { Records: [ttlRemoval({ sequenceNumber: '601', oldImage: null })] },
      { store: memoryStore(), logger: log },
    );

    expect(log.warn).toHaveBeenCalledWith('expired item not archived', {
      eventID: 'event-601',
      reason: 'NO_OLD_IMAGE',
    });
  });

  it('writes the items themselves, readable after gunzip', async () => {
    const store = memoryStore();

    await archiveStreamBatch({ Records: records }, { store, logger: logger() });

    const text = gunzipSync(store.objects[0]?.body ?? new Uint8Array()).toString('utf8');
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([expiredItem(1), expiredItem(3)]);
  });
});
