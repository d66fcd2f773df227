import * as z from 'zod/mini';

/** DynamoDB's limit on a partition key (the inventory table's `sku`): 2048 bytes of UTF-8. */
const MAX_KEY_BYTES = 2048;

/**
 * The inventory service's reading of an `order.created` payload: only what it needs, read tolerantly. Unknown
 * fields are ignored (a newer order service may add some), unlike the strict HTTP edge; a payload without
 * readable order lines cannot be applied at all, nor one whose SKU cannot be a table key or whose quantity is
 * not an integer JavaScript holds exactly: retrying it would fail the same way every time.
 */
export const orderCreatedSchema = z.object({
  orderId: z.string().check(z.minLength(1)),
  items: z
    .array(
      z.object({
        sku: z.string().check(
          z.minLength(1),
          z.refine(
            (sku) => Buffer.byteLength(sku) <= MAX_KEY_BYTES,
            `must be at most ${MAX_KEY_BYTES} bytes`,
          ),
        ),
        quantity: z.number().check(z.int(), z.positive(), z.maximum(Number.MAX_SAFE_INTEGER)),
      }),
    )
    .check(z.minLength(1)),
});

/** The parts of an order the inventory service reads. */
export type OrderCreated = z.infer<typeof orderCreatedSchema>;
