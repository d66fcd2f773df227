import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Envelope } from '../message/envelope.ts';
import { transactWrite } from '../transaction/transact-write.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { newOutboxItem, OUTBOX_KEYS } from './outbox-item.ts';

/** Where and how the writer stores messages. */
export interface OutboxWriterOptions {
  readonly client: DynamoDBDocumentClient;
  readonly outboxTable: string;
  /** @default 8 (DEFAULT_DUE_SHARDS) */
  readonly dueShards?: number;
  /** @default 60 000 ms (DEFAULT_STREAM_GRACE_MS) */
  readonly streamGraceMs?: number;
  /** @default () => new Date() */
  readonly clock?: () => Date;
}

/** Business actions and the messages that must follow them, committed together or not at all. */
export interface OutboxWrite {
  /** Business actions in lib-dynamodb form (Put / Update / Delete / ConditionCheck). */
  readonly actions: readonly TransactWriteAction[];
  /** Envelopes to put in the outbox (see `createMessage`). At least one. */
  readonly messages: readonly Envelope[];
}

/** Builds the single TransactWriteItems list: the business actions first, then one Put per message. */
export function outboxTransaction(
  write: OutboxWrite,
  options: Omit<OutboxWriterOptions, 'client'> & { readonly now: Date },
): TransactWriteAction[] {
  const messagePuts = write.messages.map(
    (message): TransactWriteAction => ({
      Put: {
        TableName: options.outboxTable,
        Item: {
          ...newOutboxItem(message, {
            now: options.now,
            ...(options.dueShards === undefined ? {} : { dueShards: options.dueShards }),
            ...(options.streamGraceMs === undefined ? {} : { streamGraceMs: options.streamGraceMs }),
          }),
        },
        // A reused message id (a client's idempotency key) must never overwrite a message.
        ConditionExpression: 'attribute_not_exists(#messageId)',
        ExpressionAttributeNames: { '#messageId': OUTBOX_KEYS.partitionKey },
      },
    }),
  );
  return [...write.actions, ...messagePuts];
}

/**
 * Commits business items and outbox messages in ONE DynamoDB transaction: either the order and its
 * `order.created` message both exist, or neither does (and no stream record is produced).
 * Throws TransactionLimitError before sending when a DynamoDB limit would be broken, and
 * TransactionConditionError (with the failed action indexes, business actions first) when a condition fails.
 * @example
 * await writeWithOutbox(options, {
 *   actions: [{ Put: { TableName: ordersTable, Item: order, ConditionExpression: 'attribute_not_exists(orderId)' } }],
 *   messages: [createMessage({ topic: 'order.created', aggregateId: order.orderId, payload: order })],
 * });
 */
export async function writeWithOutbox(options: OutboxWriterOptions, write: OutboxWrite): Promise<void> {
  if (write.messages.length === 0) throw new RangeError('writeWithOutbox needs at least one message');
  const now = (options.clock ?? (() => new Date()))();
  // The first message id as the idempotency token: if the SDK retries a write whose response was lost,
  // DynamoDB answers the retry with success instead of failing the order's own condition (a false 409).
  await transactWrite(
    options.client,
    outboxTransaction(write, { ...options, now }),
    write.messages[0]?.messageId,
  );
}
