/**
 * A consumer's confirmation by receipt: instead of writing the producer's outbox, it sends a receipt to a queue
 * the producer owns. Receipts of records that finish close together are sent as one SQS message (a body of up to
 * 100 receipts), so a batch applied in parallel costs one send, not one per record.
 */
import type { Confirmation, Confirmer } from '../consumer/consume-types.ts';
import { describeError, OutboxError, OutboxErrorCode } from '../errors.ts';
import {
  assertReceipt,
  checkedReceiptBody,
  MAX_RECEIPT_OUTCOME_LENGTH,
  MAX_RECEIPTS_PER_BODY,
  type Receipt,
} from './receipt.ts';

/** Where receipt bodies go: the producer's receipt queue. */
export interface ReceiptQueue {
  /**
   * Sends each body as one message, at once; per body, `undefined` when it was sent, else why not. A body not
   * sent is retried by the consumer's record failing (its redelivery is a duplicate, whose confirmation sends the
   * receipt again).
   */
  sendBodies(bodies: readonly string[]): Promise<readonly (string | undefined)[]>;
}

/** Settings of a {@link ReceiptConfirmer}. */
export interface ReceiptConfirmerOptions {
  /** The name the producer declared this subscriber by; every receipt is signed with it. */
  readonly subscriber: string;
  readonly queue: ReceiptQueue;
  /**
   * How long a receipt waits for others to share its message with. Records applied one after another each wait
   * this long once; records applied in parallel go out together.
   * @default 5 ms
   */
  readonly lingerMs?: number;
  /** @default setTimeout */
  readonly setTimer?: (run: () => void, ms: number) => void;
}

/** Thrown to the record whose receipt the queue did not take: the record fails and is redelivered. */
export class ReceiptNotSentError extends OutboxError {
  /** The message whose receipt was not sent. */
  readonly messageId: string;

  constructor(messageId: string, reason: string, cause?: unknown) {
    super(
      OutboxErrorCode.RECEIPT_NOT_SENT,
      `the receipt of ${messageId} was not sent to the producer's receipt queue: ${reason}`,
      { cause },
    );
    this.messageId = messageId;
  }
}

interface Waiting {
  readonly receipt: Receipt;
  readonly resolve: (confirmation: Confirmation) => void;
  readonly reject: (error: Error) => void;
}

/** {@link Confirmer} by receipt; see the module's doc. */
export class ReceiptConfirmer implements Confirmer {
  readonly #options: ReceiptConfirmerOptions;
  #waiting: Waiting[] = [];

  constructor(options: ReceiptConfirmerOptions) {
    this.#options = options;
  }

  /** Resolves RECEIPT_SENT once the receipt is on the producer's queue; rejects with {@link ReceiptNotSentError}. */
  confirm(messageId: string, now: Date, outcome = 'APPLIED'): Promise<Confirmation> {
    const receipt: Receipt = {
      messageId,
      subscriber: this.#options.subscriber,
      outcome: outcome.slice(0, MAX_RECEIPT_OUTCOME_LENGTH),
      appliedAt: now.toISOString(),
    };
    // Checked alone, here: a receipt the producer would refuse fails its own record, never the others it would
    // have shared a message with.
    try {
      assertReceipt(receipt);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<Confirmation>((resolve, reject) => {
      this.#waiting.push({ receipt, resolve, reject });
      if (this.#waiting.length === 1) {
        const setTimer = this.#options.setTimer ?? ((run, ms) => setTimeout(run, ms));
        setTimer(() => void this.#flush(), this.#options.lingerMs ?? 5);
      }
    });
  }

  async #flush(): Promise<void> {
    const waiting = this.#waiting;
    this.#waiting = [];
    const groups: Waiting[][] = [];
    for (let start = 0; start < waiting.length; start += MAX_RECEIPTS_PER_BODY) {
      groups.push(waiting.slice(start, start + MAX_RECEIPTS_PER_BODY));
    }
    let failures: readonly (string | undefined)[];
    try {
      failures = await this.#options.queue.sendBodies(
        // Each receipt was checked in confirm(); a group is at most one body.
        groups.map((group) => checkedReceiptBody(group.map((w) => w.receipt))),
      );
    } catch (error) {
      for (const w of waiting) {
        w.reject(new ReceiptNotSentError(w.receipt.messageId, describeError(error), error));
      }
      return;
    }
    groups.forEach((group, index) => {
      const failure = index < failures.length ? failures[index] : 'the queue gave no result for it';
      for (const w of group) {
        if (failure === undefined) w.resolve('RECEIPT_SENT');
        else w.reject(new ReceiptNotSentError(w.receipt.messageId, failure));
      }
    });
  }
}
