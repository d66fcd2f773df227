import type { APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod/mini';
import { fieldPath } from '../../http/field-path.ts';
import { errorResponse, jsonResponse, type RequestProblem } from '../../http/responses.ts';
import type { Order } from '../order.ts';

/** Response header that marks a 201 as the replay of an earlier one (nothing was written this time). */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * What a retry is compared with: read loosely, because the row may have been written by an older version
 * (one without `messageId` cannot be replayed).
 */
const storedOrderSchema = z.object({
  customerId: z.string(),
  items: z.array(z.object({ sku: z.string(), quantity: z.number() })),
  messageId: z.optional(z.string()),
});

/**
 * The answer to a POST whose order id is taken, given the stored order row: the original `201 { orderId,
 * messageId }` when the request is the same (customer, and the same lines in the same order), else `409`
 * naming each field that differs. The caller has written nothing.
 */
export function answerExistingOrder(
  requested: Order,
  stored: Readonly<Record<string, unknown>> | undefined,
): APIGatewayProxyResult {
  const existing = storedOrderSchema.safeParse(stored);
  if (!existing.success) return orderIdTaken(requested.orderId, 'cannot be compared with this request');
  const differences = differencesFrom(requested, existing.data);
  if (differences.length > 0) {
    return errorResponse(409, 'order id already used for a different order', differences);
  }
  if (existing.data.messageId === undefined) {
    return orderIdTaken(
      requested.orderId,
      'was created without a recorded message id and cannot be replayed',
    );
  }
  return jsonResponse(
    201,
    { orderId: requested.orderId, messageId: existing.data.messageId },
    { [REPLAYED_HEADER]: 'true' },
  );
}

/**
 * The fields of the request that differ from the stored order. Its values are not echoed: the order may be
 * another client's.
 */
function differencesFrom(requested: Order, stored: z.infer<typeof storedOrderSchema>): RequestProblem[] {
  const existing = 'the order already created with this orderId';
  const problem = `differs from ${existing}`;
  const differences: RequestProblem[] = [];
  if (requested.customerId !== stored.customerId) differences.push({ field: 'customerId', problem });
  if (requested.items.length !== stored.items.length) {
    differences.push({ field: 'items', problem: `has a different number of lines than ${existing}` });
  }
  requested.items.forEach((line, index) => {
    const storedLine = stored.items[index];
    if (storedLine === undefined) return;
    const path = fieldPath('items', index);
    if (line.sku !== storedLine.sku) differences.push({ field: fieldPath(path, 'sku'), problem });
    if (line.quantity !== storedLine.quantity)
      differences.push({ field: fieldPath(path, 'quantity'), problem });
  });
  return differences;
}

function orderIdTaken(orderId: string, why: string): APIGatewayProxyResult {
  return errorResponse(409, 'order already exists', [
    { field: 'orderId', problem: `an order with id "${orderId}" already exists and ${why}` },
  ]);
}
