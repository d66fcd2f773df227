import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { archiveObjects, isTtlRemoval } from '../../../shared/archive/archive-objects.ts';
import { outboxItem, streamRecord } from '../../support/factories.ts';
import { callerRemoval, expiredItem, ttlRemoval } from './ttl-records.ts';

/** The JSON Lines of an archive object's body, parsed. */
function linesOf(body: Uint8Array): unknown[] {
  const text = gunzipSync(body).toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('isTtlRemoval', () => {
  it('is true for DynamoDB deleting an expired item', () => {
    expect(isTtlRemoval(ttlRemoval())).toBe(true);
  });

  it('is false for a caller’s delete, an insert, an update, and another service principal', () => {
    expect(isTtlRemoval(callerRemoval())).toBe(false);
    expect(isTtlRemoval(streamRecord(outboxItem()))).toBe(false);
    expect(isTtlRemoval({ ...ttlRemoval(), eventName: 'MODIFY' })).toBe(false);
    expect(
      isTtlRemoval({
        ...ttlRemoval(),
        userIdentity: { type: 'Service', principalId: 'other.amazonaws.com' },
      }),
    ).toBe(false);
    expect(isTtlRemoval({ ...ttlRemoval(), userIdentity: 'Service' })).toBe(false);
  });
});

describe('archiveObjects', () => {
  it('writes the old image of each TTL removal as one gzip JSON line, keyed by day and first sequence number', () => {
    const { objects, skipped } = archiveObjects([
      ttlRemoval({ sequenceNumber: '101', oldImage: expiredItem(1) }),
      ttlRemoval({ sequenceNumber: '102', oldImage: expiredItem(2) }),
    ]);

    expect(skipped).toEqual([]);
    expect(objects).toHaveLength(1);
    expect(objects[0]).toMatchObject({
      key: 'year=2024/month=05/day=01/101.jsonl.gz',
      firstSequenceNumber: '101',
      items: 2,
    });
    expect(linesOf(objects[0]?.body ?? new Uint8Array())).toEqual([expiredItem(1), expiredItem(2)]);
  });

  it('partitions by the UTC day of each record’s ApproximateCreationDateTime, one object per day', () => {
    const { objects } = archiveObjects([
      ttlRemoval({
        sequenceNumber: '201',
        at: new Date('2024-12-31T23:59:59.000Z'),
        oldImage: expiredItem(1),
      }),
      ttlRemoval({
        sequenceNumber: '202',
        at: new Date('2025-01-01T00:00:00.000Z'),
        oldImage: expiredItem(2),
      }),
      ttlRemoval({
        sequenceNumber: '203',
        at: new Date('2024-12-31T23:59:59.999Z'),
        oldImage: expiredItem(3),
      }),
      ttlRemoval({
        sequenceNumber: '204',
        at: new Date('2025-01-09T08:00:00.000Z'),
        oldImage: expiredItem(4),
      }),
    ]);

    expect(objects.map(({ key, items }) => ({ key, items }))).toEqual([
      { key: 'year=2024/month=12/day=31/201.jsonl.gz', items: 2 },
      { key: 'year=2025/month=01/day=01/202.jsonl.gz', items: 1 },
      { key: 'year=2025/month=01/day=09/204.jsonl.gz', items: 1 },
    ]);
    expect(linesOf(objects[0]?.body ?? new Uint8Array())).toEqual([expiredItem(1), expiredItem(3)]);
  });

  it('archives TTL removals only: inserts, updates and a caller’s deletes are left out', () => {
    const { objects, skipped } = archiveObjects([
      streamRecord(outboxItem(), { sequenceNumber: '300' }),
      callerRemoval({ sequenceNumber: '301', oldImage: expiredItem(1) }),
      ttlRemoval({ sequenceNumber: '302', oldImage: expiredItem(2) }),
      { ...ttlRemoval({ sequenceNumber: '303', oldImage: expiredItem(3) }), eventName: 'MODIFY' },
    ]);

    expect(skipped).toEqual([]);
    expect(objects.map((object) => object.key)).toEqual(['year=2024/month=05/day=01/302.jsonl.gz']);
    expect(linesOf(objects[0]?.body ?? new Uint8Array())).toEqual([expiredItem(2)]);
  });

  it('makes no object of a batch without TTL removals', () => {
    expect(archiveObjects([streamRecord(outboxItem())])).toEqual({ objects: [], skipped: [] });
    expect(archiveObjects([])).toEqual({ objects: [], skipped: [] });
  });

  it('reports the TTL removals it cannot archive, and archives the rest', () => {
    const noImage = ttlRemoval({ sequenceNumber: '401', oldImage: null });
    const noTime = ttlRemoval({ sequenceNumber: '402' });
    delete noTime.dynamodb?.ApproximateCreationDateTime;
    const noSequence = ttlRemoval({ sequenceNumber: '403' });
    delete noSequence.dynamodb?.SequenceNumber;

    const { objects, skipped } = archiveObjects([
      noImage,
      noTime,
      noSequence,
      ttlRemoval({ sequenceNumber: '404', oldImage: expiredItem(4) }),
    ]);

    expect(skipped).toEqual([
      { eventID: 'event-401', reason: 'NO_OLD_IMAGE' },
      { eventID: 'event-402', reason: 'NO_CREATION_TIME' },
      { eventID: 'event-403', reason: 'NO_SEQUENCE_NUMBER' },
    ]);
    expect(objects.map((object) => object.key)).toEqual(['year=2024/month=05/day=01/404.jsonl.gz']);
  });

  it('round-trips an item through gzip with every field as it was stored', () => {
    const item = {
      ...expiredItem(7),
      payload: { note: 'ünïcödé ✓ "quoted"\nnew line', amounts: [1, 2.5, -3], nested: { empty: {} } },
      attempts: 10,
    };

    const { objects } = archiveObjects([ttlRemoval({ oldImage: item })]);

    expect(linesOf(objects[0]?.body ?? new Uint8Array())).toEqual([item]);
  });
});
