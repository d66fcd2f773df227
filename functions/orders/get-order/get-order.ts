import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { gatherDeliveries, type OutboxItem, readAggregateMessages } from 'serverless-outbox';
import { parseValue } from '../../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../../http/responses.ts';
import { identifierSchema } from '../../identifier.ts';
import { OrderStatus } from '../order.ts';

/** What the page reads of each outbox row (a message, or one subscriber's delivery of it): never its payload. */
const MESSAGE_ATTRIBUTES = [
  'topic',
  'status',
  'attempts',
  'sentAt',
  'confirmedAt',
  'lastError',
  'outcome',
  'seq',
  'subscriber',
] as const satisfies readonly (keyof OutboxItem)[];

/** A message of the order, gathered from its outbox rows. */
type GatheredMessage = ReturnType<typeof gatherDeliveries>[number];

/** What reading an order needs. */
export interface GetOrderDeps {
  readonly client: DynamoDBDocumentClient;
  readonly ordersTable: string;
  readonly outboxTable: string;
}

/**
 * `GET /orders/{orderId}`: the order, its status (PLACED or CANCELLED) and the delivery status of each of its
 * messages, so a caller can watch `order.created` (and `order.cancelled`) go PENDING → SENT → CONFIRMED and
 * see what the consumer did with each. A message delivered to subscribers shows once, with the status its
 * deliveries give it and each subscriber's delivery (its status, attempts and, once CONFIRMED, its outcome). 404
 * for an unknown order.
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
    messages: gatherDeliveries(messages).map(pageEntryOf),
  });
}

/**
 * What the page shows of a message. Stored as one row: its delivery state, as the page always showed it. Stored as
 * deliveries: the status derived from theirs, the sends of all of them, and each delivery's own state.
 */
function pageEntryOf(message: GatheredMessage): Record<string, unknown> {
  if (message.deliveries === undefined) {
    return { messageId: message.messageId, topic: message.topic, ...deliveryStateOf(message) };
  }
  return {
    messageId: message.messageId,
    topic: message.topic,
    status: message.status,
    attempts: message.deliveries.reduce((sum, delivery) => sum + attemptsOf(delivery), 0),
    deliveries: message.deliveries.map((delivery) => ({
      subscriber: delivery.subscriber,
      ...deliveryStateOf(delivery),
    })),
  };
}

/** Where one delivery stands, and what its consumer did with it once CONFIRMED. */
function deliveryStateOf(row: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    status: row.status,
    attempts: row.attempts,
    ...(row.sentAt === undefined ? {} : { sentAt: row.sentAt }),
    ...(row.confirmedAt === undefined ? {} : { confirmedAt: row.confirmedAt }),
    ...(row.lastError === undefined ? {} : { lastError: row.lastError }),
    // What the consumer did with it (APPLIED, REJECTED_OUT_OF_STOCK, AWARDED…), known once CONFIRMED.
    ...(row.status === 'CONFIRMED' && typeof row.outcome === 'string' ? { outcome: row.outcome } : {}),
  };
}

function attemptsOf(delivery: Readonly<Record<string, unknown>>): number {
  return typeof delivery.attempts === 'number' ? delivery.attempts : 0;
}
