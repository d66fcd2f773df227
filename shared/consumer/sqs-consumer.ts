import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PoisonMessageError } from '../errors.ts';
import type { LogSink } from '../lambda/log-sink.ts';
import { type Envelope, parseEnvelope } from '../message/envelope.ts';
import { type ConsumeDeps, consumeMessage, type PlanEffect } from './consume-message.ts';
import { type FailureHandling, handleFailedRecord } from './failure-handling.ts';

/** Everything an SQS consumer needs besides the event. */
export interface SqsConsumer {
  /** The business side: a message → the actions to commit with the inbox row. */
  readonly plan: PlanEffect;
  readonly deps: ConsumeDeps;
  readonly logger: LogSink;
  /** Backoff and dead-lettering; without it a failed record is simply reported as failed. */
  readonly failures?: FailureHandling;
}

/**
 * The consumer function's core: consumes each SQS record exactly once in effect and reports the records
 * that failed transiently as partial batch failures, so only they are redelivered. With `failures`, a
 * failed record is also given an exponential visibility backoff, and a poison message (or one on its last
 * receive) is dead-lettered at once with its reason.
 */
export async function consumeSqsBatch(
  event: SQSEvent,
  context: Context,
  consumer: SqsConsumer,
): Promise<SQSBatchResponse> {
  const { plan, deps, logger, failures } = consumer;
  const recordHandler = async (record: SQSRecord) => {
    try {
      const message = readEnvelope(record);
      const result = await consumeMessage(message, plan, deps);
      logger.info('consumed message', { messageId: message.messageId, topic: message.topic, ...result });
      return result;
    } catch (error) {
      if (failures === undefined) throw error;
      const disposition = await handleFailedRecord(record, error, failures);
      logger.warn('message failed', { sqsMessageId: record.messageId, disposition, error: String(error) });
      // A dead-lettered or requeued record is done here: acknowledging it removes it from the source queue.
      if (disposition === 'DEAD_LETTERED' || disposition === 'REQUEUED') return disposition;
      throw error;
    }
  };
  // A processor per batch: it holds the batch's successes and failures.
  return processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
    context,
    // Report every record as failed rather than throwing, so the runtime sees one uniform response.
    throwOnFullBatchFailure: false,
    // One record after another: two orders for the same SKU in one batch would otherwise run concurrent
    // transactions on one item and cancel each other (TransactionConflict), and order within the batch is kept.
    processInParallel: false,
  });
}

/** The envelope in a record's body; a body that is not one can never be processed. */
function readEnvelope(record: SQSRecord): Envelope {
  try {
    return parseEnvelope(JSON.parse(record.body));
  } catch (cause) {
    throw new PoisonMessageError(`SQS message ${record.messageId} does not carry a valid envelope`, {
      cause,
    });
  }
}
