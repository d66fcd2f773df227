import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  createMessage,
  type OutboxWriterOptions,
  TransactionConditionError,
  TransactionLimitError,
  writeWithOutbox,
} from 'serverless-outbox';
import { headerValue, parseJsonBody } from '../../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../../http/responses.ts';
import { ORDER_CREATED, type Order, type OrderCreatedPayload } from '../order.ts';
import { MAX_ORDER_BODY_BYTES, orderRequestSchema } from './order-request.ts';

/** What creating an order needs. */
export interface CreateOrderDeps {
  /** Where and how the outbox messages are written (`outboxWriterFromEnv`). */
  readonly writer: OutboxWriterOptions;
  readonly ordersTable: string;
  readonly clock: () => Date;
  /** Generates an order id when the client sends none (a ULID). */
  readonly newOrderId: () => string;
}

/**
 * `POST /orders`: writes the order and its `order.created` message in one transaction.
 * 201 `{ orderId, messageId }`; 400 on bad input; 409 when the order id exists. Nothing is written on error.
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
  const traceparent = headerValue(event, 'traceparent');
  const message = createMessage<OrderCreatedPayload>(
    {
      topic: ORDER_CREATED,
      aggregateId: order.orderId,
      payload: order,
      ...(traceparent === undefined ? {} : { headers: { traceparent } }),
    },
    now,
  );

  try {
    await writeWithOutbox(
      { ...deps.writer, clock: () => now },
      {
        actions: [
          {
            Put: {
              TableName: deps.ordersTable,
              Item: { ...order },
              // An order id is written once: a retried or conflicting POST gets 409 and writes nothing.
              ConditionExpression: 'attribute_not_exists(orderId)',
            },
          },
        ],
        messages: [message],
      },
    );
  } catch (error) {
    if (error instanceof TransactionConditionError && error.failed(0)) {
      return errorResponse(409, 'order already exists', [
        { field: 'orderId', problem: `an order with id "${order.orderId}" already exists` },
      ]);
    }
    if (error instanceof TransactionLimitError) {
      return errorResponse(400, 'order too large', [{ field: '(body)', problem: error.message }]);
    }
    throw error;
  }
  return jsonResponse(201, { orderId: order.orderId, messageId: message.messageId });
}
