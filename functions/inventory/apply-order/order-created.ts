import * as z from 'zod/mini';
import { isReservationKey, RESERVATION_KEY_PREFIX } from '../reservation.ts';

/** DynamoDB's limit on a partition key (the inventory table's `sku`): 2048 bytes of UTF-8. */
const MAX_KEY_BYTES = 2048;

/** The longest order id whose reservation row key (`reservation#<orderId>`) is still a valid key. */
const MAX_ORDER_ID_BYTES = MAX_KEY_BYTES - Buffer.byteLength(RESERVATION_KEY_PREFIX);

/**
 * The inventory service's reading of an `order.created` payload: only what it needs, read tolerantly. Unknown
 * fields are ignored (a newer order service may add some), unlike the strict HTTP edge; a payload without
 * readable order lines cannot be applied at all, nor one whose SKU cannot be a stock row's key or whose
 * quantity is not an integer JavaScript holds exactly, nor one whose order id cannot key its reservation row:
 * retrying it would fail the same way every time.
 */
export const orderCreatedSchema = z.object({
  orderId: z.string().check(
    z.minLength(1),
    z.refine(
      (orderId) => Buffer.byteLength(orderId) <= MAX_ORDER_ID_BYTES,
      `must be at most ${MAX_ORDER_ID_BYTES} bytes`,
    ),
  ),
  items: z
    .array(
      z.object({
        sku: z.string().check(
          z.minLength(1),
          z.refine(
            (sku) => Buffer.byteLength(sku) <= MAX_KEY_BYTES,
            `must be at most ${MAX_KEY_BYTES} bytes`,
          ),
          z.refine((sku) => !isReservationKey(sku), `must not start with ${RESERVATION_KEY_PREFIX}`),
        ),
        quantity: z.number().check(z.int(), z.positive(), z.maximum(Number.MAX_SAFE_INTEGER)),
      }),
    )
    .check(z.minLength(1)),
});

/** The parts of an order the inventory service reads. */
export type OrderCreated = z.infer<typeof orderCreatedSchema>;
