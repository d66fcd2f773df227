import { z } from 'zod';
import { identifierSchema } from '../../identifier.ts';

/** The body of `PUT /inventory/{sku}`. */
export const stockRequestSchema = z
  .object({ available: z.number().int().min(0).max(1_000_000_000) })
  .strict();

/** A validated stock request. */
export type StockRequest = z.infer<typeof stockRequestSchema>;

/** A SKU as it appears in paths and order lines. */
export const skuSchema = identifierSchema;
