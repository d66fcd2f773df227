import type { ConfirmOutcome } from '../../outbox/outbox-store.ts';
import type { DeliveryConfirmer } from '../../receipts/apply-receipts.ts';
import type { Receipt } from '../../receipts/receipt.ts';
import { confirmMessage, type DynamoOutboxConfirmerOptions } from './outbox-confirmer.ts';

/** Settings of {@link DynamoDeliveryConfirmer}. */
export interface DynamoDeliveryConfirmerOptions extends Omit<DynamoOutboxConfirmerOptions, 'actor'> {
  /** Each subscriber the producer delivers to, by name, and the topics it receives. */
  readonly subscribers: Readonly<Record<string, readonly string[]>>;
  /**
   * The producer's clock: the confirmation's time and the TTL count from when the producer learned of it, never
   * from the subscriber's clock (a skewed one would reorder the history or put the TTL out of reach).
   * @default () => new Date()
   */
  readonly clock?: () => Date;
}

/**
 * {@link DeliveryConfirmer} on the outbox table, for an outbox that delivers each message to one subscriber: a
 * receipt confirms its message when the subscriber that signed it is declared for the message's topic (the
 * condition is part of the update, so a receipt of another subscriber changes nothing). The history names who
 * confirmed: `receipt:<subscriber>`. Who may send to the receipt queue at all is its resource policy's business:
 * the topic condition keeps a receipt signed by one subscriber off the messages of topics it is not declared for.
 */
export class DynamoDeliveryConfirmer implements DeliveryConfirmer {
  readonly #options: DynamoDeliveryConfirmerOptions;

  constructor(options: DynamoDeliveryConfirmerOptions) {
    this.#options = options;
  }

  /** @inheritdoc */
  confirmDelivery(receipt: Receipt): Promise<ConfirmOutcome> {
    const { subscribers, clock, ...table } = this.#options;
    return confirmMessage(
      { ...table, actor: `receipt:${receipt.subscriber}` },
      {
        messageId: receipt.messageId,
        now: clock?.() ?? new Date(),
        outcome: receipt.outcome,
        topics: Object.hasOwn(subscribers, receipt.subscriber) ? (subscribers[receipt.subscriber] ?? []) : [],
      },
    );
  }
}
