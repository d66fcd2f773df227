import { type Envelope, PoisonMessageError } from 'serverless-outbox';
import { prettifyError, safeParse } from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { type OrderCreated, orderCreatedSchema } from './order-created.ts';

/** English messages for issues whose schema gives none: `zod/mini` loads no locale of its own. */
const ENGLISH = { error: en().localeError } as const;

/** An order's id and its quantity per SKU, as the inventory service reserves and releases them. */
export interface OrderLines {
  readonly orderId: string;
  /** Lines of one SKU summed (a transaction may touch each item once), in the order they first appear. */
  readonly quantities: ReadonlyMap<string, number>;
}

/**
 * Reads the order id and lines of an `order.created` or `order.cancelled` payload (a cancellation carries the
 * lines it releases, which are the lines the order reserved, read with the same limits), or throws a
 * `PoisonMessageError` saying why it cannot (no readable lines, or lines of one SKU adding up past the safe
 * integer range, which would move the stock wrongly).
 */
export function orderLinesOf(message: Envelope): OrderLines {
  const order = safeParse(orderCreatedSchema, message.payload, ENGLISH);
  if (!order.success) {
    throw new PoisonMessageError(`unreadable ${message.topic} payload: ${prettifyError(order.error)}`);
  }
  return { orderId: order.data.orderId, quantities: quantitiesBySku(order.data.items) };
}

function quantitiesBySku(items: OrderCreated['items']): Map<string, number> {
  const quantities = new Map<string, number>();
  for (const { sku, quantity } of items) quantities.set(sku, (quantities.get(sku) ?? 0) + quantity);
  for (const [sku, quantity] of quantities) {
    if (!Number.isSafeInteger(quantity)) {
      throw new PoisonMessageError(
        `the quantities of ${sku} add up to ${quantity}, past the safe integer range`,
      );
    }
  }
  return quantities;
}
