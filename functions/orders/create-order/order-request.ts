import * as z from 'zod/mini';
import { identifierSchema } from '../../identifier.ts';

/** Largest request body accepted, in bytes (a full 25-line order is far below this). */
export const MAX_ORDER_BODY_BYTES = 16 * 1024;

/** The body of `POST /orders` (fixed HTTP contract: add fields freely, never rename). */
export const orderRequestSchema = z.strictObject({
  orderId: z.optional(identifierSchema),
  customerId: z.string().check(z.minLength(1), z.maxLength(128)),
  items: z
    .array(
      z.strictObject({
        sku: identifierSchema,
        quantity: z.number().check(z.int(), z.minimum(1), z.maximum(1000)),
      }),
    )
    .check(z.minLength(1), z.maxLength(25)),
});

/** A validated order request. */
export type OrderRequest = z.infer<typeof orderRequestSchema>;
