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

// The attribute names are the message's own (its size on the wire counts them), defined beside its size.
export { MESSAGE_ATTRIBUTES } from '../message/message-size.ts';
