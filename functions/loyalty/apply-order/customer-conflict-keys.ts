import type { Envelope } from 'serverless-outbox';
import * as z from 'zod/mini';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../orders/order.ts';
import { orderPointsSchema } from './order-points.ts';

/** The topics whose messages move points: awards and revocations. */
const POINTS_TOPICS: ReadonlySet<string> = new Set([ORDER_CREATED, ORDER_CANCELLED]);

/**
 * The loyalty items an `order.created` (award) or `order.cancelled` (revocation) message touches, as the
 * consumer's conflict key: its customer's, since both write that customer's points row, so orders of different
 * customers are applied at once and a customer's orders one after another (two concurrent transactions on one row
 * would cancel each other). The award row of an order is touched by its two messages only, which share its
 * customer. A message the plan cannot read (another topic, no customer, or a payload still in the claim check)
 * gets a key of its own: it touches no points here, or, claim-checked, its transaction is retried on a conflict.
 * @example
 * customerConflictKeys(orderCreated); // ['customer:c-1']
 */
export function customerConflictKeys(message: Envelope): readonly string[] {
  const order = POINTS_TOPICS.has(message.topic)
    ? z.safeParse(orderPointsSchema, message.payload)
    : undefined;
  if (!order?.success) return [`message:${message.messageId}`];
  return [`customer:${order.data.customerId}`];
}
