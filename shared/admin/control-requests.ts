import type { ErasePayload, SkipPayload } from '../message/control-message.ts';
import type { ControlTopic } from '../message/control-topics.ts';
import { newControlDelivery } from '../outbox/control-deliveries.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type { AdminDeps } from './admin-deps.ts';

/**
 * A control message the admin wrote for one subscriber (an erase or a skip it cannot make in the subscriber's
 * inbox itself): the relay sends it, and the subscriber's outcome comes back as its receipt.
 */
export interface SentControl {
  readonly subscriber: string;
  /** Its message id: `show <messageId>` gives its delivery, CONFIRMED with the subscriber's outcome once applied. */
  readonly messageId: string;
  readonly topic: ControlTopic;
}

/** What one control message to one subscriber asks. */
export interface ControlToSend {
  readonly topic: ControlTopic;
  readonly subscriber: string;
  readonly aggregateId: string;
  readonly payload: ErasePayload | SkipPayload;
  readonly now: Date;
}

/** The put of a control message's delivery row (a new message id), and what the operator's answer says of it. */
export function controlRequest(
  deps: Pick<AdminDeps, 'outbox' | 'newId' | 'dueShards'>,
  request: ControlToSend,
): { readonly sent: SentControl; readonly action: TransactWriteAction } {
  const messageId = deps.newId();
  const item = newControlDelivery({ ...request, messageId, dueShards: deps.dueShards });
  return {
    sent: { subscriber: request.subscriber, messageId, topic: request.topic },
    action: deps.outbox.insertAction(item),
  };
}
