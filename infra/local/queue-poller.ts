/**
 * Stands in for an SQS → Lambda event source mapping: receives batches, invokes the function, deletes what
 * succeeded. Failed messages are left alone, so SQS redelivers them after the visibility timeout and moves
 * them to the DLQ after the queue's maxReceiveCount, as on AWS.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { QueueSourceSpec } from '../topology.ts';
import type { LocalFunction } from './local-function.ts';
import { type CycleResult, createPollLoop, type Poller, type PollerStats } from './poll-loop.ts';
import { messagesToDelete, toLambdaSqsRecord } from './sqs-event.ts';

/** Options of {@link createQueuePoller}. */
export interface QueuePollerOptions {
  readonly fn: LocalFunction;
  readonly source: QueueSourceSpec;
  readonly queueUrl: string;
  readonly sqs: SQSClient;
  readonly region: string;
  /**
   * Visibility timeout given to messages of a failed invocation, so they come back sooner than the queue's
   * (6 × the function timeout). Lambda does not do this; tests of redelivery do. @default the queue's own
   */
  readonly retryVisibilitySeconds?: number;
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
}

const SQS = {
  // ReceiveMessage and DeleteMessageBatch take at most 10 messages per call.
  maxMessagesPerCall: 10,
  // Long polling keeps an idle poller from hammering the emulator; 1 s keeps stop() quick.
  waitTimeSeconds: 1,
} as const;

/**
 * A poller for `source`'s queue, not yet started.
 * @example
 * const consumer = createQueuePoller({ fn, source: spec.queueSource, queueUrl, sqs, region: 'us-east-1' });
 * consumer.start();
 */
export function createQueuePoller(options: QueuePollerOptions): Poller {
  const { fn, source, sqs } = options;
  const log = options.log ?? (() => {});
  const stats: PollerStats = { invocations: 0, failedInvocations: 0, records: 0, discardedBatches: 0 };
  let queueArn: string | undefined;

  const receiveBatch = async (flush: boolean, signal: AbortSignal): Promise<Message[]> => {
    const messages: Message[] = [];
    const windowEnds = Date.now() + source.maxBatchingWindowSeconds * 1000;
    for (;;) {
      const wanted = Math.min(SQS.maxMessagesPerCall, source.batchSize - messages.length);
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: wanted,
          // A flush (pollOnce) takes what is there now rather than waiting for more.
          WaitTimeSeconds: messages.length === 0 && !flush ? SQS.waitTimeSeconds : 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: signal },
      );
      messages.push(...(Messages ?? []));
      // Lambda gathers up to BatchSize messages for at most MaximumBatchingWindowInSeconds.
      const full = messages.length >= source.batchSize;
      if (messages.length === 0 || full || flush || Date.now() >= windowEnds) return messages;
      if ((Messages ?? []).length === 0) await sleep(100, undefined, { signal }).catch(() => {});
      if (signal.aborted) return messages;
    }
  };

  const cycle = async ({ flush, signal }: { flush: boolean; signal: AbortSignal }): Promise<CycleResult> => {
    queueArn ??= await arnOf(sqs, options.queueUrl);
    const messages = await receiveBatch(flush, signal);
    if (messages.length === 0) return { progressed: 0, idle: true };
    const records = messages.map((message) =>
      toLambdaSqsRecord(message, { queueArn: queueArn ?? '', region: options.region }),
    );
    const invocation = await fn.invoke({ Records: records });
    stats.invocations += 1;
    stats.records += records.length;
    const toDelete = invocation.ok ? messagesToDelete(records, invocation.result) : undefined;
    if (!invocation.ok) {
      log(
        `[${fn.key}] batch of ${records.length} failed: ${invocation.error.name}: ${invocation.error.message}`,
      );
    } else if (toDelete === undefined) {
      log(`[${fn.key}] batch of ${records.length}: malformed batchItemFailures, treated as a failed batch`);
    } else if (toDelete.length < records.length) {
      log(
        `[${fn.key}] batch of ${records.length}: ${records.length - toDelete.length} item failure(s) reported`,
      );
    }
    if (toDelete === undefined || toDelete.length < records.length) stats.failedInvocations += 1;
    await deleteMessages(toDelete ?? []);
    const kept = new Set((toDelete ?? []).map((record) => record.messageId));
    await shortenVisibility(records.filter((record) => !kept.has(record.messageId)));
    return { progressed: records.length, idle: false };
  };

  const deleteMessages = async (records: readonly SQSRecord[]): Promise<void> => {
    for (const chunk of chunks(records, SQS.maxMessagesPerCall)) {
      const { Failed } = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
      for (const failure of Failed ?? []) log(`[${fn.key}] could not delete a message: ${failure.Message}`);
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

  const control = createPollLoop({ name: fn.key, cycle, intervalMs: options.intervalMs, log });
  return {
    ...control,
    get paused() {
      return control.paused;
    },
    functionKey: fn.key,
    description:
      `${fn.key} ← ${source.queue} queue: batch ${source.batchSize}, window ${source.maxBatchingWindowSeconds}s, ` +
      'partial batch responses; failed messages return after the visibility timeout, then to the DLQ' +
      (options.retryVisibilitySeconds === undefined
        ? ''
        : ` (retry visibility ${options.retryVisibilitySeconds}s)`),
    stats: () => ({ ...stats }),
  };
}

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn ?? queueUrl;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let index = 0; index < items.length; index += size) result.push(items.slice(index, index + size));
  return result;
}
