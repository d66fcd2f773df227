import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type OutboxItem, readAggregateMessages } from 'serverless-outbox';
import { parseValue } from '../../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../../http/responses.ts';
import { identifierSchema } from '../../identifier.ts';
import { OrderStatus } from '../order.ts';

/** What the page shows of each message: its delivery, never its payload. */
const MESSAGE_ATTRIBUTES = [
  'topic',
  'status',
  'attempts',
  'sentAt',
  'confirmedAt',
  'lastError',
  'outcome',
  'seq',
] as const satisfies readonly (keyof OutboxItem)[];

/** What reading an order needs. */
export interface GetOrderDeps {
  readonly client: DynamoDBDocumentClient;
  readonly ordersTable: string;
  readonly outboxTable: string;
}

/**
 * `GET /orders/{orderId}`: the order, its status (PLACED or CANCELLED) and the delivery status of each of its
 * messages, so a caller can watch `order.created` (and `order.cancelled`) go PENDING → SENT → CONFIRMED and
 * see what the consumer did with each. 404 for an unknown order.
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
    // A row written before orders had a status was placed and could not be cancelled then.
    status: typeof order.Item.status === 'string' ? order.Item.status : OrderStatus.PLACED,
    ...(typeof order.Item.cancelledAt === 'string' ? { cancelledAt: order.Item.cancelledAt } : {}),
    messages: inSequence(messages).map((message) => ({
      messageId: message.messageId,
      topic: message.topic,
      status: message.status,
      attempts: message.attempts,
      ...(message.sentAt === undefined ? {} : { sentAt: message.sentAt }),
      ...(message.confirmedAt === undefined ? {} : { confirmedAt: message.confirmedAt }),
      ...(message.lastError === undefined ? {} : { lastError: message.lastError }),
      // What the consumer did with it (APPLIED, REJECTED_OUT_OF_STOCK, RELEASED…), known once CONFIRMED.
      ...(message.status === 'CONFIRMED' && typeof message.outcome === 'string'
        ? { outcome: message.outcome }
        : {}),
    })),
  });
}

/**
 * An order's messages in the order they were written: by `seq`, which an ordered topic numbers 1, 2… per
 * order. Ids are time-ordered only to the millisecond, so a cancel written in the same millisecond as its order
 * could sort first by id. Messages without a seq (an unordered topic) keep their id order, after the others.
 */
function inSequence(messages: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const seqOf = (message: Record<string, unknown>) =>
    typeof message.seq === 'number' ? message.seq : Number.POSITIVE_INFINITY;
  return [...messages].sort((a, b) => (seqOf(a) === seqOf(b) ? 0 : seqOf(a) - seqOf(b)));
}
