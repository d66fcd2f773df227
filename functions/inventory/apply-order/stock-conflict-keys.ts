import type { Envelope } from 'serverless-outbox';
import { safeParse } from 'zod/mini';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../orders/order.ts';
import { orderCreatedSchema } from './order-created.ts';

/** The topics whose messages move stock: reservations and releases. */
const STOCK_TOPICS: ReadonlySet<string> = new Set([ORDER_CREATED, ORDER_CANCELLED]);

/**
 * The stock items an `order.created` (reservation) or `order.cancelled` (release) message touches, as the
 * consumer's conflict keys: one per SKU of its lines, so orders for different SKUs are applied at once and
 * orders sharing a SKU one after another (two concurrent transactions on one SKU would cancel each other).
 * The reservation row of an order is touched by its two messages only, which share its SKUs. A message the
 * plan cannot read (another topic, no readable lines, or a payload still in the claim check) gets a key of
 * its own: it touches no stock here, or, claim-checked, its transaction is retried on a conflict.
 * @example
 * stockConflictKeys(orderCreated); // ['sku:SKU-1', 'sku:SKU-2']
 */
export function stockConflictKeys(message: Envelope): readonly string[] {
  const order = STOCK_TOPICS.has(message.topic) ? safeParse(orderCreatedSchema, message.payload) : undefined;
  if (!order?.success) return [`message:${message.messageId}`];
  return [...new Set(order.data.items.map(({ sku }) => `sku:${sku}`))];
}
