import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import type { Envelope } from '../../../shared/index.ts';
import { deliveryKey } from './drill-subscribers.ts';

/** A random order line set for the drill: 1–3 distinct SKUs, 1–5 units each. */
export function randomOrderItems(random: () => number, skus: number): { sku: string; quantity: number }[] {
  const count = 1 + Math.floor(random() * 3);
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, skus)) chosen.add(Math.floor(random() * skus));
  return [...chosen].map((index) => ({ sku: skuName(index), quantity: 1 + Math.floor(random() * 5) }));
}

/** The drill's SKU names: SKU-000, SKU-001, … */
export function skuName(index: number): string {
  return `SKU-${String(index).padStart(3, '0')}`;
}

/** The SKU of the burst: many orders at once on one stock item, so the consumer's transactions contend. */
export const HOT_SKU = 'SKU-HOT';

/** Units a hot order takes at most. */
const HOT_ORDER_MAX_UNITS = 3;

/** Orders in the hot burst: 10 % of the run, at least 20 (every order of a smaller run). */
export function hotOrderCount(orders: number): number {
  return Math.min(orders, Math.max(20, Math.round(orders * 0.1)));
}

/** The hot SKU's starting stock: enough for every order of the burst, so none is rejected as out of stock. */
export function hotStock(orders: number): number {
  return hotOrderCount(orders) * HOT_ORDER_MAX_UNITS;
}

/** One order line on the hot SKU: 1–3 units. */
export function hotOrderItems(random: () => number): { sku: string; quantity: number }[] {
  return [{ sku: HOT_SKU, quantity: 1 + Math.floor(random() * HOT_ORDER_MAX_UNITS) }];
}

/**
 * The deliveries SQS rejects forever, by the subscriber they are sent to: every message of a poisoned order, and only
 * the `order.created` of a stalled one (its cancel is sent, and must wait behind it), at every subscriber — but a
 * delivery an operator fixed before replaying it.
 */
export function poisonedDeliveries(poison: {
  readonly orders: ReadonlySet<string>;
  readonly createsOf: ReadonlySet<string>;
  /** Deliveries (`<messageId>#<subscriber>`) whose cause an operator fixed: SQS takes them from then on. */
  readonly healed?: ReadonlySet<string>;
}): (message: Envelope, subscriber: string) => boolean {
  return (message, subscriber) =>
    !poison.healed?.has(deliveryKey(message.messageId, subscriber)) &&
    (poison.orders.has(message.aggregateId) ||
      (poison.createsOf.has(message.aggregateId) && message.topic === ORDER_CREATED));
}

/** The ordering scope of the example's order messages (the stack orders both topics in it). */
export const ORDER_SCOPE = 'order';

/** Of the cancelled orders, the share cancelled right after their create (often racing it through the pipeline). */
export const IMMEDIATE_CANCEL_SHARE = 0.5;
