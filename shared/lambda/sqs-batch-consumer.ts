import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { controlOrderKeys } from '../consumer/consume-control.ts';
import {
  type ConsumeCountsByTopic,
  consumeCountsOf,
  type TopicConsumeCounts,
} from '../consumer/consume-counts.ts';
import {
  type ConsumePorts,
  type ConsumeResult,
  consumeMessage,
  type DrainedMessage,
  type DrainFailure,
  type PlanEffect,
} from '../consumer/consume-message.ts';
import {
  type FailureHandling,
  handleFailedRecord,
  requeueRecord,
  visibilityTimeoutSeconds,
} from '../consumer/failure-handling.ts';
import {
  DEFAULT_WRAP_UP_RESERVE,
  type InvocationBudget,
  invocationBudget,
  type WrapUpReserve,
} from '../consumer/invocation-budget.ts';
import { scheduleByKeys } from '../consumer/key-scheduler.ts';
import { OutOfTimeError, PoisonMessageError } from '../errors.ts';
import { isControlTopic } from '../message/control-topics.ts';
import { type Envelope, parseEnvelope } from '../message/envelope.ts';
import type { LogSink } from '../observability/log-sink.ts';
import { UNKNOWN_TOPIC } from '../observability/metric-names.ts';
import { MESSAGE_ATTRIBUTES } from '../relay/message-publisher.ts';

/**
 * The items a message's effect touches (e.g. the SKUs of an order): records of a batch that share a key are
 * applied one after another in batch order, the others at once. Pure and fast; it runs before the batch starts.
 */
export type ConflictKeys = (message: Envelope) => readonly string[];

/** The default: every record shares this one key, so a batch is applied one record after another. */
const WHOLE_BATCH: readonly string[] = ['batch'];

/** Before the order key in the conflict key every ordered record gets. */
const ORDER_CONFLICT_PREFIX = 'orderKey:';

/** Everything an SQS consumer needs besides the event. */
export interface SqsConsumer {
  /** The business side: a message → the actions to commit with the inbox row. */
  readonly plan: PlanEffect;
  readonly deps: ConsumePorts;
  readonly logger: LogSink;
  /** Backoff and dead-lettering; without it a failed record is simply reported as failed. */
  readonly failures?: FailureHandling;
  /**
   * What each message's effect touches. Records sharing a key are applied in batch order, one after another;
   * the others run concurrently, so a batch of orders for different SKUs costs about one transaction's time
   * instead of ten. Two concurrent transactions on one item would cancel each other (TransactionConflict), so
   * return every item your plan writes or checks. A record whose envelope cannot be read has no key (it fails
   * alone); a record for which this throws fails with that error. A claim-checked message is seen here with its
   * reference, not its payload (fetched later): give it a key of its own, and its transaction is retried on a
   * conflict like any other. A message of an ordered topic also gets its order key as a key, so one aggregate's
   * messages of a batch apply one after another, in batch order.
   * @default every record shares one key: the batch is applied one record after another
   */
  readonly conflictKeys?: ConflictKeys;
  /**
   * How much of the invocation's time is kept back to hand unfinished records back before the function's timeout.
   * @default DEFAULT_WRAP_UP_RESERVE: 5 s, or a fifth of the invocation's time when that is less
   */
  readonly wrapUp?: WrapUpReserve;
}

/** A consumed SQS batch: the response for Lambda, and what happened per topic for the metrics. */
export interface ConsumedSqsBatch {
  readonly response: SQSBatchResponse;
  readonly topics: Readonly<ConsumeCountsByTopic>;
}

/**
 * Consumes an SQS batch over the consumer's ports (the public `consumeSqsBatch` and `consumeSqsEvent` in
 * consumer-handler.ts build them from a client and table): the response for Lambda, and what happened per topic,
 * which the consumer function publishes as metrics.
 * @example
 * const { response, topics } = await consumeSqsEvent(event, context, consumer);
 */
export async function consumeSqsEvent(
  event: SQSEvent,
  context: Context,
  consumer: SqsConsumer,
): Promise<ConsumedSqsBatch> {
  const budget = invocationBudget(context, consumer.wrapUp ?? DEFAULT_WRAP_UP_RESERVE);
  // This invocation's deps: every step and conflict retry of its records keeps to its budget.
  const deps: ConsumePorts = { ...consumer.deps, remainingMs: budget.remainingMs };
  try {
    return await consumeWithin(event, context, { consumer, deps, budget });
  } finally {
    budget.close();
  }
}

/** What one invocation's records are consumed with. */
interface Invocation {
  readonly consumer: SqsConsumer;
  /** The consumer's deps, bounded by the budget. */
  readonly deps: ConsumePorts;
  readonly budget: InvocationBudget;
}

/** Marks a record whose work was still running at the wrap-up point. */
const WRAPPED_UP: unique symbol = Symbol('wrapped up');

async function consumeWithin(
  event: SQSEvent,
  context: Context,
  invocation: Invocation,
): Promise<ConsumedSqsBatch> {
  const { consumer, deps, budget } = invocation;
  const { plan, logger, failures } = consumer;
  const topics: ConsumeCountsByTopic = {};
  const records = Array.isArray(event.Records) ? event.Records : [];
  const reads = records.map((record) => readRecord(record, consumer.conflictKeys ?? (() => WHOLE_BATCH)));
  const scheduler = scheduleByKeys(reads.map((read) => read.keys));
  const fifo = records.some(isFifoRecord);
  const positions = positionsOf(records);
  const consumeRecord = async (record: SQSRecord, read: RecordRead) => {
    try {
      if ('failure' in read) throw read.failure;
      const { message } = read;
      const result = await beforeWrapUp(consumeMessage(message, plan, deps), budget);
      if (result === WRAPPED_UP) return await handBack(topics, { record, message, invocation });
      const { drained, drainFailure, ...own } = result;
      countConsumed(consumeCountsOf(topics, message.topic), {
        message,
        result: own,
        confirmedBy: deps.clock(),
      });
      logger.info('consumed message', { ...namesOf(message), ...own });
      for (const next of drained ?? []) countDrained(topics, { drained: next, consumer });
      if (drainFailure !== undefined) await retryParked(topics, { failed: drainFailure, record, consumer });
      return result;
    } catch (error) {
      if (failures === undefined) throw error;
      const disposition = await handleFailedRecord(record, error, failures);
      const names = read.message === undefined ? namesFromAttributes(record) : namesOf(read.message);
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
  const recordHandler = (record: SQSRecord) => {
    const index = positions.get(record)?.shift();
    const read = index === undefined ? undefined : reads[index];
    if (index === undefined || read === undefined) {
      return Promise.reject(new RangeError(`SQS message ${record.messageId} is not in the batch`));
    }
    // A FIFO batch is processed one record after another in batch order, so nothing needs holding back; and a
    // record the processor skips (its group failed earlier) never runs, so it could not release its keys.
    return fifo ? consumeRecord(record, read) : scheduler.run(index, () => consumeRecord(record, read));
  };
  if (fifo) {
    // One aggregate is one message group: a failed record fails the rest of its group (SQS redelivers them in
    // order), and only its group: the other aggregates of the batch go on.
    const response = await processPartialResponse(event, recordHandler, new SqsFifoPartialProcessorAsync(), {
      context,
      throwOnFullBatchFailure: false,
      skipGroupOnError: true,
    });
    return { response, topics };
  }
  // A processor per batch: it holds the batch's successes and failures.
  const response = await processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
    context,
    // Report every record as failed rather than throwing, so the runtime sees one uniform response.
    throwOnFullBatchFailure: false,
    // Every record is handed over at once; the scheduler holds back a record until the earlier records sharing
    // one of its keys have finished, since two concurrent transactions on one item (two orders for one SKU)
    // would cancel each other with TransactionConflict, and order within a key is kept.
    processInParallel: true,
  });
  return { response, topics };
}

/**
 * `work`, or {@link WRAPPED_UP} when the budget's wrap-up point comes first. The work of a record handed back goes
 * on only until its current call returns (no step starts past the wrap-up point), and its outcome is dropped: the
 * copy put back is the record now, and its inbox check makes whatever the work committed count once.
 */
async function beforeWrapUp<T>(work: Promise<T>, budget: InvocationBudget): Promise<T | typeof WRAPPED_UP> {
  work.catch(() => {});
  const wrappedUp = budget.spent.then((): typeof WRAPPED_UP => WRAPPED_UP);
  return Promise.race([work, wrappedUp]);
}

/**
 * Hands a record the invocation has no time left for back to its queue as a fresh copy, then acknowledges it: the
 * backend was slow, not the message, so no receive is spent (its count starts again). Without failure handling it
 * is reported as failed, for SQS to redeliver.
 */
async function handBack(
  topics: ConsumeCountsByTopic,
  handing: { readonly record: SQSRecord; readonly message: Envelope; readonly invocation: Invocation },
): Promise<'REQUEUED'> {
  const { record, message, invocation } = handing;
  const { failures, logger } = invocation.consumer;
  const names = namesOf(message);
  if (failures === undefined) {
    throw new OutOfTimeError(`no time left in the invocation for ${message.messageId}; left to SQS`);
  }
  await requeueRecord(record, failures);
  consumeCountsOf(topics, message.topic).requeued += 1;
  logger.warn('message handed back', {
    ...names,
    sqsMessageId: record.messageId,
    disposition: 'REQUEUED',
    remainingMs: invocation.budget.remainingMs(),
  });
  return 'REQUEUED';
}

/** A parked message applied after its predecessor: counted and logged under its own topic. */
function countDrained(
  topics: ConsumeCountsByTopic,
  counting: { readonly drained: DrainedMessage; readonly consumer: SqsConsumer },
): void {
  const { drained, consumer } = counting;
  const { message, ...result } = drained;
  countConsumed(consumeCountsOf(topics, message.topic), {
    message,
    result,
    confirmedBy: consumer.deps.clock(),
  });
  consumer.logger.info('consumed parked message', { ...namesOf(message), ...result });
}

/**
 * A parked message whose apply failed after its predecessor's: it stays parked, and a fresh copy of it is put
 * back on the queue, so it is retried (with backoff, then dead-lettered with its reason) as a message of its own
 * rather than failing the record that drained it, which has been applied. Without failure handling it is only
 * logged: the sweeper's reconciliation resends it.
 */
async function retryParked(
  topics: ConsumeCountsByTopic,
  retrying: { readonly failed: DrainFailure; readonly record: SQSRecord; readonly consumer: SqsConsumer },
): Promise<void> {
  const { failed, record, consumer } = retrying;
  const names = { ...namesOf(failed.message), error: String(failed.error) };
  const { failures } = consumer;
  if (failures === undefined) {
    consumer.logger.warn('parked message failed', names);
    return;
  }
  const delaySeconds = visibilityTimeoutSeconds(1, failures.backoff, failures.random);
  await failures.queues.requeue(failures.sourceQueueUrl, parkedRecord(record, failed.message), delaySeconds);
  consumeCountsOf(topics, failed.message.topic).requeued += 1;
  consumer.logger.warn('parked message failed', { ...names, disposition: 'REQUEUED' });
}

/** An SQS record carrying a parked message, as the relay would have sent it, for its requeue. */
function parkedRecord(drainedBy: SQSRecord, message: Envelope): SQSRecord {
  return {
    ...drainedBy,
    // On a FIFO queue this is the copy's deduplication id; its group is its order key, as the relay sends it.
    messageId: `parked-${message.messageId}-${message.seq ?? 0}`,
    body: JSON.stringify(message),
    attributes: {
      ...drainedBy.attributes,
      ...(message.orderKey === undefined ? {} : { MessageGroupId: message.orderKey }),
    },
    messageAttributes: {
      [MESSAGE_ATTRIBUTES.messageId]: { dataType: 'String', stringValue: message.messageId },
      [MESSAGE_ATTRIBUTES.topic]: { dataType: 'String', stringValue: message.topic },
    },
  };
}

/** Counts one consumed message; a confirmation made now gives a latency (a duplicate's earlier one does not). */
function countConsumed(
  counts: TopicConsumeCounts,
  consumed: {
    readonly message: Envelope;
    readonly result: Pick<ConsumeResult, 'kind' | 'confirmation'>;
    readonly confirmedBy: Date;
  },
): void {
  const { message, result, confirmedBy } = consumed;
  if (result.kind === 'APPLIED') counts.applied += 1;
  else if (result.kind === 'REJECTED') counts.rejected += 1;
  else if (result.kind === 'PARKED') counts.parked += 1;
  else counts.duplicates += 1;
  const created = Date.parse(message.createdAt);
  if (result.confirmation === 'CONFIRMED' && Number.isFinite(created)) {
    counts.confirmLatenciesMs.push(Math.max(0, confirmedBy.getTime() - created));
  }
}

/** The names every per-message log line carries (and an ordered message's order key and seq). */
function namesOf(message: Envelope): {
  messageId: string;
  topic: string;
  aggregateId: string;
  orderKey?: string;
  seq?: number;
} {
  return {
    messageId: message.messageId,
    topic: message.topic,
    aggregateId: message.aggregateId,
    ...(message.orderKey === undefined ? {} : { orderKey: message.orderKey }),
    ...(message.seq === undefined ? {} : { seq: message.seq }),
  };
}

/** Whether a record comes from a FIFO queue (only those carry a message group). */
function isFifoRecord(record: SQSRecord): boolean {
  return record.attributes?.MessageGroupId !== undefined || record.eventSourceARN?.endsWith('.fifo') === true;
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

/** A record's envelope and conflict keys, read before the batch starts, or why it cannot be processed. */
type RecordRead =
  | { readonly keys: readonly string[]; readonly message: Envelope }
  | { readonly keys: readonly string[]; readonly message?: Envelope; readonly failure: unknown };

/** Reads a record ahead of the batch; one whose envelope cannot be read has no key and fails alone. */
function readRecord(record: SQSRecord, conflictKeys: ConflictKeys): RecordRead {
  let message: Envelope;
  try {
    message = readEnvelope(record);
  } catch (error) {
    return { keys: [], failure: error };
  }
  try {
    // The outbox's own messages never reach the user's code: they touch only the order keys they name.
    if (isControlTopic(message.topic)) {
      return { keys: controlOrderKeys(message).map((key) => `${ORDER_CONFLICT_PREFIX}${key}`), message };
    }
    // One aggregate's messages apply in batch order (its cursor would refuse the later one first otherwise).
    const ordering = message.orderKey === undefined ? [] : [`${ORDER_CONFLICT_PREFIX}${message.orderKey}`];
    return { keys: [...conflictKeys(message), ...ordering], message };
  } catch (error) {
    return { keys: [], message, failure: error };
  }
}

/** Where each record sits in the batch (a list, in case one record object is listed twice). */
function positionsOf(records: readonly SQSRecord[]): Map<SQSRecord, number[]> {
  const positions = new Map<SQSRecord, number[]>();
  records.forEach((record, index) => {
    positions.set(record, [...(positions.get(record) ?? []), index]);
  });
  return positions;
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
