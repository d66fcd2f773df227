import { MessageStatus } from '../../../shared/index.ts';
import { deliveryKey, SUBSCRIBERS, type Subscriber } from './drill-subscribers.ts';

/** A delivery left unsettled on purpose: held (PENDING) or parked (delivered) behind its FAILED predecessor. */
export interface Stall {
  /** Whether its subscriber's consumer holds it in a parked row. */
  readonly parked: boolean;
  /** What is wrong with it, if anything. */
  readonly problem?: string;
}

/** Statuses a delivery ends in. */
export const SETTLED_STATUSES: ReadonlySet<unknown> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);

/** What {@link stalledDeliveries} reads of one subscriber's inbox table: its inbox rows and its parked rows. */
export interface SubscriberRows {
  readonly inbox: readonly Record<string, unknown>[];
  readonly parked: readonly Record<string, unknown>[];
}

/**
 * The ordered deliveries that wait, unsettled, for a predecessor that FAILED in their own subscriber's sequence
 * (`<orderKey>#<subscriber>`): they may never be applied (no inbox row) until an operator replays or skips the
 * predecessor there. Delivered, one must be parked by its subscriber's consumer; else it is held PENDING. Keyed by
 * delivery (`<messageId>#<subscriber>`).
 */
export function stalledDeliveries(
  outbox: readonly Record<string, unknown>[],
  subscribers: Readonly<Record<Subscriber, SubscriberRows>>,
): Map<string, Stall> {
  const bySequence = new Map<string, Record<string, unknown>>();
  for (const row of outbox) {
    if (typeof row.orderKey === 'string' && typeof row.seq === 'number')
      bySequence.set(`${row.orderKey}#${row.seq}`, row);
  }
  const applied = new Set<string>();
  const parked = new Set<string>();
  for (const subscriber of SUBSCRIBERS) {
    for (const row of subscribers[subscriber].inbox) applied.add(String(row.messageId));
    // A parked row names the message it holds by the message's own id (the id on the wire).
    for (const row of subscribers[subscriber].parked)
      parked.add(deliveryKey(String(row.parkedMessageId), subscriber));
  }
  const stalled = new Map<string, Stall>();
  for (const row of outbox) {
    if (SETTLED_STATUSES.has(row.status) || typeof row.seq !== 'number' || row.seq <= 1) continue;
    const predecessor = bySequence.get(`${String(row.orderKey)}#${row.seq - 1}`);
    if (predecessor?.status !== MessageStatus.FAILED) continue;
    const key = String(row.messageId);
    const isParked = parked.has(key);
    const problem = applied.has(key)
      ? `${key} has an inbox row although seq ${row.seq - 1} FAILED`
      : row.status === MessageStatus.SENT && !isParked
        ? `${key} is SENT behind FAILED seq ${row.seq - 1} but not parked`
        : undefined;
    stalled.set(key, { parked: isParked, ...(problem === undefined ? {} : { problem }) });
  }
  return stalled;
}
