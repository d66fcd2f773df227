import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CLAIM_CHECK_HEADER, type ClaimCheckObject, checkIn } from '../claim-check/claim-check-reference.ts';
import type { ClaimCheckWriting } from '../claim-check/claim-check-store.ts';
import { InvalidMessageError, MessageTooLargeError } from '../errors.ts';
import { assertValidMessage, type Envelope } from '../message/envelope.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../relay/wire-format.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { transactWrite } from '../transaction/transact-write.ts';
import {
  assertWithinTransactionLimits,
  type TransactWriteAction,
} from '../transaction/transaction-limits.ts';
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
  /**
   * Where payloads of messages larger than `thresholdBytes` on the wire go: each is put in S3 (under
   * `claim-check/<messageId>/`) before the transaction, and the message carries a reference instead.
   * @default - no claim check: a message larger than the queue accepts is refused
   */
  readonly claimCheck?: ClaimCheckWriting;
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

/** A write whose large payloads were moved into claim-check objects. */
export interface ClaimCheckedWrite {
  /** The write to commit: every large message replaced by one that refers to its object. */
  readonly write: OutboxWrite;
  /** The objects to store before the transaction, one per large message. */
  readonly objects: readonly ClaimCheckObject[];
}

/**
 * Moves the payload of every message larger than the threshold on the wire (body and attributes, as SQS counts
 * them) into a claim-check object; a message at or below it is left as it is. Pure.
 */
export function claimCheckWrite(
  write: OutboxWrite,
  claimCheck: Omit<ClaimCheckWriting, 'store'>,
): ClaimCheckedWrite {
  const thresholdBytes = OutboxSettings.claimCheckThresholdBytes.validate(
    claimCheck.thresholdBytes ?? OutboxSettings.claimCheckThresholdBytes.defaultValue ?? 0,
  );
  const objects: ClaimCheckObject[] = [];
  const messages = write.messages.map((message) => {
    assertValidMessage(message);
    assertNoClaimCheckMarker(message);
    if (messageSizeBytes(message) <= thresholdBytes) return message;
    const checkedIn = checkIn(message, { bucket: claimCheck.bucket });
    objects.push(checkedIn.object);
    return checkedIn.message;
  });
  return { write: { ...write, messages }, objects };
}

/** The claim-check marker is the library's: a producer setting it would make a consumer misread the payload. */
function assertNoClaimCheckMarker(message: Envelope): void {
  if (message.headers[CLAIM_CHECK_HEADER] !== undefined) {
    throw new InvalidMessageError(
      `headers["${CLAIM_CHECK_HEADER}"]`,
      'is set by the claim check only; use another header name',
    );
  }
}

/**
 * Commits business items and outbox messages in ONE DynamoDB transaction: either the order and its
 * `order.created` message both exist, or neither does (and no stream record is produced). With `claimCheck`, the
 * payload of a message larger than the threshold is put in S3 first and the message carries a reference to it.
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
  for (const message of write.messages) assertNoClaimCheckMarker(message);
  const checked =
    options.claimCheck === undefined ? { write, objects: [] } : claimCheckWrite(write, options.claimCheck);
  const actions = outboxTransaction(checked.write, { ...options, now });
  // Refused before any object is stored, so a write DynamoDB would refuse leaves nothing behind at all.
  assertWithinTransactionLimits(actions);
  // Objects first, then the transaction: a committed message always finds its object, and an object whose
  // transaction fails is never referenced and expires with the bucket's lifecycle rule on the prefix.
  const store = options.claimCheck?.store;
  if (store !== undefined) await Promise.all(checked.objects.map((object) => store.put(object)));
  // The first message id as the idempotency token: if the SDK retries a write whose response was lost,
  // DynamoDB answers the retry with success instead of failing the order's own condition (a false 409).
  await transactWrite(options.client, actions, write.messages[0]?.messageId);
}
