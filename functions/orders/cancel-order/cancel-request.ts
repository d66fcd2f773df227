import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { type Parsed, parseJsonBody } from '../../http/parse-request.ts';

/** Largest cancellation body accepted, in bytes: it is `{}` or nothing. */
export const MAX_CANCEL_BODY_BYTES = 1024;

/**
 * The body of `POST /orders/{orderId}/cancel`: nothing, or an empty JSON object (fixed HTTP contract: fields
 * such as a reason may be added later, so anything else is refused now rather than silently ignored).
 */
export const cancelOrderRequestSchema = z.strictObject({});

/** A validated cancellation request. */
export type CancelOrderRequest = z.infer<typeof cancelOrderRequestSchema>;

/**
 * Reads the cancellation body: a request without one is accepted whatever its content type; a body is read as
 * every other route reads one (415 unless sent as `application/json`, 400 for anything but `{}`, naming why).
 */
export function parseCancelRequest(event: APIGatewayProxyEvent): Parsed<CancelOrderRequest> {
  if (event.body === null || event.body === undefined || event.body === '') return { ok: true, value: {} };
  return parseJsonBody(event, cancelOrderRequestSchema, MAX_CANCEL_BODY_BYTES);
}
