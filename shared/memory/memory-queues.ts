import { createHash, randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import type { DeadLetterReason, QueueOperations } from '../consumer/failure-handling.ts';
import type { Envelope } from '../message/envelope.ts';
import type { MessagePublisher, PublishResult } from '../relay/message-publisher.ts';
import { messageAttributes, messageBody } from '../relay/wire-format.ts';

/** Settings of an in-memory queue, as SQS has them. */
export interface MemoryQueueSettings {
  readonly visibilityTimeoutMs: number;
  /** With `deadLetterQueueUrl`: receives after which the message moves to the DLQ (redrive policy). */
  readonly maxReceiveCount?: number;
  readonly deadLetterQueueUrl?: string;
}

interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly attributes: Record<string, string>;
  receiveCount: number;
  visibleAt: number;
  receiptHandle: string | undefined;
}

/**
 * In-memory SQS queues for tests and the scale drill: batches, visibility timeouts, receive counts,
 * redrive to a DLQ after maxReceiveCount, ChangeMessageVisibility and dead-lettering with a reason.
 * Time comes from the injected clock, so a drill can run hours of backoff in seconds.
 */
export class MemoryQueues implements MessagePublisher, QueueOperations {
  readonly #queues = new Map<
    string,
    { settings: MemoryQueueSettings; messages: Map<string, StoredMessage> }
  >();
  readonly #clock: () => Date;
  /** Receipt handle → message id, so delete and visibility changes need no search. */
  readonly #receipts = new Map<string, string>();

  constructor(queues: Readonly<Record<string, MemoryQueueSettings>>, clock: () => Date) {
    this.#clock = clock;
    for (const [url, settings] of Object.entries(queues))
      this.#queues.set(url, { settings, messages: new Map() });
  }

  /** @inheritdoc */
  async publishBatch(queueUrl: string, messages: readonly Envelope[]): Promise<PublishResult> {
    for (const message of messages) {
      const attributes = Object.fromEntries(
        Object.entries(messageAttributes(message)).map(([name, value]) => [name, value.StringValue ?? '']),
      );
      this.#enqueue(queueUrl, messageBody(message), attributes);
    }
    return { sent: messages.map((m) => m.messageId), failed: [] };
  }

  /** Receives up to `max` visible messages as Lambda SQS records, applying the redrive policy first. */
  receive(queueUrl: string, max: number): SQSRecord[] {
    const queue = this.#queue(queueUrl);
    const now = this.#clock().getTime();
    const records: SQSRecord[] = [];
    for (const message of queue.messages.values()) {
      if (records.length >= max) break;
      if (message.visibleAt > now) continue;
      const { maxReceiveCount, deadLetterQueueUrl } = queue.settings;
      if (
        maxReceiveCount !== undefined &&
        deadLetterQueueUrl !== undefined &&
        message.receiveCount >= maxReceiveCount
      ) {
        queue.messages.delete(message.id);
        this.#enqueue(deadLetterQueueUrl, message.body, message.attributes);
        continue;
      }
      message.receiveCount += 1;
      message.visibleAt = now + queue.settings.visibilityTimeoutMs;
      if (message.receiptHandle !== undefined) this.#receipts.delete(message.receiptHandle);
      message.receiptHandle = randomUUID();
      this.#receipts.set(message.receiptHandle, message.id);
      records.push(toRecord(queueUrl, message, now));
    }
    return records;
  }

  /** Deletes a received message; a stale receipt handle is ignored, as SQS does. */
  delete(queueUrl: string, receiptHandle: string): void {
    const id = this.#receipts.get(receiptHandle);
    if (id === undefined) return;
    this.#receipts.delete(receiptHandle);
    this.#queue(queueUrl).messages.delete(id);
  }

  /** @inheritdoc */
  async changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    const id = this.#receipts.get(receiptHandle);
    const message = id === undefined ? undefined : this.#queue(queueUrl).messages.get(id);
    if (message) message.visibleAt = this.#clock().getTime() + seconds * 1000;
  }

  /** @inheritdoc */
  async deadLetter(
    queueUrl: string,
    record: SQSRecord,
    reason: DeadLetterReason,
    lastError: string,
  ): Promise<void> {
    const attributes = Object.fromEntries(
      Object.entries(record.messageAttributes).map(([name, value]) => [name, value.stringValue ?? '']),
    );
    this.#enqueue(queueUrl, record.body, {
      ...attributes,
      dead_letter_reason: reason,
      last_error: lastError,
    });
  }

  /** Messages currently in a queue (visible or not). */
  depth(queueUrl: string): number {
    return this.#queue(queueUrl).messages.size;
  }

  /** Bodies and attributes of a queue's messages, for inspection. */
  peek(queueUrl: string): { body: string; attributes: Record<string, string> }[] {
    return [...this.#queue(queueUrl).messages.values()].map(({ body, attributes }) => ({ body, attributes }));
  }

  #enqueue(queueUrl: string, body: string, attributes: Record<string, string>): void {
    const id = randomUUID();
    this.#queue(queueUrl).messages.set(id, {
      id,
      body,
      attributes,
      receiveCount: 0,
      visibleAt: this.#clock().getTime(),
      receiptHandle: undefined,
    });
  }

  #queue(url: string) {
    const queue = this.#queues.get(url);
    if (!queue) throw new Error(`AWS.SimpleQueueService.NonExistentQueue: ${url}`);
    return queue;
  }
}

function toRecord(queueUrl: string, message: StoredMessage, now: number): SQSRecord {
  return {
    messageId: message.id,
    receiptHandle: message.receiptHandle ?? '',
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(now),
      SenderId: 'memory',
      ApproximateFirstReceiveTimestamp: String(now),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.attributes).map(([name, value]) => [
        name,
        { stringValue: value, dataType: 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: createHash('md5').update(message.body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:memory:000000000000:${queueUrl.split('/').pop() ?? queueUrl}`,
    awsRegion: 'memory',
  };
}
