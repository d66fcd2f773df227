import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type OutboxItem, readAggregateMessages } from 'serverless-outbox';
import { parseValue } from '../../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../../http/responses.ts';
import { identifierSchema } from '../../identifier.ts';

/** What the page shows of each message: its delivery, never its payload. */
const MESSAGE_ATTRIBUTES = [
  'topic',
  'status',
  'attempts',
  'sentAt',
  'confirmedAt',
  'lastError',
  'outcome',
] as const satisfies readonly (keyof OutboxItem)[];

/** What reading an order needs. */
export interface GetOrderDeps {
  readonly client: DynamoDBDocumentClient;
  readonly ordersTable: string;
  readonly outboxTable: string;
}

/**
 * `GET /orders/{orderId}`: the order and the delivery status of each of its messages, so a caller can watch
 * `order.created` go PENDING → SENT → CONFIRMED. 404 for an unknown order.
 */
export async function getOrder(
  event: APIGatewayProxyEvent,
  deps: GetOrderDeps,
): Promise<APIGatewayProxyResult> {
  const orderId = parseValue(event.pathParameters?.orderId, identifierSchema, {
    error: 'invalid order id',
    field: 'orderId',
  });
  if (!orderId.ok) return orderId.response;

  const [order, messages] = await Promise.all([
    deps.client.send(
      new GetCommand({ TableName: deps.ordersTable, Key: { orderId: orderId.value }, ConsistentRead: true }),
    ),
    readAggregateMessages(
      { client: deps.client, outboxTable: deps.outboxTable },
      { aggregateId: orderId.value, attributes: MESSAGE_ATTRIBUTES },
    ),
  ]);
  if (order.Item === undefined) {
    return errorResponse(404, 'order not found', [
      { field: 'orderId', problem: `no order "${orderId.value}"` },
    ]);
  }
  return jsonResponse(200, {
    orderId: order.Item.orderId,
    customerId: order.Item.customerId,
    items: order.Item.items,
    createdAt: order.Item.createdAt,
    messages: messages.map((message) => ({
      messageId: message.messageId,
      topic: message.topic,
      status: message.status,
      attempts: message.attempts,
      ...(message.sentAt === undefined ? {} : { sentAt: message.sentAt }),
      ...(message.confirmedAt === undefined ? {} : { confirmedAt: message.confirmedAt }),
      ...(message.lastError === undefined ? {} : { lastError: message.lastError }),
      // What the consumer did with it (APPLIED, REJECTED_OUT_OF_STOCK…), known once the message is CONFIRMED.
      ...(message.status === 'CONFIRMED' && typeof message.outcome === 'string'
        ? { outcome: message.outcome }
        : {}),
    })),
  });
}
