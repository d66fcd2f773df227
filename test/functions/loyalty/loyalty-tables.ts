import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { INBOX_KEYS, MemoryDocumentClient } from 'serverless-outbox/testing';
import { LOYALTY_TABLE_KEY } from '../../../functions/loyalty/loyalty-table.ts';
import { readReceiptBody } from '../../../shared/receipts/receipt.ts';
import { envelope, testMessageId, transactionCanceled } from '../../support/factories.ts';

/**
 * The loyalty service's tables in memory (its loyalty table and its inbox), every Document client a function
 * builds routed to them, and SQS answered in memory, for tests that run the loyalty functions as deployed: the
 * consumer's real inbox transaction, its receipts to the producer and its dead letters. With `contention`, a
 * transaction stays in flight for a few turns of the event loop and one that touches an item another has in
 * flight is cancelled with TransactionConflict, as DynamoDB does, so concurrent invocations really race.
 */

export const LOYALTY = 'loyalty';
export const INBOX = 'loyalty-inbox';
export const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders-loyalty';
export const DLQ = `${SOURCE}-dlq`;
export const RECEIPTS = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders-receipts';

/** The loyalty consumer's environment, as its own stack sets it: a subscriber confirming by receipt. */
export const CONSUMER_ENV = {
  LOYALTY_TABLE: LOYALTY,
  INBOX_TABLE: INBOX,
  SUBSCRIBER: 'loyalty',
  RECEIPT_QUEUE_URL: RECEIPTS,
  SOURCE_QUEUE_URL: SOURCE,
  DEAD_LETTER_QUEUE_URL: DLQ,
  MAX_RECEIVE_COUNT: '5',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

/** A receipt the consumer sent the producer. */
export interface SentReceipt {
  readonly messageId: string;
  readonly subscriber: string;
  readonly outcome: string;
}

/** What a test reads of the world after the functions ran. */
export interface LoyaltyTables {
  readonly memory: MemoryDocumentClient;
  /** Every points row: customer id → points. */
  points(): Record<string, unknown>;
  /** Every award row, by order id. */
  awards(): Record<string, Record<string, unknown>>;
  /** The inbox's recorded outcome of each message, by inbox key (`<messageId>#loyalty`). */
  inbox(): Record<string, unknown>;
  /** Every receipt sent, in order. */
  receipts(): SentReceipt[];
  /** Every dead letter sent: its queue, body and reason. */
  deadLetters(): { queue: string | undefined; body: string | undefined; reason: string | undefined }[];
  /** Transactions cancelled for a conflict with one in flight (with `contention` only). */
  conflicts(): number;
  /** Empties the tables and forgets what was sent. */
  reset(): void;
  restore(): void;
}

/** Options of {@link loyaltyTables}. */
export interface LoyaltyTablesOptions {
  /** Turns of the event loop each transaction stays in flight, racing with others. @default 0 (no contention) */
  readonly contention?: number;
}

const SCHEMAS = {
  [LOYALTY]: { partitionKey: LOYALTY_TABLE_KEY },
  [INBOX]: { partitionKey: INBOX_KEYS.partitionKey },
};

export function loyaltyTables(options: LoyaltyTablesOptions = {}): LoyaltyTables {
  const memory = new MemoryDocumentClient(SCHEMAS);
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  const inFlight = new Set<string>();
  let conflicts = 0;
  let batches: SendMessageBatchCommandInput[] = [];
  let letters: SendMessageCommandInput[] = [];

  ddb.on(GetCommand).callsFake((input) => memory.send(new GetCommand(input)));
  ddb.on(PutCommand).callsFake((input) => memory.send(new PutCommand(input)));
  ddb.on(UpdateCommand).callsFake((input) => memory.send(new UpdateCommand(input)));
  ddb.on(TransactWriteCommand).callsFake(async (input: TransactWriteCommandInput) => {
    const turns = options.contention ?? 0;
    if (turns === 0) return memory.send(new TransactWriteCommand(input));
    const items = (input.TransactItems ?? []).map(itemOf);
    if (items.some((item) => inFlight.has(item))) {
      conflicts += 1;
      throw transactionCanceled(
        items.map((item) => ({ Code: inFlight.has(item) ? 'TransactionConflict' : 'None' })),
      );
    }
    for (const item of items) inFlight.add(item);
    try {
      for (let turn = 0; turn < turns; turn += 1) await new Promise((resolve) => setTimeout(resolve, 1));
      return await memory.send(new TransactWriteCommand(input));
    } finally {
      for (const item of items) inFlight.delete(item);
    }
  });
  sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
    batches.push(input);
    return {
      Successful: (input.Entries ?? []).map(({ Id }) => ({ Id, MessageId: `m-${Id}`, MD5OfMessageBody: '' })),
    };
  });
  sqs.on(SendMessageCommand).callsFake(async (input: SendMessageCommandInput) => {
    letters.push(input);
    return { MessageId: `dlq-${letters.length}` };
  });
  sqs.on(ChangeMessageVisibilityCommand).resolves({});

  const rows = (prefix: string) =>
    memory.items(LOYALTY).filter((row) => String(row[LOYALTY_TABLE_KEY]).startsWith(prefix));
  return {
    memory,
    points: () => Object.fromEntries(rows('customer#').map((row) => [row.customerId, row.points])),
    awards: () => Object.fromEntries(rows('award#').map((row) => [String(row.orderId), row])),
    inbox: () => Object.fromEntries(memory.items(INBOX).map((row) => [row.messageId, row.outcome])),
    receipts: () =>
      batches
        .filter((batch) => batch.QueueUrl === RECEIPTS)
        .flatMap((batch) => batch.Entries ?? [])
        .flatMap((entry) => readReceiptBody(entry.MessageBody ?? '').receipts)
        .map(({ messageId, subscriber, outcome }) => ({ messageId, subscriber, outcome })),
    deadLetters: () =>
      letters.map((letter) => ({
        queue: letter.QueueUrl,
        body: letter.MessageBody,
        reason: letter.MessageAttributes?.dead_letter_reason?.StringValue,
      })),
    conflicts: () => conflicts,
    reset: () => {
      for (const [name, schema] of Object.entries(SCHEMAS)) {
        memory.deleteTable(name);
        memory.createTable(name, schema);
      }
      batches = [];
      letters = [];
      conflicts = 0;
    },
    restore: () => {
      ddb.restore();
      sqs.restore();
    },
  };
}

/** The table and key of the item a transaction's action touches. */
function itemOf(action: NonNullable<TransactWriteCommandInput['TransactItems']>[number]): string {
  const put = action.Put;
  if (put !== undefined) {
    const key =
      put.TableName === LOYALTY ? put.Item?.[LOYALTY_TABLE_KEY] : put.Item?.[INBOX_KEYS.partitionKey];
    return `${put.TableName}:${String(key)}`;
  }
  const keyed = action.Update ?? action.Delete ?? action.ConditionCheck;
  return `${keyed?.TableName}:${JSON.stringify(keyed?.Key)}`;
}

/** A line of an order: only its quantity earns points. */
export interface Line {
  readonly sku: string;
  readonly quantity: number;
}

/** The `order.created` message of order `order-<n>` (message id `n`) placed by `customerId`. */
export function created(n: number, customerId: string, items: readonly Line[]) {
  const orderId = `order-${n}`;
  return envelope({
    messageId: testMessageId(n),
    aggregateId: orderId,
    payload: { orderId, customerId, items, createdAt: '2024-05-01T12:00:00.000Z' },
  });
}

/** The `order.cancelled` message of order `order-<n>` (message id `1000 + n`), as the order service writes it. */
export function cancelled(n: number, customerId: string, items: readonly Line[]) {
  const orderId = `order-${n}`;
  return envelope({
    messageId: testMessageId(1_000 + n),
    topic: 'order.cancelled',
    aggregateId: orderId,
    payload: { orderId, customerId, items },
  });
}
