import * as z from 'zod/mini';
import { identifierSchema } from '../../identifier.ts';

/** The body of `PUT /inventory/{sku}`. */
export const stockRequestSchema = z.strictObject({
  available: z.number().check(z.int(), z.minimum(0), z.maximum(1_000_000_000)),
});

/** A validated stock request. */
export type StockRequest = z.infer<typeof stockRequestSchema>;

/** A SKU as it appears in paths and order lines. */
export const skuSchema = identifierSchema;
