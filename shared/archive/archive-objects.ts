import { gzipSync } from 'node:zlib';
import type { DynamoDBRecord } from 'aws-lambda';
import { imageJson } from './image-json.ts';

/** DynamoDB's own principal: a REMOVE record it made is a TTL deletion (a caller's DeleteItem carries the caller). */
const TTL_PRINCIPAL = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;

/** One S3 object of archived messages: gzip JSON Lines, one expired item per line. */
export interface ArchiveObject {
  /** `year=YYYY/month=MM/day=DD/<first sequence number>.jsonl.gz`, by the day (UTC) the items expired. */
  readonly key: string;
  /** The gzip-compressed JSON Lines. */
  readonly body: Uint8Array;
  /** The stream sequence number of its first record: the stream retries from it when the object is not written. */
  readonly firstSequenceNumber: string;
  /** How many items it holds. */
  readonly items: number;
}

/** A TTL removal that cannot be archived, and why. */
export interface SkippedRecord {
  readonly eventID: string | undefined;
  readonly reason: 'NO_OLD_IMAGE' | 'NO_SEQUENCE_NUMBER' | 'NO_CREATION_TIME';
}

/** What a stream batch becomes in the archive. */
export interface ArchiveBatch {
  /** In the order of their first records. */
  readonly objects: readonly ArchiveObject[];
  readonly skipped: readonly SkippedRecord[];
}

/** Whether a stream record is DynamoDB deleting an expired item (TTL), rather than a write or a caller's delete. */
export function isTtlRemoval(record: DynamoDBRecord): boolean {
  const identity: unknown = record.userIdentity;
  return (
    record.eventName === 'REMOVE' &&
    typeof identity === 'object' &&
    identity !== null &&
    'type' in identity &&
    'principalId' in identity &&
    identity.type === TTL_PRINCIPAL.type &&
    identity.principalId === TTL_PRINCIPAL.principalId
  );
}

/**
 * The archive objects of a stream batch: the old image of every TTL removal, grouped by the UTC day of the
 * record's `ApproximateCreationDateTime` (when the item expired), one object per day named by the sequence
 * number of its first record. Every other record (inserts, updates, a caller's delete) is left out.
 * @example
 * const { objects } = archiveObjects(event.Records);
 * // objects[0].key === 'year=2024/month=05/day=01/100000000000000000001.jsonl.gz'
 */
export function archiveObjects(records: readonly DynamoDBRecord[]): ArchiveBatch {
  const days = new Map<string, { firstSequenceNumber: string; lines: string[] }>();
  const skipped: SkippedRecord[] = [];
  for (const record of records) {
    if (!isTtlRemoval(record)) continue;
    const stream = record.dynamodb;
    const skip = (reason: SkippedRecord['reason']) => skipped.push({ eventID: record.eventID, reason });
    if (stream?.SequenceNumber === undefined) {
      skip('NO_SEQUENCE_NUMBER');
    } else if (stream.ApproximateCreationDateTime === undefined) {
      skip('NO_CREATION_TIME');
    } else if (stream.OldImage === undefined) {
      // A stream without old images (KEYS_ONLY, NEW_IMAGE) has nothing to archive.
      skip('NO_OLD_IMAGE');
    } else {
      const day = dayPartition(stream.ApproximateCreationDateTime);
      const group = days.get(day) ?? { firstSequenceNumber: stream.SequenceNumber, lines: [] };
      group.lines.push(imageJson(stream.OldImage));
      days.set(day, group);
    }
  }
  const objects = [...days].map(([day, { firstSequenceNumber, lines }]) => ({
    key: `${day}/${firstSequenceNumber}.jsonl.gz`,
    body: gzipSync(`${lines.join('\n')}\n`),
    firstSequenceNumber,
    items: lines.length,
  }));
  return { objects, skipped };
}

/** `year=YYYY/month=MM/day=DD` of an instant in epoch seconds, in UTC: Hive-style partitions a query can prune. */
function dayPartition(epochSeconds: number): string {
  const [year, month, day] = new Date(epochSeconds * 1000).toISOString().slice(0, 10).split('-');
  return `year=${year}/month=${month}/day=${day}`;
}
