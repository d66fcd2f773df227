import { type Envelope, PoisonMessageError } from 'serverless-outbox';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { MAX_CUSTOMER_ID_BYTES, MAX_ORDER_ID_BYTES } from '../loyalty-table.ts';

/** Points a customer earns per unit ordered. */
export const POINTS_PER_UNIT = 10;

/** English messages for issues whose schema gives none: `zod/mini` loads no locale of its own. */
const ENGLISH = { error: en().localeError } as const;

const boundedText = (maxBytes: number) =>
  z.string().check(
    z.minLength(1),
    z.refine((text) => Buffer.byteLength(text) <= maxBytes, `must be at most ${maxBytes} bytes`),
  );

/**
 * The loyalty service's reading of an `order.created` or `order.cancelled` payload: the order, its customer and
 * its quantities, nothing else (its SKUs are the inventory's business), read tolerantly: unknown fields are
 * ignored, since a newer order service may add some. A payload without them cannot be applied at all, nor one
 * whose ids cannot key a row of the loyalty table or whose quantity is not an integer JavaScript holds exactly:
 * retrying it would fail the same way every time.
 */
export const orderPointsSchema = z.object({
  orderId: boundedText(MAX_ORDER_ID_BYTES),
  customerId: boundedText(MAX_CUSTOMER_ID_BYTES),
  items: z
    .array(
      z.object({ quantity: z.number().check(z.int(), z.positive(), z.maximum(Number.MAX_SAFE_INTEGER)) }),
    )
    .check(z.minLength(1)),
});

/** What an order is worth to the loyalty service: whose it is and how many points its lines earn. */
export interface OrderPoints {
  readonly orderId: string;
  readonly customerId: string;
  /** {@link POINTS_PER_UNIT} per unit ordered, over every line. */
  readonly points: number;
}

/**
 * The points of an `order.created` payload, or of an `order.cancelled` one (a cancellation carries the order's
 * customer and lines, the ones it was placed with, so what they earned is known without a read), or a
 * `PoisonMessageError` saying why they cannot be read (no customer, no readable lines, or points past the safe
 * integer range, which would move the balance wrongly).
 */
export function orderPointsOf(message: Envelope): OrderPoints {
  const order = z.safeParse(orderPointsSchema, message.payload, ENGLISH);
  if (!order.success) {
    throw new PoisonMessageError(`unreadable ${message.topic} payload: ${z.prettifyError(order.error)}`);
  }
  const units = order.data.items.reduce((sum, { quantity }) => sum + quantity, 0);
  const points = units * POINTS_PER_UNIT;
  if (!Number.isSafeInteger(points)) {
    throw new PoisonMessageError(
      `order ${order.data.orderId} earns ${units} × ${POINTS_PER_UNIT} points, past the safe integer range`,
    );
  }
  return { orderId: order.data.orderId, customerId: order.data.customerId, points };
}
