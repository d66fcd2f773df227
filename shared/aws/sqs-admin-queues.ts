import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type {
  AdminQueues,
  MoveTask,
  OutgoingQueueMessage,
  QueueDepth,
  QueueMessageAttribute,
  ReceivedQueueMessage,
} from '../admin/admin-queues.ts';

/**
 * Long polling for a second asks every SQS server, so an empty answer means the queue has nothing visible;
 * a short poll samples only some servers and may answer empty while messages wait.
 */
const RECEIVE_WAIT_SECONDS = 1;

/** {@link AdminQueues} on SQS. */
export class SqsAdminQueues implements AdminQueues {
  readonly #client: SQSClient;

  constructor(client: SQSClient) {
    this.#client = client;
  }

  /** @inheritdoc */
  async receive(
    queueUrl: string,
    options: { readonly maxMessages: number; readonly visibilityTimeoutSeconds: number },
  ): Promise<ReceivedQueueMessage[]> {
    const response = await this.#client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: options.maxMessages,
        VisibilityTimeout: options.visibilityTimeoutSeconds,
        WaitTimeSeconds: RECEIVE_WAIT_SECONDS,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
      }),
    );
    return (response.Messages ?? []).flatMap((message) => {
      if (message.MessageId === undefined || message.ReceiptHandle === undefined) return [];
      const groupId = message.Attributes?.MessageGroupId;
      const receiveCount = Number(message.Attributes?.ApproximateReceiveCount);
      return [
        {
          sqsMessageId: message.MessageId,
          receiptHandle: message.ReceiptHandle,
          body: message.Body ?? '',
          attributes: Object.fromEntries(
            Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, fromSqs(value)]),
          ),
          ...(groupId === undefined ? {} : { groupId }),
          ...(Number.isInteger(receiveCount) && receiveCount > 0 ? { receiveCount } : {}),
        },
      ];
    });
  }

  /** @inheritdoc */
  async send(queueUrl: string, message: OutgoingQueueMessage): Promise<void> {
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: message.body,
        MessageAttributes: Object.fromEntries(
          Object.entries(message.attributes).map(([name, value]) => [name, toSqs(value)]),
        ),
        ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
        ...(message.deduplicationId === undefined ? {} : { MessageDeduplicationId: message.deduplicationId }),
      }),
    );
  }

  /** @inheritdoc */
  async delete(queueUrl: string, receiptHandle: string): Promise<void> {
    await this.#client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
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
  async depth(queueUrl: string): Promise<QueueDepth> {
    const response = await this.#client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      visible: Number(response.Attributes?.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(response.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  }

  /** @inheritdoc */
  async startMoveTask(task: MoveTask): Promise<string> {
    const [sourceArn, destinationArn] = await Promise.all([
      this.#queueArn(task.deadLetterQueueUrl),
      this.#queueArn(task.destinationQueueUrl),
    ]);
    const response = await this.#client.send(
      new StartMessageMoveTaskCommand({
        SourceArn: sourceArn,
        DestinationArn: destinationArn,
        ...(task.maxPerSecond === undefined ? {} : { MaxNumberOfMessagesPerSecond: task.maxPerSecond }),
      }),
    );
    return response.TaskHandle ?? '';
  }

  async #queueArn(queueUrl: string): Promise<string> {
    const response = await this.#client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const arn = response.Attributes?.QueueArn;
    if (arn === undefined) throw new Error(`SQS returned no QueueArn for ${queueUrl}`);
    return arn;
  }
}

function fromSqs(value: MessageAttributeValue): QueueMessageAttribute {
  return {
    dataType: value.DataType ?? 'String',
    ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
    ...(value.BinaryValue === undefined ? {} : { binaryValue: value.BinaryValue }),
  };
}

function toSqs(value: QueueMessageAttribute): MessageAttributeValue {
  return {
    DataType: value.dataType,
    ...(value.stringValue === undefined ? {} : { StringValue: value.stringValue }),
    ...(value.binaryValue === undefined ? {} : { BinaryValue: value.binaryValue }),
  };
}
