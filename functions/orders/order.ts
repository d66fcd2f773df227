import * as z from 'zod/mini';
import { orderRequestSchema } from './create-order/order-request.ts';

/** Topic of the message written with every new order. */
export const ORDER_CREATED = 'order.created';

/** Topic of the message written when an order is cancelled. */
export const ORDER_CANCELLED = 'order.cancelled';

/** Where an order stands; a row written before orders had a status reads as PLACED. */
export const OrderStatus = { PLACED: 'PLACED', CANCELLED: 'CANCELLED' } as const;

/** One of the {@link OrderStatus} values. */
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/**
 * The order's version after each of its changes. It is also the sequence number of the message the change
 * writes, so the inventory service applies an order's messages in this order.
 */
export const OrderVersion = { PLACED: 1, CANCELLED: 2 } as const;

/**
 * An order as placed, and the payload of its `order.created` message. Its row in the orders table adds its
 * `status`, `version` and message id, and `cancelledAt` once cancelled.
 */
export const orderSchema = z.object({
  orderId: z.string().check(z.minLength(1)),
  customerId: orderRequestSchema.shape.customerId,
  items: orderRequestSchema.shape.items,
  createdAt: z.iso.datetime(),
});

/** An order as placed. */
export type Order = z.infer<typeof orderSchema>;

/** Payload of an `order.created` message: the order itself (the contract between the two services). */
export type OrderCreatedPayload = Order;

/**
 * Payload of an `order.cancelled` message: the order's customer and lines, so a consumer undoes what the order did
 * (the inventory releases its lines, the loyalty service revokes that customer's points) without a read. An
 * order row without a customer (never written by this service) gives a cancellation without one.
 */
export interface OrderCancelledPayload {
  readonly orderId: string;
  readonly customerId?: Order['customerId'];
  readonly items: Order['items'];
}
