/**
 * A message delivered to subscribers is stored as one outbox row per delivery; a message written before subscribers
 * existed, or of a topic without any, is one row. What a producer shows of an aggregate's messages is each message
 * once, with its deliveries — its own messages, not the outbox's about the aggregate (an erase or a skip sent to a
 * subscriber, `outbox.*`), which the operator tools show. Pure.
 */
import { isControlTopic } from '../message/control-topics.ts';
import { unscopedKeyOf } from '../message/delivery-id.ts';
import type { Envelope } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import { messageStatusOf } from './delivery-status.ts';

/** One subscriber's delivery of a message: its row's own fields (status, attempts, outcome…) under its name. */
export type GatheredDelivery = Readonly<Record<string, unknown>> & { readonly subscriber: string };

/**
 * A message gathered from its outbox rows. Stored as one row: that row, unchanged. Stored as deliveries: the
 * fields of the message itself (topic, aggregate, seq…, which every delivery carries alike) with its own id and
 * order key, the status derived from its deliveries' when each has one, and `deliveries`.
 */
export type GatheredMessage = Readonly<Record<string, unknown>> & {
  readonly messageId: string;
  /** Each subscriber's delivery, by subscriber name; absent for a message stored as one row. */
  readonly deliveries?: readonly GatheredDelivery[];
};

/** The fields of a delivery row that are the message's, not the delivery's: every delivery carries them alike. */
const MESSAGE_FIELDS = [
  'messageId',
  'topic',
  'aggregateId',
  'payload',
  'headers',
  'createdAt',
  'schemaVersion',
  'orderKey',
  'seq',
] as const satisfies readonly (keyof Envelope)[];

const isMessageField = (field: string): boolean => (MESSAGE_FIELDS as readonly string[]).includes(field);

const STATUSES: ReadonlySet<unknown> = new Set(Object.values(MessageStatus));

/**
 * Gathers outbox rows (as `readAggregateMessages` returns them, with `subscriber` among the attributes read) into
 * messages, each once: a delivery row (`<messageId>#<subscriber>`, with `subscriber`) joins the other deliveries of
 * its message, under the message's own id and with the status `messageStatusOf` derives from theirs (CONFIRMED only
 * when every delivery is; none when a delivery's status was not read or is not one); a row without `subscriber` is a
 * message of its own, kept as it is. Messages come by `seq`, then by id (ids are time-ordered to the millisecond
 * only, so a second message of an aggregate written in the same millisecond may have the smaller id), those without
 * a seq after the others; deliveries by subscriber name. A row without a string `messageId` is left out; one whose
 * key does not end with its subscriber's name is not a delivery of any message and is kept as a message of its own.
 * @example
 * const rows = await readAggregateMessages(
 *   { client, outboxTable },
 *   { aggregateId: 'order-17', attributes: ['topic', 'status', 'attempts', 'outcome', 'seq', 'subscriber'] },
 * );
 * for (const message of gatherDeliveries(rows)) {
 *   console.log(message.messageId, message.status, message.deliveries?.map((d) => `${d.subscriber}: ${d.status}`));
 * }
 */
export function gatherDeliveries(rows: readonly Readonly<Record<string, unknown>>[]): GatheredMessage[] {
  const messages: GatheredMessage[] = [];
  const deliveriesById = new Map<string, Readonly<Record<string, unknown>>[]>();
  for (const row of rows) {
    if (typeof row.messageId !== 'string') continue;
    if (typeof row.topic === 'string' && isControlTopic(row.topic)) continue;
    const messageId = deliveredMessageIdOf(row.messageId, row.subscriber);
    if (messageId === undefined) {
      messages.push(row as GatheredMessage);
      continue;
    }
    deliveriesById.set(messageId, [...(deliveriesById.get(messageId) ?? []), row]);
  }
  for (const [messageId, deliveryRows] of deliveriesById) messages.push(messageOf(messageId, deliveryRows));
  return messages.sort(inSequence);
}

/** The id of the message a row delivers to its subscriber; undefined for a row that is no subscriber's delivery. */
function deliveredMessageIdOf(key: string, subscriber: unknown): string | undefined {
  if (typeof subscriber !== 'string') return undefined;
  try {
    return unscopedKeyOf(key, subscriber);
  } catch {
    return undefined;
  }
}

/** A message from its delivery rows: its own fields from the first delivery, and each delivery's own. */
function messageOf(messageId: string, rows: readonly Readonly<Record<string, unknown>>[]): GatheredMessage {
  const deliveries = rows.map(deliveryOf).sort((a, b) => compareText(a.subscriber, b.subscriber));
  const first = rows.find((row) => row.subscriber === deliveries[0]?.subscriber) ?? {};
  const own = Object.fromEntries(Object.entries(first).filter(([field]) => isMessageField(field)));
  const subscriber = String(first.subscriber);
  const statuses = deliveries.map((delivery) => delivery.status);
  return {
    ...own,
    messageId,
    ...(typeof own.orderKey === 'string' ? { orderKey: unscopedOrderKeyOf(own.orderKey, subscriber) } : {}),
    ...(statuses.every((status) => STATUSES.has(status))
      ? { status: messageStatusOf(statuses as MessageStatus[]) }
      : {}),
    deliveries,
  };
}

/** A delivery row's own fields (what is not the message's), under its subscriber's name. */
function deliveryOf(row: Readonly<Record<string, unknown>>): GatheredDelivery {
  return {
    ...Object.fromEntries(Object.entries(row).filter(([field]) => !isMessageField(field))),
    subscriber: String(row.subscriber),
  };
}

/** The order key the writer assigned, from a delivery's (`<orderKey>#<subscriber>`); as stored if it is not one. */
function unscopedOrderKeyOf(orderKey: string, subscriber: string): string {
  try {
    return unscopedKeyOf(orderKey, subscriber);
  } catch {
    return orderKey;
  }
}

/** By `seq` (messages without one last), then by message id. */
function inSequence(a: GatheredMessage, b: GatheredMessage): number {
  const seqOf = (message: GatheredMessage) =>
    typeof message.seq === 'number' ? message.seq : Number.POSITIVE_INFINITY;
  if (seqOf(a) !== seqOf(b)) return seqOf(a) < seqOf(b) ? -1 : 1;
  return compareText(a.messageId, b.messageId);
}

/** Code-unit order, the same on every machine (no locale). */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}
