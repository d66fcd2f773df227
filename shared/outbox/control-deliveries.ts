import type { ErasePayload, SkipPayload } from '../message/control-message.ts';
import type { ControlTopic } from '../message/control-topics.ts';
import { ENVELOPE_SCHEMA_VERSION, type Envelope } from '../message/envelope.ts';
import { type NewOutboxItemOptions, newDeliveryItems, type OutboxItem } from './outbox-item.ts';

/** One control message to one subscriber, before it is stored. */
export interface NewControlDelivery {
  /** A fresh message id (a ULID): the id on the wire, the subscriber's dedupe key, its receipt's subject. */
  readonly messageId: string;
  readonly topic: ControlTopic;
  readonly subscriber: string;
  /** The aggregate it is about: an operator finds it among that aggregate's messages. */
  readonly aggregateId: string;
  readonly payload: ErasePayload | SkipPayload;
  readonly now: Date;
  readonly dueShards?: number;
}

/**
 * The outbox row of a control message to one subscriber: a delivery row like any other (`<messageId>#<subscriber>`,
 * `subscriber`, PENDING, in the due index), so the relay and the sweeper send, retry, resend and fail it as they do
 * every delivery, and the subscriber's receipt confirms it. Never ordered: it has no order key or seq of its own
 * (the order key a skip is about is in its payload), so no cursor holds it and no sequence read finds it.
 */
export function newControlDelivery(control: NewControlDelivery): OutboxItem {
  const envelope: Envelope = {
    messageId: control.messageId,
    topic: control.topic,
    aggregateId: control.aggregateId,
    payload: control.payload,
    headers: {},
    createdAt: control.now.toISOString(),
    schemaVersion: ENVELOPE_SCHEMA_VERSION,
  };
  const options: NewOutboxItemOptions = {
    now: control.now,
    ...(control.dueShards === undefined ? {} : { dueShards: control.dueShards }),
  };
  const [item] = newDeliveryItems(envelope, [control.subscriber], options);
  if (item === undefined) throw new RangeError('a control delivery has exactly one subscriber');
  return item;
}
