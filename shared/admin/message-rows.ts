import { deliveryIdOf } from '../message/delivery-id.ts';
import { subscriberNames } from '../outbox/subscriptions.ts';
import type { AdminDeps } from './admin-deps.ts';
import { DeliveryNotFoundError, InvalidAdminRequestError, MessageNotFoundError } from './admin-errors.ts';
import type { StoredMessage } from './admin-ports.ts';
import { messageIdOfRow } from './message-summary.ts';

/** One stored row of a message: the message itself (delivered to one queue), or one subscriber's delivery of it. */
export interface MessageRow {
  /** The row's key: the message id, or `<messageId>#<subscriber>` for a delivery. */
  readonly key: string;
  /** The subscriber of a delivery; absent on a message delivered to one queue. */
  readonly subscriber?: string;
  /** The whole row, read strongly consistently. */
  readonly item: StoredMessage;
}

/** A message as the outbox holds it: its own id and the rows an operator's request names. */
export interface MessageRows {
  /** The message's own id (never a delivery's key). */
  readonly messageId: string;
  /**
   * How the rows were named: `message` — the message delivered to one queue, its only row; `delivery` — one
   * subscriber's delivery (named by subscriber, or by its key); `deliveries` — every delivery of the message.
   */
  readonly scope: 'message' | 'delivery' | 'deliveries';
  /** The rows, deliveries in the order of their subscribers' names; never empty. */
  readonly rows: readonly MessageRow[];
}

type Deps = Pick<AdminDeps, 'outbox' | 'subscriptions'>;

/**
 * The rows of message `messageId` an operator's request names, each read strongly consistently: with `subscriber`,
 * that subscriber's delivery; without, the message's own row, or — for a message delivered to subscribers — its
 * delivery to each subscriber the outbox delivers to (`SUBSCRIPTIONS`: no index finds a message's deliveries). A
 * delivery's key (`<messageId>#<subscriber>`) given as the id names that delivery. Throws
 * {@link MessageNotFoundError} when the outbox holds none of it, {@link DeliveryNotFoundError} when it holds the
 * message but no delivery to `subscriber`.
 * @example
 * const { rows } = await messageRows(deps, { messageId: '01J…', subscriber: 'loyalty' });
 */
export async function messageRows(
  deps: Deps,
  request: { readonly messageId: string; readonly subscriber?: string },
): Promise<MessageRows> {
  const { messageId } = request;
  const subscriber = request.subscriber?.trim() || undefined;
  if (subscriber !== undefined) {
    const key = deliveryIdOf(messageId, subscriber);
    const item = await deps.outbox.read(key);
    if (item !== undefined) return { messageId, scope: 'delivery', rows: [{ key, subscriber, item }] };
    // Why there is none: the id names a delivery, or a message delivered to one queue, or other subscribers'.
    const own = await deps.outbox.read(messageId);
    if (own?.subscriber !== undefined) {
      throw new InvalidAdminRequestError(
        'messageId',
        `${messageId} is the key of a delivery: give the message's own id with the subscriber`,
      );
    }
    if (own !== undefined) {
      throw new DeliveryNotFoundError({ messageId, subscriber, subscribers: [], single: true });
    }
    const others = await deliveriesOf(deps, messageId);
    if (others.length === 0) throw new MessageNotFoundError(messageId);
    throw new DeliveryNotFoundError({
      messageId,
      subscriber,
      subscribers: others.map((row) => row.subscriber ?? ''),
    });
  }
  const own = await deps.outbox.read(messageId);
  if (own !== undefined) {
    const named = typeof own.subscriber === 'string' ? own.subscriber : undefined;
    if (named === undefined) return { messageId, scope: 'message', rows: [{ key: messageId, item: own }] };
    // A delivery's key: that delivery, filed under the message it delivers.
    return {
      messageId: messageIdOfRow(messageId, named),
      scope: 'delivery',
      rows: [{ key: messageId, subscriber: named, item: own }],
    };
  }
  const rows = await deliveriesOf(deps, messageId);
  if (rows.length === 0) throw new MessageNotFoundError(messageId);
  return { messageId, scope: 'deliveries', rows };
}

/** The deliveries of message `messageId` to each subscriber the outbox delivers to, read strongly consistently. */
export async function deliveriesOf(deps: Deps, messageId: string): Promise<MessageRow[]> {
  const names = subscriberNames(deps.subscriptions ?? {});
  const keys = names.map((subscriber) => deliveryIdOf(messageId, subscriber));
  const items = await Promise.all(keys.map((key) => deps.outbox.read(key)));
  return items.flatMap((item, n) =>
    item === undefined ? [] : [{ key: keys[n] as string, subscriber: names[n] as string, item }],
  );
}
