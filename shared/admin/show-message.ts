import { deliveryIdOf } from '../message/delivery-id.ts';
import type { MessageStatus } from '../message/message-status.ts';
import { messageStatusOf } from '../outbox/delivery-status.ts';
import { type HistoryEntry, historyOf } from '../outbox/history.ts';
import { subscriberNames } from '../outbox/subscriptions.ts';
import type { AdminDeps } from './admin-deps.ts';
import { MessageNotFoundError } from './admin-errors.ts';
import { requireText } from './admin-input.ts';
import { type AuditRow, auditSubject } from './audit-trail.ts';

/** One subscriber's delivery of a message, as its row holds it. */
export interface DeliveryDetails {
  readonly subscriber: string;
  /** The delivery row as it is stored (`<messageId>#<subscriber>`), payload included. */
  readonly delivery: Readonly<Record<string, unknown>>;
  readonly history: readonly HistoryEntry[];
}

/** Everything known of one message. */
export interface MessageDetails {
  /**
   * The stored item as it is, payload included. For a message delivered to subscribers: its first delivery's row
   * with the message's own id and the status derived from every delivery (CONFIRMED only when each one is).
   */
  readonly message: Readonly<Record<string, unknown>>;
  /** For a message delivered to subscribers: each subscriber's delivery, in the order the outbox names them. */
  readonly deliveries?: readonly DeliveryDetails[];
  /** Its status changes and operators' actions, oldest first. */
  readonly history: readonly HistoryEntry[];
  /** The audit rows filed under the message (`message:<id>`), oldest first. */
  readonly audit: readonly AuditRow[];
}

/**
 * The full record of a message (a strongly consistent read), its history and its audit rows. Throws
 * {@link MessageNotFoundError} when there is no such message.
 * @example
 * const { message, history, audit } = await showMessage(deps, '01HW…');
 */
export async function showMessage(
  deps: Pick<AdminDeps, 'outbox' | 'audit' | 'subscriptions'>,
  messageId: string,
): Promise<MessageDetails> {
  const id = requireText('messageId', messageId);
  const [stored, audit] = await Promise.all([
    deps.outbox.read(id),
    deps.audit.trail(auditSubject.message(id)),
  ]);
  if (stored !== undefined) return { message: stored, history: historyOf(stored), audit };
  const deliveries = await deliveriesOf(deps, id);
  const [first] = deliveries;
  if (first === undefined) throw new MessageNotFoundError(id);
  const status = messageStatusOf(deliveries.map(({ delivery }) => delivery.status as MessageStatus));
  return { message: { ...first.delivery, messageId: id, status }, deliveries, history: [], audit };
}

/** The deliveries of message `id` to each subscriber the outbox delivers to (none without subscribers). */
async function deliveriesOf(
  deps: Pick<AdminDeps, 'outbox' | 'subscriptions'>,
  id: string,
): Promise<DeliveryDetails[]> {
  const names = subscriberNames(deps.subscriptions ?? {});
  const rows = await Promise.all(names.map((subscriber) => deps.outbox.read(deliveryIdOf(id, subscriber))));
  return rows.flatMap((delivery, n) =>
    delivery === undefined
      ? []
      : [{ subscriber: names[n] as string, delivery, history: historyOf(delivery) }],
  );
}
