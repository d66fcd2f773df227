import type { MessageStatus } from '../message/message-status.ts';
import { messageStatusOf } from '../outbox/delivery-status.ts';
import { type HistoryEntry, historyOf } from '../outbox/history.ts';
import { orderKeyOf } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import { requireText } from './admin-input.ts';
import { type AuditRow, auditSubject } from './audit-trail.ts';
import { type MessageRow, messageRows } from './message-rows.ts';

/** One subscriber's delivery of a message, as its row holds it. */
export interface DeliveryDetails {
  readonly subscriber: string;
  /** The delivery row as it is stored (`<messageId>#<subscriber>`), payload included. */
  readonly delivery: Readonly<Record<string, unknown>>;
  /** The delivery's status changes and operators' actions, oldest first. */
  readonly history: readonly HistoryEntry[];
}

/** Everything known of one message. */
export interface MessageDetails {
  /**
   * The stored item as it is, payload included. For a message delivered to subscribers: the message as its
   * writer wrote it (its own id and order key, payload, headers, times), with the status derived from every
   * delivery (CONFIRMED only when each one is) — each delivery's own bookkeeping is in `deliveries`.
   */
  readonly message: Readonly<Record<string, unknown>>;
  /** For a message delivered to subscribers: each subscriber's delivery, in the order of their names. */
  readonly deliveries?: readonly DeliveryDetails[];
  /** Its status changes and operators' actions, oldest first (for deliveries: in each delivery's own). */
  readonly history: readonly HistoryEntry[];
  /** The audit rows filed under the message (`message:<id>`), oldest first; each names the subscriber it acted on. */
  readonly audit: readonly AuditRow[];
}

/**
 * The attributes of a delivery row that are the delivery's own bookkeeping, not the message's: left out of the
 * message a fanned-out message is shown as.
 */
const DELIVERY_ATTRIBUTES: ReadonlySet<string> = new Set([
  'subscriber',
  'status',
  'attempts',
  'nextAttemptAt',
  'dueShard',
  'lastError',
  'resends',
  'refusals',
  'replays',
  'updatedAt',
  'sentAt',
  'confirmBy',
  'confirmedAt',
  'outcome',
  'cancelledAt',
  'leaseOwner',
  'leaseUntil',
  'expiresAt',
  'attentionKey',
  'history',
  'skippedAt',
]);

/**
 * The full record of a message (strongly consistent reads), its history and its audit rows. A message delivered to
 * subscribers is gathered from its delivery to each one (`SUBSCRIPTIONS`), its status derived from theirs
 * (`messageStatusOf`). A delivery's key (`<messageId>#<subscriber>`) shows that delivery as it is stored. Throws
 * `MessageNotFoundError` when there is no such message.
 * @example
 * const { message, deliveries, audit } = await showMessage(deps, '01HW…');
 */
export async function showMessage(
  deps: Pick<AdminDeps, 'outbox' | 'audit' | 'subscriptions'>,
  messageId: string,
): Promise<MessageDetails> {
  const id = requireText('messageId', messageId);
  const found = await messageRows(deps, { messageId: id });
  const audit = await auditOf(deps, found.messageId, found.rows);
  if (found.scope !== 'deliveries') {
    const [row] = found.rows;
    const stored = row?.item ?? {};
    return { message: stored, history: historyOf(stored), audit };
  }
  const deliveries = found.rows.map((row) => ({
    subscriber: row.subscriber ?? '',
    delivery: row.item,
    history: historyOf(row.item),
  }));
  const status = messageStatusOf(deliveries.map(({ delivery }) => delivery.status as MessageStatus));
  return { message: messageOf(found.messageId, found.rows, status), deliveries, history: [], audit };
}

/** The message a fanned-out message's deliveries carry, with its own id and order key, and its derived status. */
function messageOf(
  messageId: string,
  rows: readonly MessageRow[],
  status: MessageStatus,
): Record<string, unknown> {
  const first = rows[0]?.item ?? {};
  const message = Object.fromEntries(
    Object.entries(first).filter(([name]) => !DELIVERY_ATTRIBUTES.has(name)),
  );
  const orderKey =
    typeof first.orderKey === 'string'
      ? orderKeyOf({ orderKey: first.orderKey, subscriber: rows[0]?.subscriber })
      : undefined;
  return { ...message, messageId, ...(orderKey === undefined ? {} : { orderKey }), status };
}

/**
 * The audit rows of the message, oldest first: those filed under its id, and under each delivery's key (where an
 * action on a delivery by its key was filed). A delivery shown by its key gets only the rows about it.
 */
async function auditOf(
  deps: Pick<AdminDeps, 'audit'>,
  messageId: string,
  rows: readonly MessageRow[],
): Promise<AuditRow[]> {
  const subjects = [...new Set([messageId, ...rows.map((row) => row.key)])];
  const trails = await Promise.all(
    subjects.map((subject) => deps.audit.trail(auditSubject.message(subject))),
  );
  const only = rows.length === 1 ? rows[0]?.subscriber : undefined;
  return trails
    .flat()
    .filter((row) => only === undefined || namesSubscriber(row, only) !== false)
    .sort((a, b) => (a.actionId < b.actionId ? -1 : a.actionId > b.actionId ? 1 : 0));
}

/** Whether an audit row names `subscriber` (one it acted on); `undefined` when it names no subscriber. */
function namesSubscriber(row: AuditRow, subscriber: string): boolean | undefined {
  const { details } = row;
  if (typeof details.subscriber === 'string') return details.subscriber === subscriber;
  if (Array.isArray(details.deliveries)) {
    return details.deliveries.some(
      (delivery: unknown) =>
        typeof delivery === 'object' &&
        delivery !== null &&
        (delivery as { subscriber?: unknown }).subscriber === subscriber,
    );
  }
  return undefined;
}
