import { z } from 'zod';

/**
 * The inventory service's reading of an `order.created` payload: only what it needs, read tolerantly. Unknown
 * fields are ignored (a newer order service may add some), unlike the strict HTTP edge; a payload without
 * readable order lines cannot be applied at all.
 */
export const orderCreatedSchema = z.object({
  orderId: z.string().min(1),
  items: z.array(z.object({ sku: z.string().min(1), quantity: z.number().int().positive() })).min(1),
});

/** The parts of an order the inventory service reads. */
export type OrderCreated = z.infer<typeof orderCreatedSchema>;
