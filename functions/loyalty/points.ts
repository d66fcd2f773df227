import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { parseValue } from '../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../http/responses.ts';
import { orderSchema } from '../orders/order.ts';
import { pointsKeyOf } from './loyalty-table.ts';

/** What the points endpoint needs. */
export interface PointsDeps {
  readonly client: DynamoDBDocumentClient;
  readonly loyaltyTable: string;
}

/**
 * A customer id as `POST /orders` accepts it (1–128 characters), so every customer an order can name can be
 * looked up.
 */
export const customerIdSchema = orderSchema.shape.customerId;

/**
 * `GET /loyalty/{customerId}`: 200 `{ customerId, points }` (0 once every order that earned some was
 * cancelled); 404 for a customer no order ever awarded points to; 400 for an id no order could carry.
 */
export async function getPoints(
  event: APIGatewayProxyEvent,
  deps: PointsDeps,
): Promise<APIGatewayProxyResult> {
  const customerId = parseValue(event.pathParameters?.customerId, customerIdSchema, {
    error: 'invalid customer id',
    field: 'customerId',
  });
  if (!customerId.ok) return customerId.response;
  const result = await deps.client.send(
    new GetCommand({
      TableName: deps.loyaltyTable,
      Key: pointsKeyOf(customerId.value),
      ConsistentRead: true,
    }),
  );
  if (result.Item === undefined) {
    return errorResponse(404, 'customer not found', [
      { field: 'customerId', problem: `no points recorded for "${customerId.value}"` },
    ]);
  }
  return jsonResponse(200, { customerId: customerId.value, points: result.Item.points });
}
