import type { Envelope } from '../message/envelope.ts';

/** Per-entry result of publishing a batch: some entries may fail while the others succeed. */
export interface PublishResult {
  readonly sent: readonly string[];
  readonly failed: readonly { readonly messageId: string; readonly error: string }[];
}

/** What a publisher needs to know of a batch besides its envelopes. */
export interface PublishOptions {
  /**
   * Each message's delivery round, by message id (0 when absent): a FIFO queue's deduplication id is
   * `<messageId>-<round>`, so a retry within a round is dropped as a duplicate while a deliberate resend is not.
   */
  readonly deliveryRounds?: ReadonlyMap<string, number>;
}

/** Sends messages to a queue. Adapters: SQS (`SqsPublisher`), in-memory for tests and drills. */
export interface MessagePublisher {
  /** Sends up to 10 messages (SQS's SendMessageBatch limit) to `queueUrl`. */
  publishBatch(
    queueUrl: string,
    messages: readonly Envelope[],
    options?: PublishOptions,
  ): Promise<PublishResult>;
}

/** Attribute names carried on every SQS message, so consumers and tooling can read them without the body. */
export const MESSAGE_ATTRIBUTES = {
  messageId: 'message_id',
  topic: 'topic',
  traceparent: 'traceparent',
} as const;
