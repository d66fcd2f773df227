import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { parseJsonBody, parseValue } from '../http/parse-request.ts';
import { errorResponse, jsonResponse } from '../http/responses.ts';
import { skuSchema, stockRequestSchema } from './put-stock/stock-request.ts';

/** What the stock endpoints need. */
export interface StockDeps {
  readonly client: DynamoDBDocumentClient;
  readonly inventoryTable: string;
  readonly clock: () => Date;
}

const MAX_STOCK_BODY_BYTES = 1024;

/**
 * `PUT /inventory/{sku}`: sets the available stock. 200 `{ sku, available }`; 415 unless the body is sent as
 * `application/json`; 400 on bad input (see `parseJsonBody`). Nothing is written on error.
 */
export async function putStock(event: APIGatewayProxyEvent, deps: StockDeps): Promise<APIGatewayProxyResult> {
  const sku = parseValue(event.pathParameters?.sku, skuSchema, { error: 'invalid sku', field: 'sku' });
  if (!sku.ok) return sku.response;
  const request = parseJsonBody(event, stockRequestSchema, MAX_STOCK_BODY_BYTES);
  if (!request.ok) return request.response;
  await deps.client.send(
    new PutCommand({
      TableName: deps.inventoryTable,
      Item: { sku: sku.value, available: request.value.available, updatedAt: deps.clock().toISOString() },
    }),
  );
  return jsonResponse(200, { sku: sku.value, available: request.value.available });
}

/** `GET /inventory/{sku}`: 200 `{ sku, available }`, 404 for an unknown SKU. */
export async function getStock(
  event: APIGatewayProxyEvent,
  deps: Omit<StockDeps, 'clock'>,
): Promise<APIGatewayProxyResult> {
  const sku = parseValue(event.pathParameters?.sku, skuSchema, { error: 'invalid sku', field: 'sku' });
  if (!sku.ok) return sku.response;
  const result = await deps.client.send(
    new GetCommand({ TableName: deps.inventoryTable, Key: { sku: sku.value }, ConsistentRead: true }),
  );
  if (result.Item === undefined) {
    return errorResponse(404, 'sku not found', [
      { field: 'sku', problem: `no stock recorded for "${sku.value}"` },
    ]);
  }
  return jsonResponse(200, { sku: result.Item.sku, available: result.Item.available });
}
