import { isOrdered } from '../consumer/ordered-envelope.ts';
import type { DeliveryCheck, DeliveryVerdict } from './sweep.ts';

/**
 * What the delivery check reads of a consumer's inbox, each read strongly consistent so a just-committed effect is
 * never mistaken for a missing one.
 */
export interface InboxDeliveryReads {
  /** The inbox row of a message, with the outcome it records (`undefined` when none); `undefined` when no row. */
  inboxRow(messageId: string): Promise<{ readonly outcome: string | undefined } | undefined>;
  /** The last seq the consumer applied of an order key; 0 when it applied none. */
  cursorLastSeq(orderKey: string): Promise<number>;
  /** When the message `seq` of `orderKey` was parked; `undefined` when it is not parked. */
  parkedAt(orderKey: string, seq: number): Promise<string | undefined>;
}

/**
 * The reconciliation check for a consumer built on this library: the message was applied exactly when the
 * consumer's inbox holds its id (the inbox row commits with the effect), and the row's outcome is the one the
 * producer shows. A message of an ordered topic is also delivered when its order key's cursor has passed it
 * (skipped by an operator, or its inbox row expired), and PARKED when the consumer holds it for its predecessor;
 * the three are read at once.
 */
export function deliveryCheckOfInbox(inbox: InboxDeliveryReads): DeliveryCheck {
  return async (message) => {
    if (!isOrdered(message))
      return deliveredBy(await inbox.inboxRow(message.messageId)) ?? { verdict: 'MISSING' };
    const [row, lastSeq, parkedAt] = await Promise.all([
      inbox.inboxRow(message.messageId),
      inbox.cursorLastSeq(message.orderKey),
      inbox.parkedAt(message.orderKey, message.seq),
    ]);
    const delivered = deliveredBy(row);
    if (delivered !== undefined) return delivered;
    if (lastSeq >= message.seq) return { verdict: 'DELIVERED' };
    if (parkedAt !== undefined) return { verdict: 'PARKED', parkedAt, lastSeq };
    return { verdict: 'MISSING' };
  };
}

/** The verdict an inbox row gives: delivered, with its outcome when it records one. */
function deliveredBy(row: { readonly outcome: string | undefined } | undefined): DeliveryVerdict | undefined {
  if (row === undefined) return undefined;
  return row.outcome === undefined
    ? { verdict: 'DELIVERED' }
    : { verdict: 'DELIVERED', outcome: row.outcome };
}
