import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { readStreamRecord } from '../aws/stream-records.ts';
import type { LogSink } from '../observability/log-sink.ts';
import { type RelayDeps, type RelayInput, type RelayReport, relayMessages } from '../relay/relay-messages.ts';

/** A relayed stream batch: the response for Lambda, and what happened (per topic) for the metrics. */
export interface RelayedStreamBatch {
  readonly response: DynamoDBBatchResponse;
  readonly report: RelayReport;
}

/**
 * The relay function's core: forwards the PENDING messages a stream batch announces and reports, as
 * partial batch failures, only the records whose outcome could not be recorded (the stream retries
 * from the first of them; everything else — an unsendable message included — is settled on the message itself).
 */
export async function relayStreamBatch(
  event: DynamoDBStreamEvent,
  deps: RelayDeps,
  logger: LogSink,
): Promise<DynamoDBBatchResponse> {
  return (await relayStreamEvent(event, deps, logger)).response;
}

/**
 * {@link relayStreamBatch} that also returns its {@link RelayReport}, which the relay function publishes as
 * metrics; each message whose send did not end SENT gets its own log line.
 * @example
 * const { response, report } = await relayStreamEvent(event, deps, logger);
 */
export async function relayStreamEvent(
  event: DynamoDBStreamEvent,
  deps: RelayDeps,
  logger: LogSink,
): Promise<RelayedStreamBatch> {
  const inputs: RelayInput[] = [];
  for (const record of event.Records) {
    const recordId = record.dynamodb?.SequenceNumber;
    if (recordId === undefined) continue;
    const content = readStreamRecord(record);
    if (content.kind === 'message') inputs.push({ recordId, message: content.message });
    else if (content.kind === 'unsendable') inputs.push({ recordId, unsendable: content });
    else if (content.reason === 'NOT_AN_OUTBOX_ITEM') {
      logger.warn('stream record is not an outbox message; skipped', {
        eventID: record.eventID,
        detail: content.detail,
      });
    }
  }
  const report = await relayMessages(inputs, deps);
  for (const { outcome, error, ...message } of report.problems) {
    logger.warn('message not sent', { ...message, outcome, error });
  }
  const { problems: _problems, ...counts } = report;
  logger.info('relayed stream batch', { records: event.Records.length, ...counts });
  return {
    response: { batchItemFailures: report.unrecorded.map((itemIdentifier) => ({ itemIdentifier })) },
    report,
  };
}
