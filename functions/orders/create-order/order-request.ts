import { z } from 'zod';
import { identifierSchema } from '../../identifier.ts';

/** Largest request body accepted, in bytes (a full 25-line order is far below this). */
export const MAX_ORDER_BODY_BYTES = 16 * 1024;

/** The body of `POST /orders` (fixed HTTP contract: add fields freely, never rename). */
export const orderRequestSchema = z
  .object({
    orderId: identifierSchema.optional(),
    customerId: z.string().min(1).max(128),
    items: z
      .array(
        z
          .object({
            sku: identifierSchema,
            quantity: z.number().int().min(1).max(1000),
          })
          .strict(),
      )
      .min(1)
      .max(25),
  })
  .strict();

/** A validated order request. */
export type OrderRequest = z.infer<typeof orderRequestSchema>;
