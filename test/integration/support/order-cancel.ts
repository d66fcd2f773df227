import type { SQSEvent } from 'aws-lambda';
import type { LocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { toEnvelope } from '../../../shared/relay/relay-messages.ts';
import { messageBody } from '../../../shared/relay/wire-format.ts';
import { sqsRecord } from '../../support/factories.ts';
import { type JsonResponse, request, scanAll, waitFor } from '../support.ts';

/** `POST /orders/{orderId}/cancel` with no body, as a client cancels. */
export function cancelOrder(runtime: LocalRuntime, orderId: string): Promise<JsonResponse> {
  return request(runtime, `POST /orders/${orderId}/cancel`);
}

/** One message of an order as `GET /orders/{orderId}` shows it. */
export interface ShownMessage {
  readonly messageId: string;
  readonly topic: string;
  readonly status: string;
  readonly outcome?: string;
}

/**
 * Waits (up to 30 s) until `GET /orders/{orderId}` shows `count` messages, every one CONFIRMED, and returns
 * the body.
 */
export function waitForConfirmed(
  runtime: LocalRuntime,
  orderId: string,
  count: number,
): Promise<JsonResponse['body']> {
  return waitFor(
    async () => {
      const response = await request(runtime, `GET /orders/${orderId}`);
      const messages = (response.body?.messages ?? []) as ShownMessage[];
      const settled = messages.length === count && messages.every((m) => m.status === 'CONFIRMED');
      return settled ? response.body : undefined;
    },
    30_000,
    `${count} CONFIRMED messages of order ${orderId}`,
  );
}

/** The inventory table's reservation row of an order, if there is one. */
export async function reservationOf(
  runtime: LocalRuntime,
  orderId: string,
): Promise<Record<string, unknown> | undefined> {
  return (await scanAll(runtime, 'inventory')).find((row) => row.sku === `reservation#${orderId}`);
}

/** An outbox message as stored, by its id. */
export async function outboxItemOf(runtime: LocalRuntime, messageId: string): Promise<OutboxItem> {
  const item = (await scanAll(runtime, 'outbox')).find((m) => m.messageId === messageId);
  if (item === undefined) throw new Error(`no outbox message ${messageId}`);
  return item as unknown as OutboxItem;
}

/** The SQS event that delivers a stored message to its consumer, with the body the relay would send. */
export function deliveryOf(item: OutboxItem): SQSEvent {
  const envelope = toEnvelope(item);
  return { Records: [sqsRecord(envelope, { rawBody: messageBody(envelope) })] };
}
