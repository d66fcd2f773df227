import { z } from 'zod';

/** The body of `PUT /inventory/{sku}`. */
export const stockRequestSchema = z
  .object({ available: z.number().int().min(0).max(1_000_000_000) })
  .strict();

/** A validated stock request. */
export type StockRequest = z.infer<typeof stockRequestSchema>;

/** A SKU as it appears in paths and order lines. */
export const skuSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, _ or -');
