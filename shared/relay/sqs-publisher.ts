import {
  type MessageAttributeValue,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describeError } from '../errors';
import type { Envelope } from '../message/envelope';
import { MESSAGE_ATTRIBUTES, type MessagePublisher, type PublishResult } from './message-publisher';

/** The SQS body of a message: the envelope as JSON. */
export function messageBody(message: Envelope): string {
  return JSON.stringify(message);
}

/** The SQS message attributes of a message: `message_id`, `topic` and, when present, `traceparent`. */
export function messageAttributes(message: Envelope): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [MESSAGE_ATTRIBUTES.messageId]: { DataType: 'String', StringValue: message.messageId },
    [MESSAGE_ATTRIBUTES.topic]: { DataType: 'String', StringValue: message.topic },
  };
  const traceparent = message.headers.traceparent;
  // SQS refuses an attribute with an empty value, which would fail the entry on every retry.
  if (traceparent !== undefined && traceparent !== '') {
    attributes[MESSAGE_ATTRIBUTES.traceparent] = { DataType: 'String', StringValue: traceparent };
  }
  return attributes;
}

/** The bytes SQS counts against its size limits: the body plus each attribute's name, type and value. */
export function messageSizeBytes(message: Envelope): number {
  let bytes = Buffer.byteLength(messageBody(message));
  for (const [name, attribute] of Object.entries(messageAttributes(message))) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(attribute.DataType ?? '');
    bytes += Buffer.byteLength(attribute.StringValue ?? '');
  }
  return bytes;
}

/** {@link MessagePublisher} on SQS SendMessageBatch; FIFO queues get the aggregate as message group. */
export class SqsPublisher implements MessagePublisher {
  readonly #client: SQSClient;

  constructor(client: SQSClient) {
    this.#client = client;
  }

  /** @inheritdoc */
  async publishBatch(queueUrl: string, messages: readonly Envelope[]): Promise<PublishResult> {
    const fifo = queueUrl.endsWith('.fifo');
    let response: SendMessageBatchCommandOutput;
    try {
      response = await this.#client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((message) => ({
            // ULIDs are valid entry ids (alphanumeric, ≤ 80 characters) and unique within the batch.
            Id: message.messageId,
            MessageBody: messageBody(message),
            MessageAttributes: messageAttributes(message),
            // FIFO: per-aggregate order, and SQS drops a resend within its 5-minute dedup window.
            ...(fifo
              ? { MessageGroupId: message.aggregateId, MessageDeduplicationId: message.messageId }
              : {}),
          })),
        }),
      );
    } catch (error) {
      // The whole call failed (throttled, timed out, queue missing): every entry failed this attempt.
      const reason = describeError(error);
      return {
        sent: [],
        failed: messages.map((message) => ({ messageId: message.messageId, error: reason })),
      };
    }
    const sent = (response.Successful ?? []).flatMap((entry) => (entry.Id === undefined ? [] : [entry.Id]));
    const failed = (response.Failed ?? []).flatMap((entry) =>
      entry.Id === undefined
        ? []
        : [
            {
              messageId: entry.Id,
              error: `${entry.Code ?? 'Error'}: ${entry.Message ?? 'SQS rejected the entry'}`,
            },
          ],
    );
    // An entry SQS reported neither way was not confirmed sent: count it failed so it is retried on schedule.
    const answered = new Set([...sent, ...failed.map((entry) => entry.messageId)]);
    const unanswered = messages
      .filter((message) => !answered.has(message.messageId))
      .map((message) => ({ messageId: message.messageId, error: 'SQS reported no result for this entry' }));
    return { sent, failed: [...failed, ...unanswered] };
  }
}
