import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { LogSink } from '../lambda/log-sink.ts';
import { type RelayDeps, type RelayInput, relayMessages } from './relay-messages.ts';
import { outboxItemFromStreamRecord } from './stream-records.ts';

/**
 * The relay function's core: forwards the PENDING messages a stream batch announces and reports, as
 * partial batch failures, only the records whose outcome could not be recorded (the stream retries
 * from the first of them; everything else is settled on the message itself).
 */
export async function relayStreamBatch(
  event: DynamoDBStreamEvent,
  deps: RelayDeps,
  logger: LogSink,
): Promise<DynamoDBBatchResponse> {
  const inputs: RelayInput[] = [];
  for (const record of event.Records) {
    const recordId = record.dynamodb?.SequenceNumber;
    const item = outboxItemFromStreamRecord(record);
    if ('skipped' in item || recordId === undefined) {
      if ('skipped' in item && item.skipped === 'NOT_AN_OUTBOX_ITEM') {
        logger.warn('stream record is not an outbox message; skipped', {
          eventID: record.eventID,
          detail: item.detail,
        });
      }
      continue;
    }
    inputs.push({ recordId, message: item });
  }
  const report = await relayMessages(inputs, deps);
  logger.info('relayed stream batch', { records: event.Records.length, ...report });
  return { batchItemFailures: report.unrecorded.map((itemIdentifier) => ({ itemIdentifier })) };
}
