import { z } from 'zod';

/** Largest request body accepted, in bytes (a full 25-line order is far below this). */
export const MAX_ORDER_BODY_BYTES = 16 * 1024;

/** The body of `POST /orders` (fixed HTTP contract: add fields freely, never rename). */
export const orderRequestSchema = z
  .object({
    orderId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, _ or -')
      .optional(),
    customerId: z.string().min(1).max(128),
    items: z
      .array(
        z
          .object({
            sku: z
              .string()
              .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, _ or -'),
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
