import type { Envelope } from '../message/envelope.ts';

/** An envelope of an ordered topic: it carries its order key and its place in that key's sequence. */
export type OrderedEnvelope = Envelope & { readonly orderKey: string; readonly seq: number };

/** Whether `message` belongs to an ordered topic (it carries an order key and a seq). */
export function isOrdered(message: Envelope): message is OrderedEnvelope {
  return message.orderKey !== undefined && message.seq !== undefined;
}
