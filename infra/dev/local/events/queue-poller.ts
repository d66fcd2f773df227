/**
 * Stands in for an SQS → Lambda event source mapping: receives batches, drops (deletes) what the filter
 * rejects, invokes the function, deletes what succeeded. Failed messages are left alone, so SQS redelivers
 * them after the visibility timeout and moves them to the DLQ after the queue's maxReceiveCount, as on AWS.
 * The receipts of a batch in flight are saved first, so a restart after a crash hands those messages back at
 * once instead of after their visibility timeout.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { LocalFunction } from '../host/local-function.ts';
import type { EventSourceMappingDefinition } from '../template/read-event-source-mappings.ts';
import { compileFilters } from './event-filter.ts';
import { type CycleResult, createPollLoop, type Poller, type PollerStats } from './poll-loop.ts';
import type { PollerStateStore } from './poller-state.ts';
import { messagesToDelete, toLambdaSqsRecord } from './sqs-event.ts';

/** Options of {@link createQueuePoller}. */
export interface QueuePollerOptions {
  readonly fn: LocalFunction;
  /** The mapping's settings, as the template gives them. */
  readonly mapping: EventSourceMappingDefinition;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly sqs: SQSClient;
  readonly region: string;
  /**
   * Visibility timeout given to messages of a failed invocation, so they come back sooner than the queue's
   * (6 × the function timeout). Lambda does not do this; tests of redelivery do. @default the queue's own
   */
  readonly retryVisibilitySeconds?: number;
  /** Where the receipts of the batch in flight are kept, and under which key. @default not kept */
  readonly state?: { readonly store: PollerStateStore; readonly key: string };
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
}

const SQS = {
  // ReceiveMessage and DeleteMessageBatch take at most 10 messages per call.
  maxMessagesPerCall: 10,
} as const;

/**
 * A poller for the mapping's queue, not yet started.
 * @example
 * const consumer = createQueuePoller({ fn, mapping, queueUrl, queueArn, sqs, region: 'us-east-1' });
 * consumer.start();
 */
export function createQueuePoller(options: QueuePollerOptions): Poller {
  const { fn, mapping, sqs } = options;
  const log = options.log ?? (() => {});
  const matches = compileFilters(mapping.filterPatterns);
  const stats: PollerStats = { invocations: 0, failedInvocations: 0, records: 0, discardedBatches: 0 };
  let released = false;

  const receiveBatch = async (flush: boolean, signal: AbortSignal): Promise<Message[]> => {
    const messages: Message[] = [];
    const windowEnds = Date.now() + mapping.maxBatchingWindowSeconds * 1000;
    for (;;) {
      const wanted = Math.min(SQS.maxMessagesPerCall, mapping.batchSize - messages.length);
      // Short polls, paced by the poll loop, and never aborted: a receive that is cut off (a stop, a killed
      // process) still hides what the emulator handed out, until the queue's visibility timeout ends. A long poll
      // would keep that window open for its whole wait.
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: wanted,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      messages.push(...(Messages ?? []));
      // Saved at once, not when the window closes: a kill during the batching window must not leave what was
      // received hidden for the queue's whole visibility timeout (the next start hands it back).
      if ((Messages ?? []).length > 0) {
        saveInFlight(
          messages.flatMap((message) => (message.ReceiptHandle === undefined ? [] : [message.ReceiptHandle])),
        );
      }
      // Lambda gathers up to BatchSize messages for at most MaximumBatchingWindowInSeconds.
      const full = messages.length >= mapping.batchSize;
      if (messages.length === 0 || full || flush || Date.now() >= windowEnds) return messages;
      if ((Messages ?? []).length === 0) await sleep(100, undefined, { signal }).catch(() => {});
      if (signal.aborted) return messages;
    }
  };

  const cycle = async ({ flush, signal }: { flush: boolean; signal: AbortSignal }): Promise<CycleResult> => {
    if (!released) {
      await releaseInFlight();
      released = true;
    }
    const messages = await receiveBatch(flush, signal);
    if (messages.length === 0) return { progressed: 0, idle: true };
    const received = messages.map((message) =>
      toLambdaSqsRecord(message, { queueArn: options.queueArn, region: options.region }),
    );
    // Lambda deletes the messages its filter rejects without invoking the function.
    const filteredOut = received.filter((record) => !matches(filterable(record)));
    await deleteMessages(filteredOut);
    const records = received.filter((record) => !filteredOut.includes(record));
    if (records.length === 0) {
      saveInFlight([]);
      return { progressed: received.length, idle: false };
    }

    saveInFlight(records.map((record) => record.receiptHandle));
    const invocation = await fn.invoke({ Records: records });
    stats.invocations += 1;
    stats.records += records.length;
    // Without ReportBatchItemFailures, Lambda ignores what the function returns.
    const toDelete = invocation.ok
      ? mapping.reportBatchItemFailures
        ? messagesToDelete(records, invocation.result)
        : records
      : undefined;
    if (!invocation.ok) {
      log(
        `[${fn.name}] batch of ${records.length} failed: ${invocation.error.name}: ${invocation.error.message}`,
      );
    } else if (toDelete === undefined) {
      log(`[${fn.name}] batch of ${records.length}: malformed batchItemFailures, treated as a failed batch`);
    } else if (toDelete.length < records.length) {
      log(
        `[${fn.name}] batch of ${records.length}: ${records.length - toDelete.length} item failure(s) reported`,
      );
    }
    if (toDelete === undefined || toDelete.length < records.length) stats.failedInvocations += 1;
    await deleteMessages(toDelete ?? []);
    const kept = new Set((toDelete ?? []).map((record) => record.messageId));
    await shortenVisibility(records.filter((record) => !kept.has(record.messageId)));
    saveInFlight([]);
    return { progressed: received.length, idle: false };
  };

  const saveInFlight = (receiptHandles: readonly string[]): void => {
    options.state?.store.saveInFlight(options.state.key, receiptHandles);
  };

  /** Hands back at once what an earlier run had received when it died. */
  const releaseInFlight = async (): Promise<void> => {
    const receipts = options.state?.store.inFlight(options.state.key) ?? [];
    if (receipts.length === 0) return;
    let handedBack = 0;
    for (const chunk of chunks(receipts, SQS.maxMessagesPerCall)) {
      try {
        const { Successful } = await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: chunk.map((receipt, index) => ({
              Id: String(index),
              ReceiptHandle: receipt,
              VisibilityTimeout: 0,
            })),
          }),
        );
        handedBack += Successful?.length ?? 0;
      } catch (error) {
        // Stale receipts (the message came back and was received again, or was deleted) change nothing; the
        // messages return after their visibility timeout either way.
        log(`[${fn.name}] could not hand back messages of the last run: ${String(error)}`);
      }
    }
    log(`[${fn.name}] handed back ${handedBack} of ${receipts.length} message(s) the last run had in flight`);
    saveInFlight([]);
  };

  const deleteMessages = async (records: readonly SQSRecord[]): Promise<void> => {
    for (const chunk of chunks(records, SQS.maxMessagesPerCall)) {
      const { Failed } = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
      for (const failure of Failed ?? []) log(`[${fn.name}] could not delete a message: ${failure.Message}`);
    }
  };

  const shortenVisibility = async (records: readonly SQSRecord[]): Promise<void> => {
    if (options.retryVisibilitySeconds === undefined) return;
    for (const chunk of chunks(records, SQS.maxMessagesPerCall)) {
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((record, index) => ({
            Id: String(index),
            ReceiptHandle: record.receiptHandle,
            VisibilityTimeout: options.retryVisibilitySeconds,
          })),
        }),
      );
    }
  };

  const control = createPollLoop({ name: fn.name, cycle, intervalMs: options.intervalMs, log });
  return {
    ...control,
    get paused() {
      return control.paused;
    },
    functionName: fn.name,
    description: `${fn.name} ← ${queueName(options.queueUrl)} queue: ${describeQueueMapping(mapping)}${
      options.retryVisibilitySeconds === undefined
        ? ''
        : ` (retry visibility ${options.retryVisibilitySeconds}s)`
    }`,
    stats: () => ({ ...stats }),
  };
}

/** The mapping's settings in one line, for the banner. */
export function describeQueueMapping(mapping: EventSourceMappingDefinition): string {
  const filters =
    mapping.filterPatterns.length === 0 ? '' : `, filter ${JSON.stringify(mapping.filterPatterns)}`;
  return (
    `batch ${mapping.batchSize}, window ${mapping.maxBatchingWindowSeconds}s${filters}` +
    (mapping.reportBatchItemFailures ? ', partial batch responses' : '') +
    '; failed messages return after the visibility timeout, then to the DLQ'
  );
}

/** The record as Lambda's filter sees it: a JSON body is matched as an object. */
function filterable(record: SQSRecord): unknown {
  try {
    return { ...record, body: JSON.parse(record.body) as unknown };
  } catch {
    return record;
  }
}

function queueName(queueUrl: string): string {
  return queueUrl.replace(/\/+$/, '').split('/').pop() ?? queueUrl;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let index = 0; index < items.length; index += size) result.push(items.slice(index, index + size));
  return result;
}
