import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describeError } from '../errors.ts';
import type { ReceiptQueue } from '../receipts/receipt-confirmer.ts';

/** SQS takes at most 10 entries per SendMessageBatch, and at most 256 KiB of them in all. */
const SQS_BATCH_ENTRIES = 10;
const SQS_BATCH_BYTES = 256 * 1024;

/**
 * {@link ReceiptQueue} on the producer's SQS receipt queue: SendMessageBatch calls of up to 10 bodies and 256 KiB,
 * sent at once.
 */
export class SqsReceiptQueue implements ReceiptQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(options: { readonly client: SQSClient; readonly queueUrl: string }) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
  }

  /** @inheritdoc */
  async sendBodies(bodies: readonly string[]): Promise<readonly (string | undefined)[]> {
    const failures: (string | undefined)[] = bodies.map(() => 'SQS reported no result for it');
    const calls: Promise<void>[] = [];
    let entries: { Id: string; MessageBody: string }[] = [];
    let bytes = 0;
    bodies.forEach((body, index) => {
      const size = Buffer.byteLength(body);
      if (entries.length === SQS_BATCH_ENTRIES || (entries.length > 0 && bytes + size > SQS_BATCH_BYTES)) {
        calls.push(this.#send(entries, failures));
        entries = [];
        bytes = 0;
      }
      entries.push({ Id: String(index), MessageBody: body });
      bytes += size;
    });
    if (entries.length > 0) calls.push(this.#send(entries, failures));
    await Promise.all(calls);
    return failures;
  }

  /** One SendMessageBatch call; it writes each entry's result (by its Id, the body's index) into `failures`. */
  async #send(
    entries: readonly { readonly Id: string; readonly MessageBody: string }[],
    failures: (string | undefined)[],
  ): Promise<void> {
    try {
      const response = await this.#client.send(
        new SendMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries: [...entries] }),
      );
      for (const { Id } of response.Successful ?? []) failures[Number(Id)] = undefined;
      for (const { Id, Code, Message } of response.Failed ?? []) {
        failures[Number(Id)] = `${Code ?? 'Error'}: ${Message ?? 'SQS rejected the entry'}`;
      }
    } catch (error) {
      // The whole call failed (throttled, timed out, queue missing or not allowed): none of its entries went.
      for (const { Id } of entries) failures[Number(Id)] = describeError(error);
    }
  }
}
