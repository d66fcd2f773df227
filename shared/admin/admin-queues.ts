/** A message attribute as received and sent again: a String, Number or Binary value. */
export interface QueueMessageAttribute {
  readonly dataType: string;
  readonly stringValue?: string;
  readonly binaryValue?: Uint8Array;
}

/** A message received from a queue. */
export interface ReceivedQueueMessage {
  /** SQS's id of the message in this queue: stable across receives. */
  readonly sqsMessageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, QueueMessageAttribute>>;
  /** FIFO: the message group. */
  readonly groupId?: string;
  /** SQS's ApproximateReceiveCount, this receive included (a message SQS's redrive policy moved keeps its count). */
  readonly receiveCount?: number;
}

/** A message to send. */
export interface OutgoingQueueMessage {
  readonly body: string;
  readonly attributes: Readonly<Record<string, QueueMessageAttribute>>;
  /** FIFO only. */
  readonly groupId?: string;
  /** FIFO only: SQS drops a second send with this id within 5 minutes. */
  readonly deduplicationId?: string;
}

/** How many messages a queue holds, as GetQueueAttributes estimates them. */
export interface QueueDepth {
  /** ApproximateNumberOfMessages: waiting to be received. */
  readonly visible: number;
  /** ApproximateNumberOfMessagesNotVisible: received, not yet deleted. */
  readonly inFlight: number;
}

/** An SQS message move task: every message of a dead-letter queue back to its source queue, inside SQS. */
export interface MoveTask {
  readonly deadLetterQueueUrl: string;
  readonly destinationQueueUrl: string;
  /** @default SQS's own pace (up to 500 messages per second) */
  readonly maxPerSecond?: number;
}

/** The queue operations the admin core uses. Adapters: SQS ({@link SqsAdminQueues}), in-memory in tests. */
export interface AdminQueues {
  /** Up to `maxMessages` (≤ 10) messages, each hidden for `visibilityTimeoutSeconds`; [] when none is visible. */
  receive(
    queueUrl: string,
    options: { readonly maxMessages: number; readonly visibilityTimeoutSeconds: number },
  ): Promise<ReceivedQueueMessage[]>;
  send(queueUrl: string, message: OutgoingQueueMessage): Promise<void>;
  delete(queueUrl: string, receiptHandle: string): Promise<void>;
  changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void>;
  depth(queueUrl: string): Promise<QueueDepth>;
  /** Starts an SQS message move task and returns its handle; absent where the backend has none (emulators). */
  startMoveTask?(task: MoveTask): Promise<string>;
}

/** The name of a queue: the last segment of its URL. */
export function queueNameOf(queueUrl: string): string {
  return (
    queueUrl
      .split('/')
      .filter((part) => part !== '')
      .at(-1) ?? queueUrl
  );
}
