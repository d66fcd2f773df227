import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describeError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import type { MessagePublisher, PublishOptions, PublishResult } from '../relay/message-publisher.ts';
import {
  fifoFields,
  isFifoQueue,
  messageAttributes,
  messageBody,
  messageSystemAttributes,
} from '../relay/wire-format.ts';

/**
 * {@link MessagePublisher} on SQS SendMessageBatch; on FIFO queues each entry gets its order key (else its
 * aggregate) as message group and `<messageId>-<round>` as deduplication id.
 */
export class SqsPublisher implements MessagePublisher {
  readonly #client: SQSClient;

  constructor(client: SQSClient) {
    this.#client = client;
  }

  /** @inheritdoc */
  async publishBatch(
    queueUrl: string,
    messages: readonly Envelope[],
    options: PublishOptions = {},
  ): Promise<PublishResult> {
    const fifo = isFifoQueue(queueUrl);
    let response: SendMessageBatchCommandOutput;
    try {
      response = await this.#client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((message) => {
            const systemAttributes = messageSystemAttributes(message);
            return {
              // ULIDs are valid entry ids (alphanumeric, ≤ 80 characters) and unique within the batch.
              Id: message.messageId,
              MessageBody: messageBody(message),
              MessageAttributes: messageAttributes(message),
              // The consumer's invocation joins the producer's X-Ray trace.
              ...(systemAttributes === undefined ? {} : { MessageSystemAttributes: systemAttributes }),
              // FIFO: per-aggregate order, and one deduplication id per delivery round.
              ...(fifo ? fifoFields(message, options.deliveryRounds?.get(message.messageId) ?? 0) : {}),
            };
          }),
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
