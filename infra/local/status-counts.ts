/** Counts of orders and outbox messages by status, for the `npm start` console line. */
import {
  type DynamoDBClient,
  ScanCommand,
  type ScanCommandInput,
  type ScanCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { MessageStatus } from '../../shared/message/message-status.ts';

/** What the console shows. */
export interface StatusCounts {
  readonly orders: number;
  readonly messages: Readonly<Record<MessageStatus, number>>;
}

/**
 * Counts the orders and the outbox messages per status with full scans: fine for the small data of a local
 * run, never for a real table.
 */
export async function readStatusCounts(
  client: DynamoDBClient,
  tables: { readonly orders: string; readonly outbox: string },
): Promise<StatusCounts> {
  let orders = 0;
  await scanAll(client, { TableName: tables.orders, Select: 'COUNT' }, (page) => {
    orders += page.Count ?? 0;
  });
  const messages = Object.fromEntries(Object.values(MessageStatus).map((status) => [status, 0])) as Record<
    MessageStatus,
    number
  >;
  await scanAll(
    client,
    {
      TableName: tables.outbox,
      ProjectionExpression: '#status',
      ExpressionAttributeNames: { '#status': 'status' },
    },
    (page) => {
      for (const item of page.Items ?? []) {
        const status = item.status?.S;
        if (status !== undefined && status in messages) messages[status as MessageStatus] += 1;
      }
    },
  );
  return { orders, messages };
}

/** `orders 3 · pending 0 · sent 1 · confirmed 2 · failed 0`. */
export function formatStatusCounts(counts: StatusCounts): string {
  const { messages } = counts;
  return (
    `orders ${counts.orders} · pending ${messages.PENDING} · sent ${messages.SENT} · ` +
    `confirmed ${messages.CONFIRMED} · failed ${messages.FAILED}`
  );
}

async function scanAll(
  client: DynamoDBClient,
  input: ScanCommandInput,
  onPage: (page: ScanCommandOutput) => void,
): Promise<void> {
  let start: ScanCommandInput['ExclusiveStartKey'];
  do {
    const page = await client.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    onPage(page);
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
}
