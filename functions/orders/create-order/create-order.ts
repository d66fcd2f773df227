import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  type ConflictRetry,
  createMessage,
  type OutboxWriterOptions,
  type RetryClock,
  retryConflicts,
  TransactionConditionError,
  TransactionLimitError,
  writeWithOutbox,
} from 'serverless-outbox';
import { parseJsonBody } from '../../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../../http/responses.ts';
import { traceparentOf } from '../../http/trace-context.ts';
import { ORDER_CREATED, type Order, type OrderCreatedPayload, OrderStatus, OrderVersion } from '../order.ts';
import { answerExistingOrder } from './existing-order.ts';
import { MAX_ORDER_BODY_BYTES, orderRequestSchema } from './order-request.ts';

/** What creating an order needs. */
export interface CreateOrderDeps {
  /** Where and how the outbox messages are written (`outboxWriterFromEnv`). */
  readonly writer: OutboxWriterOptions;
  readonly ordersTable: string;
  readonly clock: () => Date;
  /** Generates an order id when the client sends none (a ULID). */
  readonly newOrderId: () => string;
  /** How a write that lost a race with a concurrent POST is retried. @default ORDER_WRITE_RETRY */
  readonly retry?: ConflictRetry;
  /** Waits between those retries. @default setTimeout and Math.random */
  readonly retryClock?: RetryClock;
}

/** A few short waits, well inside an API Gateway timeout: the loser of a race then sees the winner's order. */
export const ORDER_WRITE_RETRY: ConflictRetry = { attempts: 4, baseDelayMs: 25, maxDelayMs: 200 };

/** One attempt at writing an order: the order, when the request came, and its trace context. */
interface OrderWrite {
  readonly order: Order;
  readonly now: Date;
  readonly traceparent: string | undefined;
}

/**
 * `POST /orders`: writes the order and its `order.created` message in one transaction; the order id is an
 * idempotency key. 201 `{ orderId, messageId }`, and the same 201 again for a retry of the same request;
 * 409 when the order id was used for a different request; 415/400 on bad input. Nothing is written on error.
 */
export async function createOrder(
  event: APIGatewayProxyEvent,
  deps: CreateOrderDeps,
): Promise<APIGatewayProxyResult> {
  const request = parseJsonBody(event, orderRequestSchema, MAX_ORDER_BODY_BYTES);
  if (!request.ok) return request.response;

  const now = deps.clock();
  const order: Order = {
    orderId: request.value.orderId ?? deps.newOrderId(),
    customerId: request.value.customerId,
    items: request.value.items,
    createdAt: now.toISOString(),
  };
  const write: OrderWrite = { order, now, traceparent: traceparentOf(event) };
  try {
    const messageId = await retryConflicts(
      () => writeOrder(write, deps),
      deps.retry ?? ORDER_WRITE_RETRY,
      deps.retryClock ?? {
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        random: Math.random,
      },
    );
    return jsonResponse(201, { orderId: order.orderId, messageId });
  } catch (error) {
    if (error instanceof TransactionConditionError && error.failed(0)) {
      return answerExistingOrder(order, error.oldItem(0));
    }
    if (error instanceof TransactionLimitError) {
      return errorResponse(400, 'order too large', [{ field: '(body)', problem: error.message }]);
    }
    throw error;
  }
}

/**
 * Writes the order row (PLACED at version 1, with its message id, so that a retry can be answered with it)
 * and the message. A fresh message each attempt: its id is the transaction's idempotency token, which
 * DynamoDB refuses for different parameters. Returns the message id.
 */
async function writeOrder(write: OrderWrite, deps: CreateOrderDeps): Promise<string> {
  const { order, now, traceparent } = write;
  const message = createMessage<OrderCreatedPayload>(
    {
      topic: ORDER_CREATED,
      aggregateId: order.orderId,
      payload: order,
      ...(traceparent === undefined ? {} : { headers: { traceparent } }),
    },
    now,
  );
  await writeWithOutbox(
    { ...deps.writer, clock: () => now },
    {
      actions: [
        {
          Put: {
            TableName: deps.ordersTable,
            Item: {
              ...order,
              status: OrderStatus.PLACED,
              version: OrderVersion.PLACED,
              messageId: message.messageId,
            },
            // An order id is written once. The row that is already there comes back with the cancellation,
            // so a retried POST is compared with it (replay or 409) without a second read.
            ConditionExpression: 'attribute_not_exists(orderId)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ],
      messages: [message],
      // The order row is written at version 1 under the condition above, so its message is the first of the
      // order's sequence: no counter to read or update.
      aggregateVersions: { [order.orderId]: OrderVersion.PLACED },
    },
  );
  return message.messageId;
}
