import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { describeError } from '../errors.ts';
import type { LogSink } from '../observability/log-sink.ts';
import { type ArchiveObject, archiveObjects } from './archive-objects.ts';

/** Where archive objects go (S3 in Lambda, a map in tests). */
export interface ArchiveStore {
  /** Writes the object under its key, replacing one a retried batch wrote before. */
  put(object: ArchiveObject): Promise<void>;
}

/** What {@link archiveStreamBatch} needs. */
export interface ArchiveDeps {
  readonly store: ArchiveStore;
  readonly logger: LogSink;
}

/**
 * The archiver function's core: writes the messages a stream batch expired (TTL removals) to the archive,
 * one object per day, in the order of their first records. When an object cannot be written it stops and
 * reports that object's first record as the batch's first failure, so the stream retries from there; the
 * objects written before it stay. A retried record may be archived twice (under another object's key), never
 * lost: readers of the archive dedupe by `messageId`.
 */
export async function archiveStreamBatch(
  event: DynamoDBStreamEvent,
  deps: ArchiveDeps,
): Promise<DynamoDBBatchResponse> {
  const batch = archiveObjects(event.Records);
  for (const skipped of batch.skipped) {
    deps.logger.warn('expired item not archived', { eventID: skipped.eventID, reason: skipped.reason });
  }
  let items = 0;
  for (const object of batch.objects) {
    try {
      await deps.store.put(object);
    } catch (error) {
      deps.logger.warn('archive object not written; the stream retries from its first record', {
        key: object.key,
        items: object.items,
        error: describeError(error),
      });
      return { batchItemFailures: [{ itemIdentifier: object.firstSequenceNumber }] };
    }
    items += object.items;
  }
  deps.logger.info('archived stream batch', {
    records: event.Records.length,
    objects: batch.objects.length,
    items,
    skipped: batch.skipped.length,
  });
  return { batchItemFailures: [] };
}
