import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  type ConflictRetry,
  createMessage,
  type OutboxWriterOptions,
  type RetryClock,
  retryConflicts,
  TransactionConditionError,
  writeWithOutbox,
} from 'serverless-outbox';
import { parseValue } from '../../http/parse-request.ts';
import { jsonResponse } from '../../http/responses.ts';
import { traceparentOf } from '../../http/trace-context.ts';
import { identifierSchema } from '../../identifier.ts';
import { ORDER_WRITE_RETRY } from '../create-order/create-order.ts';
import { ORDER_CANCELLED, type OrderCancelledPayload, OrderStatus, OrderVersion } from '../order.ts';
import { parseCancelRequest } from './cancel-request.ts';
import { type CancellableOrder, cancellableOrder } from './cancellable-order.ts';

/** What cancelling an order needs. */
export interface CancelOrderDeps {
  /** Where and how the messages are written (`outboxWriterFromEnv`); its client also reads the order. */
  readonly writer: OutboxWriterOptions;
  readonly ordersTable: string;
  readonly clock: () => Date;
  /** How a write that lost a race with another request is retried. @default ORDER_WRITE_RETRY */
  readonly retry?: ConflictRetry;
  /** Waits between those retries. @default setTimeout and Math.random */
  readonly retryClock?: RetryClock;
}

/** One attempt at cancelling an order: which one, when the request came, and its trace context. */
interface Cancellation {
  readonly orderId: string;
  readonly now: Date;
  readonly traceparent: string | undefined;
}

/** The order is PLACED at its first version: the cancellation's condition, and what it moves from. */
const IS_PLACED = '#status = :placed AND #version = :placedVersion';

/**
 * `POST /orders/{orderId}/cancel` (no body, or `{}`): sets the order CANCELLED at version 2 and writes its
 * `order.cancelled` message (the order's customer and lines, the second of its sequence) in one transaction. 202
 * `{ orderId, messageId }`; 404 for an unknown order; 409 when it is already cancelled, so a repeated cancel
 * writes no second message; 415/400 on bad input. Nothing is written on error.
 */
export async function cancelOrder(
  event: APIGatewayProxyEvent,
  deps: CancelOrderDeps,
): Promise<APIGatewayProxyResult> {
  const orderId = parseValue(event.pathParameters?.orderId, identifierSchema, {
    error: 'invalid order id',
    field: 'orderId',
  });
  if (!orderId.ok) return orderId.response;
  const request = parseCancelRequest(event);
  if (!request.ok) return request.response;

  const cancellation: Cancellation = {
    orderId: orderId.value,
    now: deps.clock(),
    traceparent: traceparentOf(event),
  };
  // A cancellation that conflicts with a concurrent one is tried again from the read: it then finds the order
  // cancelled and answers 409.
  return retryConflicts(
    () => attemptCancel(cancellation, deps),
    deps.retry ?? ORDER_WRITE_RETRY,
    deps.retryClock ?? {
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: Math.random,
    },
  );
}

/**
 * Reads the order (its customer and lines go into the message, so each consumer undoes the order without a read
 * of its own), then writes the cancellation under the condition that it is still PLACED at version 1.
 */
async function attemptCancel(
  cancellation: Cancellation,
  deps: CancelOrderDeps,
): Promise<APIGatewayProxyResult> {
  const { orderId } = cancellation;
  const stored = await deps.writer.client.send(
    new GetCommand({ TableName: deps.ordersTable, Key: { orderId }, ConsistentRead: true }),
  );
  const order = cancellableOrder(orderId, stored.Item);
  if (!order.ok) return order.response;
  try {
    const messageId = await writeCancellation(cancellation, { order: order.value, deps });
    return jsonResponse(202, { orderId, messageId });
  } catch (error) {
    // Another request changed the order between the read and the write: answer from the row it left.
    if (error instanceof TransactionConditionError && error.failed(0)) {
      const answer = cancellableOrder(orderId, error.oldItem(0));
      if (!answer.ok) return answer.response;
    }
    throw error;
  }
}

/**
 * Moves the order to CANCELLED at version 2 and writes `order.cancelled` with it. The version the update sets
 * under its condition is the message's sequence number. Returns the message id.
 */
async function writeCancellation(
  cancellation: Cancellation,
  context: { readonly order: CancellableOrder; readonly deps: CancelOrderDeps },
): Promise<string> {
  const { orderId, now, traceparent } = cancellation;
  const { order, deps } = context;
  const message = createMessage<OrderCancelledPayload>(
    {
      topic: ORDER_CANCELLED,
      aggregateId: orderId,
      payload: {
        orderId,
        ...(order.customerId === undefined ? {} : { customerId: order.customerId }),
        items: order.items,
      },
      ...(traceparent === undefined ? {} : { headers: { traceparent } }),
    },
    now,
  );
  await writeWithOutbox(
    { ...deps.writer, clock: () => now },
    {
      actions: [
        {
          Update: {
            TableName: deps.ordersTable,
            Key: { orderId },
            UpdateExpression: 'SET #status = :cancelled, #version = :cancelledVersion, #cancelledAt = :now',
            // Absent, already cancelled or changed since the read: the row comes back with the cancellation.
            ConditionExpression: IS_PLACED,
            ExpressionAttributeNames: {
              '#status': 'status',
              '#version': 'version',
              '#cancelledAt': 'cancelledAt',
            },
            ExpressionAttributeValues: {
              ':placed': OrderStatus.PLACED,
              ':placedVersion': OrderVersion.PLACED,
              ':cancelled': OrderStatus.CANCELLED,
              ':cancelledVersion': OrderVersion.CANCELLED,
              ':now': now.toISOString(),
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ],
      messages: [message],
      aggregateVersions: { [orderId]: OrderVersion.CANCELLED },
    },
  );
  return message.messageId;
}
