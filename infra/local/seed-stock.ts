/** Stock the local runtime puts in the inventory table so that a first order has something to reserve. */
import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';

/** One SKU's starting stock. */
export interface StockSeed {
  readonly sku: string;
  readonly available: number;
}

/** The SKUs every local run starts with. */
export const DEFAULT_STOCK: readonly StockSeed[] = [
  { sku: 'SKU-APPLE', available: 100 },
  { sku: 'SKU-BANANA', available: 100 },
  { sku: 'SKU-CHERRY', available: 50 },
  { sku: 'SKU-DATE', available: 10 },
  { sku: 'SKU-EMPTY', available: 0 },
];

/**
 * Writes `stock` straight into the inventory table, in the item shape the stock endpoints use
 * (`{ sku, available, updatedAt }`), without going through a handler.
 */
export async function seedStock(
  client: DynamoDBClient,
  tableName: string,
  stock: readonly StockSeed[] = DEFAULT_STOCK,
  now: Date = new Date(),
): Promise<void> {
  for (const { sku, available } of stock) {
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { sku: { S: sku }, available: { N: String(available) }, updatedAt: { S: now.toISOString() } },
      }),
    );
  }
}
