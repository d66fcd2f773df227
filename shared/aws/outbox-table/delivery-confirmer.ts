import { CONTROL_TOPICS } from '../../message/control-topics.ts';
import { deliveryIdOf } from '../../message/delivery-id.ts';
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
 * {@link DeliveryConfirmer} on the outbox table: a receipt confirms the delivery row of the subscriber that signed
 * it (`<messageId>#<subscriber>`) — never another subscriber's delivery, whose key it does not name — and only
 * when that subscriber is declared for the message's topic, or the message is one of the outbox's own (a control
 * topic), which every declared subscriber is sent (the condition is part of the update). The history
 * names who confirmed: `receipt:<subscriber>`. Who may send to the receipt queue at all is its resource policy's
 * business.
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
        messageId: deliveryIdOf(receipt.messageId, receipt.subscriber),
        now: clock?.() ?? new Date(),
        outcome: receipt.outcome,
        topics: topicsOf(subscribers, receipt.subscriber),
      },
    );
  }
}

/**
 * The topics a receipt of `subscriber` may confirm a delivery of: its declared topics and the control topics; none
 * for a subscriber the producer does not declare.
 */
function topicsOf(subscribers: Readonly<Record<string, readonly string[]>>, subscriber: string): string[] {
  const declared = Object.hasOwn(subscribers, subscriber) ? subscribers[subscriber] : undefined;
  return declared === undefined ? [] : [...declared, ...CONTROL_TOPICS];
}
