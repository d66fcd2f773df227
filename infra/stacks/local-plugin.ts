/**
 * The example's `npm start` plug-in (`--plugin infra/stacks/local-plugin.ts`): what the generic local runtime
 * cannot know about the order, inventory and loyalty example — starting stock, how to try it, and a live count of
 * orders and of the outbox's messages per status (a message delivered to both subscribers counts once, CONFIRMED
 * when both confirmed it).
 */
import {
  DynamoDBClient,
  paginateScan,
  type ScanCommandInput,
  type ScanCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { gatherDeliveries, MessageStatus } from 'serverless-outbox';
import type { LocalRuntime } from '../dev/local/host/runtime.ts';
import type { LocalPlugin } from '../dev/local/host/start-plugin.ts';

/** One SKU's starting stock. */
export interface StockSeed {
  readonly sku: string;
  readonly available: number;
}

/** The SKUs a local run starts with. */
export const STARTING_STOCK: readonly StockSeed[] = [
  { sku: 'SKU-APPLE', available: 100 },
  { sku: 'SKU-BANANA', available: 100 },
  { sku: 'SKU-CHERRY', available: 50 },
  { sku: 'SKU-DATE', available: 10 },
  { sku: 'SKU-EMPTY', available: 0 },
];

/** What the status line shows. */
export interface StatusCounts {
  readonly orders: number;
  readonly messages: Readonly<Record<MessageStatus, number>>;
}

/** The stack outputs the plug-in reads (the order service's named outputs). */
const OUTPUTS = { orders: 'ordersTableName', outbox: 'outboxTableName' } as const;

/**
 * Puts the starting stock in through the public API (`PUT /inventory/{sku}`), leaving a SKU that already
 * has stock as it is, so a restart against an emulator that kept the data changes nothing.
 */
export async function seedStock(
  apiUrl: string,
  stock: readonly StockSeed[] = STARTING_STOCK,
): Promise<string[]> {
  const seeded: string[] = [];
  const kept: string[] = [];
  for (const { sku, available } of stock) {
    const existing = await fetch(`${apiUrl}/inventory/${encodeURIComponent(sku)}`);
    await existing.body?.cancel();
    if (existing.status === 200) {
      kept.push(sku);
      continue;
    }
    const response = await fetch(`${apiUrl}/inventory/${encodeURIComponent(sku)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ available }),
    });
    if (response.status !== 200) {
      throw new Error(`PUT /inventory/${sku} answered ${response.status}: ${await response.text()}`);
    }
    seeded.push(`${sku}=${available}`);
  }
  return [
    ...(seeded.length === 0 ? [] : [`stock      ${seeded.join(', ')}`]),
    ...(kept.length === 0 ? [] : [`stock      kept as it was: ${kept.join(', ')}`]),
  ];
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
  // Each message's rows (one per subscriber's delivery), gathered into the message with its derived status.
  const projection = {
    ProjectionExpression: 'messageId, subscriber, #status',
    ExpressionAttributeNames: { '#status': 'status' },
  };
  const rows: Record<string, unknown>[] = [];
  await scanAll(client, { TableName: tables.outbox, ...projection }, (page) => {
    for (const item of page.Items ?? []) {
      rows.push({ messageId: item.messageId?.S, subscriber: item.subscriber?.S, status: item.status?.S });
    }
  });
  for (const { status } of gatherDeliveries(rows)) {
    if (typeof status === 'string' && status in messages) messages[status as MessageStatus] += 1;
  }
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
  for await (const page of paginateScan({ client }, input)) onPage(page);
}

function tablesOf(runtime: LocalRuntime): { orders: string; outbox: string } {
  const orders = runtime.outputs[OUTPUTS.orders];
  const outbox = runtime.outputs[OUTPUTS.outbox];
  if (orders === undefined || outbox === undefined) {
    throw new Error(`the app has no ${OUTPUTS.orders} or ${OUTPUTS.outbox} output; is this the example app?`);
  }
  return { orders, outbox };
}

let counter: DynamoDBClient | undefined;

/** The example's plug-in. */
const plugin: LocalPlugin = {
  seed: (runtime) => seedStock(runtime.apiUrl),
  tryIt: (runtime) => [
    '',
    'try it:',
    `  curl -s -X POST ${runtime.apiUrl}/orders -H 'content-type: application/json' \\`,
    `    -d '{"customerId":"c-1","items":[{"sku":"SKU-APPLE","quantity":2}]}'`,
    `  curl -s ${runtime.apiUrl}/orders/<orderId>`,
    `  curl -s -X POST ${runtime.apiUrl}/orders/<orderId>/cancel`,
    `  curl -s ${runtime.apiUrl}/inventory/SKU-APPLE`,
    `  curl -s ${runtime.apiUrl}/loyalty/c-1`,
    // The operator's command finds the stack through CloudFormation, which every backend answers.
    'operate it:',
    `  AWS_ENDPOINT_URL=${runtime.endpoint} npm run outbox -- stats`,
    `  AWS_ENDPOINT_URL=${runtime.endpoint} npm run outbox -- console   # the operator console in a browser`,
    `  npm run outbox -- call GET /inventory/SKU-APPLE --url ${runtime.apiUrl}`,
  ],
  async status(runtime) {
    counter ??= new DynamoDBClient(runtime.clientConfig);
    return formatStatusCounts(await readStatusCounts(counter, tablesOf(runtime)));
  },
  close() {
    counter?.destroy();
    counter = undefined;
  },
};

export default plugin;
