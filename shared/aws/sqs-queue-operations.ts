import {
  ChangeMessageVisibilityCommand,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { DEAD_LETTER_ATTRIBUTES } from '../consumer/dead-letter-cause.ts';
import type { DeadLetter, QueueOperations } from '../consumer/failure-handling.ts';

/** SQS delays a message at most 15 minutes. */
const MAX_DELAY_SECONDS = 900;

/** {@link QueueOperations} on SQS. */
export class SqsQueueOperations implements QueueOperations {
  readonly #client: SQSClient;

  constructor(client: SQSClient) {
    this.#client = client;
  }

  /** @inheritdoc */
  async changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    await this.#client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
  }

  /** @inheritdoc */
  async requeue(queueUrl: string, record: SQSRecord, delaySeconds: number): Promise<void> {
    const fifo = queueUrl.endsWith('.fifo');
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: record.body,
        MessageAttributes: copiedAttributes(record),
        // FIFO queues take no per-message delay; the copy keeps its group and dedupes on this receive's id, so
        // a retried requeue does not land twice.
        ...(fifo
          ? {
              MessageGroupId: record.attributes.MessageGroupId ?? record.messageId,
              MessageDeduplicationId: record.messageId,
            }
          : { DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, delaySeconds)) }),
      }),
    );
  }

  /** @inheritdoc */
  async deadLetter({ queueUrl, record, reason, lastError }: DeadLetter): Promise<void> {
    const reasonAttributes: Record<string, string> = {
      [DEAD_LETTER_ATTRIBUTES.reason]: reason,
      [DEAD_LETTER_ATTRIBUTES.lastError]: lastError.slice(0, 1_000) || '-',
      [DEAD_LETTER_ATTRIBUTES.receiveCount]: record.attributes.ApproximateReceiveCount,
      [DEAD_LETTER_ATTRIBUTES.sourceQueue]: record.eventSourceARN,
    };
    const attributes = stringAttributes(reasonAttributes);
    for (const [name, value] of Object.entries(copiedAttributes(record))) {
      if (!(name in attributes)) attributes[name] = value;
    }
    try {
      // The body stays exactly as received, so a replay sends it back unchanged. SQS allows 10 attributes;
      // the reason comes first so it is never the one dropped.
      await this.#sendDeadLetter(
        queueUrl,
        record,
        Object.fromEntries(Object.entries(attributes).slice(0, 10)),
      );
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      // A message near SQS's size limit has no room for the copied attributes: keep the body and the reason,
      // with a short error, rather than leave the message to the redrive policy without any reason.
      await this.#sendDeadLetter(
        queueUrl,
        record,
        stringAttributes({
          [DEAD_LETTER_ATTRIBUTES.reason]: reason,
          [DEAD_LETTER_ATTRIBUTES.lastError]: lastError.slice(0, 200) || '-',
        }),
      );
    }
  }

  async #sendDeadLetter(
    queueUrl: string,
    record: SQSRecord,
    attributes: Record<string, MessageAttributeValue>,
  ): Promise<void> {
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: record.body,
        MessageAttributes: attributes,
        // A FIFO queue's DLQ must be FIFO, and SQS refuses a FIFO send without a group: keep the original
        // group, and dedupe on the SQS message id so a retried dead-lettering does not land twice.
        ...(queueUrl.endsWith('.fifo')
          ? {
              MessageGroupId: record.attributes.MessageGroupId ?? record.messageId,
              MessageDeduplicationId: record.messageId,
            }
          : {}),
      }),
    );
  }
}

/** String message attributes from names and values. */
function stringAttributes(values: Record<string, string>): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
  );
}

/** Whether SQS refused a send for its size (body and attributes together over the queue's maximum). */
function isTooLarge(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    /InvalidParameterValue|MessageTooLong/.test(error.name) &&
    /shorter than|too long|size/i.test(error.message)
  );
}

/** A received record's string attributes as a send takes them; SQS refuses an empty value. */
function copiedAttributes(record: SQSRecord): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes)) {
    if (value.stringValue !== undefined && value.stringValue !== '') {
      attributes[name] = { DataType: value.dataType, StringValue: value.stringValue };
    }
  }
  return attributes;
}
