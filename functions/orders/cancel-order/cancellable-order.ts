import * as z from 'zod/mini';
import type { Parsed } from '../../http/parse-request.ts';
import { errorResponse, type RequestProblem } from '../../http/responses.ts';
import { type Order, OrderStatus, OrderVersion } from '../order.ts';

/**
 * What a cancellation reads of the stored order row: read loosely, because the row may have been written by
 * an older version (one without `status` or `version`).
 */
const storedOrderSchema = z.object({
  status: z.optional(z.string()),
  version: z.optional(z.number()),
  customerId: z.optional(z.string()),
  items: z.array(z.object({ sku: z.string(), quantity: z.number() })),
});

/** What the cancellation of an order that can be cancelled now carries: its customer and lines. */
export interface CancellableOrder {
  readonly customerId: string | undefined;
  readonly items: Order['items'];
}

/**
 * Whether the stored order row can be cancelled: its customer and lines when it is PLACED at version 1; else the
 * answer — 404 for no row, 409 `order already cancelled`, or 409 `order cannot be cancelled` naming why (a row
 * written before orders had a version, whose messages are not numbered, or one in a state this version does not
 * know).
 */
export function cancellableOrder(
  orderId: string,
  stored: Readonly<Record<string, unknown>> | undefined,
): Parsed<CancellableOrder> {
  if (stored === undefined) {
    return refuse(404, 'order not found', { field: 'orderId', problem: `no order "${orderId}"` });
  }
  const order = storedOrderSchema.safeParse(stored);
  if (!order.success) return cannotCancel(orderId, 'has order lines that cannot be read');
  const { status, version, customerId, items } = order.data;
  if (status === OrderStatus.CANCELLED) {
    return refuse(409, 'order already cancelled', {
      field: 'orderId',
      problem: `order "${orderId}" is already cancelled`,
    });
  }
  if (status === undefined || version === undefined) {
    return cannotCancel(orderId, 'was placed before orders had a version, so its messages are not numbered');
  }
  if (status !== OrderStatus.PLACED || version !== OrderVersion.PLACED) {
    return cannotCancel(orderId, `is ${status} at version ${version}, not ${OrderStatus.PLACED}`);
  }
  return { ok: true, value: { customerId, items } };
}

function cannotCancel(orderId: string, why: string): Parsed<never> {
  return refuse(409, 'order cannot be cancelled', { field: 'orderId', problem: `order "${orderId}" ${why}` });
}

function refuse(statusCode: number, error: string, problem: RequestProblem): Parsed<never> {
  return { ok: false, response: errorResponse(statusCode, error, [problem]) };
}
