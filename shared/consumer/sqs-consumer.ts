import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PoisonMessageError } from '../errors.ts';
import type { LogSink } from '../lambda/log-sink.ts';
import { type Envelope, parseEnvelope } from '../message/envelope.ts';
import { UNKNOWN_TOPIC } from '../observability/metric-names.ts';
import { MESSAGE_ATTRIBUTES } from '../relay/message-publisher.ts';
import { type ConsumeCountsByTopic, consumeCountsOf, type TopicConsumeCounts } from './consume-counts.ts';
import { type ConsumeDeps, type ConsumeResult, consumeMessage, type PlanEffect } from './consume-message.ts';
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

/** A consumed SQS batch: the response for Lambda, and what happened per topic for the metrics. */
export interface ConsumedSqsBatch {
  readonly response: SQSBatchResponse;
  readonly topics: Readonly<ConsumeCountsByTopic>;
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
  return (await consumeSqsEvent(event, context, consumer)).response;
}

/**
 * {@link consumeSqsBatch} that also returns what happened per topic, which the consumer function publishes as
 * metrics.
 * @example
 * const { response, topics } = await consumeSqsEvent(event, context, consumer);
 */
export async function consumeSqsEvent(
  event: SQSEvent,
  context: Context,
  consumer: SqsConsumer,
): Promise<ConsumedSqsBatch> {
  const { plan, deps, logger, failures } = consumer;
  const topics: ConsumeCountsByTopic = {};
  const recordHandler = async (record: SQSRecord) => {
    let message: Envelope | undefined;
    try {
      message = readEnvelope(record);
      const result = await consumeMessage(message, plan, deps);
      countConsumed(consumeCountsOf(topics, message.topic), { message, result, confirmedBy: deps.clock() });
      logger.info('consumed message', { ...namesOf(message), ...result });
      return result;
    } catch (error) {
      if (failures === undefined) throw error;
      const disposition = await handleFailedRecord(record, error, failures);
      const names = message === undefined ? namesFromAttributes(record) : namesOf(message);
      logger.warn('message failed', {
        ...names,
        sqsMessageId: record.messageId,
        disposition,
        error: String(error),
      });
      // A dead-lettered or requeued record is done here: acknowledging it removes it from the source queue.
      if (disposition === 'DEAD_LETTERED' || disposition === 'REQUEUED') {
        const counts = consumeCountsOf(topics, names.topic);
        if (disposition === 'DEAD_LETTERED') counts.deadLettered += 1;
        else counts.requeued += 1;
        return disposition;
      }
      throw error;
    }
  };
  // A processor per batch: it holds the batch's successes and failures.
  const response = await processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
    context,
    // Report every record as failed rather than throwing, so the runtime sees one uniform response.
    throwOnFullBatchFailure: false,
    // One record after another: two orders for the same SKU in one batch would otherwise run concurrent
    // transactions on one item and cancel each other (TransactionConflict), and order within the batch is kept.
    processInParallel: false,
  });
  return { response, topics };
}

/** Counts one consumed message; a confirmation made now gives a latency (a duplicate's earlier one does not). */
function countConsumed(
  counts: TopicConsumeCounts,
  consumed: { readonly message: Envelope; readonly result: ConsumeResult; readonly confirmedBy: Date },
): void {
  const { message, result, confirmedBy } = consumed;
  if (result.kind === 'APPLIED') counts.applied += 1;
  else if (result.kind === 'REJECTED') counts.rejected += 1;
  else counts.duplicates += 1;
  const created = Date.parse(message.createdAt);
  if (result.confirmation === 'CONFIRMED' && Number.isFinite(created)) {
    counts.confirmLatenciesMs.push(Math.max(0, confirmedBy.getTime() - created));
  }
}

/** The names every per-message log line carries. */
function namesOf(message: Envelope): { messageId: string; topic: string; aggregateId: string } {
  return { messageId: message.messageId, topic: message.topic, aggregateId: message.aggregateId };
}

/** The names of a record whose envelope cannot be read, from the attributes the relay sets. */
function namesFromAttributes(record: SQSRecord): { messageId?: string; topic: string; aggregateId?: string } {
  const messageId = record.messageAttributes[MESSAGE_ATTRIBUTES.messageId]?.stringValue;
  const aggregateId = record.attributes.MessageGroupId;
  return {
    ...(messageId === undefined ? {} : { messageId }),
    topic: record.messageAttributes[MESSAGE_ATTRIBUTES.topic]?.stringValue ?? UNKNOWN_TOPIC,
    ...(aggregateId === undefined ? {} : { aggregateId }),
  };
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
