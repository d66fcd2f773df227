import * as z from 'zod/mini';
import { orderRequestSchema } from './create-order/order-request.ts';

/** Topic of the message written with every new order. */
export const ORDER_CREATED = 'order.created';

/** An order as stored in the orders table, and the payload of its `order.created` message. */
export const orderSchema = z.object({
  orderId: z.string().check(z.minLength(1)),
  customerId: orderRequestSchema.shape.customerId,
  items: orderRequestSchema.shape.items,
  createdAt: z.iso.datetime(),
});

/** An order as stored in the orders table. */
export type Order = z.infer<typeof orderSchema>;

/** Payload of an `order.created` message: the order itself (the contract between the two services). */
export type OrderCreatedPayload = Order;
