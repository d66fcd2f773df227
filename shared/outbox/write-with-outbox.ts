import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { MessageTooLargeError } from '../errors.ts';
import { assertValidMessage, type Envelope } from '../message/envelope.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../relay/wire-format.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { transactWrite } from '../transaction/transact-write.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { newOutboxItem, OUTBOX_KEYS } from './outbox-item.ts';

/** Where and how the writer stores messages. */
export interface OutboxWriterOptions {
  readonly client: DynamoDBDocumentClient;
  readonly outboxTable: string;
  /**
   * Partitions of the due index; must equal the sweeper's (`TransactionalOutbox` sets both).
   * @default 8
   */
  readonly dueShards?: number;
  /**
   * How long a new message waits for the stream relay before the sweeper may send it, in ms.
   * @default 60000
   */
  readonly streamGraceMs?: number;
  /**
   * The largest message (body and attributes) the topic queues accept, in bytes; a larger one is refused here
   * rather than failing every send.
   * @default 262144 (SQS's 256 KiB)
   */
  readonly maxMessageBytes?: number;
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

/**
 * Builds the single TransactWriteItems list: the business actions first, then one Put per message. Each
 * message is checked first: plain JSON payload, valid envelope, and a wire size the queue accepts.
 */
export function outboxTransaction(
  write: OutboxWrite,
  options: Omit<OutboxWriterOptions, 'client'> & { readonly now: Date },
): TransactWriteAction[] {
  const dueShards = OutboxSettings.dueShards.validate(
    options.dueShards ?? OutboxSettings.dueShards.defaultValue ?? 1,
  );
  const streamGraceMs = OutboxSettings.streamGraceMs.validate(
    options.streamGraceMs ?? OutboxSettings.streamGraceMs.defaultValue ?? 0,
  );
  const maximumBytes = options.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  const messagePuts = write.messages.map((message): TransactWriteAction => {
    assertValidMessage(message);
    const actualBytes = messageSizeBytes(message);
    if (actualBytes > maximumBytes)
      throw new MessageTooLargeError(message.messageId, { actualBytes, maximumBytes });
    return {
      Put: {
        TableName: options.outboxTable,
        Item: { ...newOutboxItem(message, { now: options.now, dueShards, streamGraceMs }) },
        // A reused message id (a client's idempotency key) must never overwrite a message.
        ConditionExpression: 'attribute_not_exists(#messageId)',
        ExpressionAttributeNames: { '#messageId': OUTBOX_KEYS.partitionKey },
      },
    };
  });
  return [...write.actions, ...messagePuts];
}

/**
 * Commits business items and outbox messages in ONE DynamoDB transaction: either the order and its
 * `order.created` message both exist, or neither does (and no stream record is produced).
 * Throws, before anything is sent: InvalidMessageError (a payload that is not plain JSON, with the path of the
 * offending value), MessageTooLargeError (larger than the queue accepts), TransactionLimitError (a DynamoDB
 * limit); and TransactionConditionError (each action's reason, business actions first) when a condition fails.
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
