import type { ConfirmOutcome } from '../../outbox/outbox-store.ts';
import type { DeliveryConfirmer } from '../../receipts/apply-receipts.ts';
import type { Receipt } from '../../receipts/receipt.ts';
import { confirmMessage, type DynamoOutboxConfirmerOptions } from './outbox-confirmer.ts';

/** Settings of {@link DynamoDeliveryConfirmer}. */
export interface DynamoDeliveryConfirmerOptions extends Omit<DynamoOutboxConfirmerOptions, 'actor'> {
  /** Each subscriber the producer delivers to, by name, and the topics it receives. */
  readonly subscribers: Readonly<Record<string, readonly string[]>>;
}

/**
 * {@link DeliveryConfirmer} on the outbox table, for an outbox that delivers each message to one subscriber: a
 * receipt confirms its message when the subscriber that signed it is declared for the message's topic (the
 * condition is part of the update, so a receipt of another subscriber changes nothing). The history names who
 * confirmed: `receipt:<subscriber>`.
 */
export class DynamoDeliveryConfirmer implements DeliveryConfirmer {
  readonly #options: DynamoDeliveryConfirmerOptions;

  constructor(options: DynamoDeliveryConfirmerOptions) {
    this.#options = options;
  }

  /** @inheritdoc */
  confirmDelivery(receipt: Receipt): Promise<ConfirmOutcome> {
    const { subscribers, ...table } = this.#options;
    return confirmMessage(
      { ...table, actor: `receipt:${receipt.subscriber}` },
      {
        messageId: receipt.messageId,
        now: new Date(receipt.appliedAt),
        outcome: receipt.outcome,
        topics: Object.hasOwn(subscribers, receipt.subscriber) ? (subscribers[receipt.subscriber] ?? []) : [],
      },
    );
  }
}
