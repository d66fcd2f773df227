import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { InboxAdminStore } from '../admin/admin-ports.ts';
import type {
  ConsumerInbox,
  InboxCommit,
  InboxRefusal,
  OrderedInboxCommit,
} from '../consumer/consumer-inbox.ts';
import { DEFAULT_INBOX_RETENTION_DAYS } from '../consumer/inbox-record.ts';
import { isOrdered, type OrderedEnvelope } from '../consumer/ordered-envelope.ts';
import { TransactionConditionError } from '../errors.ts';
import { deliveryIdOf, subscriberOrderKeyOf } from '../message/delivery-id.ts';
import { parseEnvelope } from '../message/envelope.ts';
import { deliveryCheckOfInbox, type InboxDeliveryReads } from '../sweeper/inbox-delivery-check.ts';
import type { DeliveryCheck } from '../sweeper/sweep.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { transactWrite } from './transact-write.ts';

/**
 * The consumer's inbox table: one row per processed message (its dedupe record), and for an ordered topic, per
 * order key a cursor (the last seq applied) and, per message that arrived before its predecessor, a parked row.
 * This module is the only code that knows its keys and attributes.
 */

/** Key of the inbox table (the consumer's dedupe record). */
export const INBOX_KEYS = { partitionKey: 'messageId', ttlAttribute: 'expiresAt' } as const;

/** A processed message, as recorded in the inbox. */
export interface InboxRow {
  readonly messageId: string;
  readonly topic: string;
  readonly outcome: string;
  readonly processedAt: string;
  readonly expiresAt: number;
}

/** The inbox table key of an order key's cursor row. */
export function cursorKeyOf(orderKey: string): string {
  return `cursor#${orderKey}`;
}

/** What every parked row's key starts with (an IAM grant may be limited to these rows). */
export const PARKED_KEY_PREFIX = 'parked#';

/** The inbox table key of the parked row of message `seq` of `orderKey`. */
export function parkedKeyOf(orderKey: string, seq: number): string {
  return `${PARKED_KEY_PREFIX}${orderKey}#${seq}`;
}

/** An order key's cursor: the last seq this consumer applied (or recorded a rejection of). */
export interface CursorRow {
  readonly messageId: string;
  readonly lastSeq: number;
  readonly updatedAt: string;
}

/** A message held until its predecessor is applied, as received (a claim-checked payload stays a reference). */
export interface ParkedRow {
  readonly messageId: string;
  readonly orderKey: string;
  readonly seq: number;
  readonly parkedMessageId: string;
  readonly topic: string;
  /** The received envelope as JSON. */
  readonly body: string;
  readonly parkedAt: string;
  /** A parked row left behind (its message applied by another copy) expires like an inbox row. */
  readonly expiresAt: number;
}

/** The expiry (epoch seconds, the table's TTL attribute) of a row written at `now`. */
function expiresAtOf(now: Date, retentionDays = DEFAULT_INBOX_RETENTION_DAYS): number {
  return Math.floor(now.getTime() / 1000) + retentionDays * 86_400;
}

/** The inbox row of one processed message. */
export interface InboxEntry {
  readonly inboxTable: string;
  readonly messageId: string;
  readonly topic: string;
  /** What processing it did: `APPLIED`, or a business outcome such as `REJECTED_OUT_OF_STOCK`. */
  readonly outcome: string;
  readonly now: Date;
  /** @default 30 */
  readonly retentionDays?: number;
}

/**
 * The inbox put that makes the effect happen once: it succeeds only for a message id never seen before,
 * and it commits in the SAME transaction as the business effect. A duplicate fails the condition and
 * returns the earlier row (ALL_OLD), so detecting it costs no extra read.
 */
export function inboxPut(entry: InboxEntry): TransactWriteAction {
  const item: InboxRow = {
    messageId: entry.messageId,
    topic: entry.topic,
    outcome: entry.outcome,
    processedAt: entry.now.toISOString(),
    expiresAt: expiresAtOf(entry.now, entry.retentionDays),
  };
  return {
    Put: {
      TableName: entry.inboxTable,
      Item: { ...item },
      ConditionExpression: 'attribute_not_exists(#messageId)',
      ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** What the row builders of one ordered message need. */
export interface OrderedRowTarget {
  readonly inboxTable: string;
  readonly orderKey: string;
  readonly seq: number;
}

const cursorAbsent = 'attribute_not_exists(#messageId)';
const cursorAtPredecessor = '#lastSeq = :previous';
const cursorBeforePredecessor = '#lastSeq < :previous';

/**
 * The cursor update that commits with message `seq`'s inbox row: it moves the cursor from `seq - 1` to `seq`
 * (creates it for seq 1), so a message applies only right after its predecessor. When the condition fails, the
 * cursor as it was comes back (ALL_OLD; nothing when there is no cursor yet): behind `seq - 1` means park,
 * at or past `seq` means a copy of an applied (or skipped) message.
 */
export function cursorAdvance(target: OrderedRowTarget & { readonly now: Date }): TransactWriteAction {
  const first = target.seq === 1;
  return {
    Update: {
      TableName: target.inboxTable,
      Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(target.orderKey) },
      UpdateExpression: 'SET #lastSeq = :seq, #updatedAt = :now',
      ConditionExpression: first ? cursorAbsent : cursorAtPredecessor,
      ExpressionAttributeNames: {
        ...(first ? { '#messageId': INBOX_KEYS.partitionKey } : {}),
        '#lastSeq': 'lastSeq',
        '#updatedAt': 'updatedAt',
      },
      ExpressionAttributeValues: {
        ':seq': target.seq,
        ':now': target.now.toISOString(),
        ...(first ? {} : { ':previous': target.seq - 1 }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The check that commits with a parked row: the cursor is still behind the message's predecessor. If the
 * predecessor was applied between the failed apply and this park, the check fails and the message is applied
 * instead of parked behind a cursor that will not move again.
 */
export function cursorBehind(target: OrderedRowTarget): TransactWriteAction {
  return {
    ConditionCheck: {
      TableName: target.inboxTable,
      Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(target.orderKey) },
      ConditionExpression: `${cursorAbsent} OR ${cursorBeforePredecessor}`,
      ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey, '#lastSeq': 'lastSeq' },
      ExpressionAttributeValues: { ':previous': target.seq - 1 },
    },
  };
}

/** What {@link parkedPut} stores. */
export interface ParkedEntry {
  readonly inboxTable: string;
  /** The message as received. */
  readonly message: OrderedEnvelope;
  /** The order key the row is filed under. @default the message's */
  readonly orderKey?: string;
  readonly now: Date;
  /** @default 30 */
  readonly retentionDays?: number;
}

/** The put of a parked row; it fails when the message is parked already (a copy of it arrived before). */
export function parkedPut(entry: ParkedEntry): TransactWriteAction {
  const { message, now } = entry;
  const orderKey = entry.orderKey ?? message.orderKey;
  const item: ParkedRow = {
    messageId: parkedKeyOf(orderKey, message.seq),
    orderKey,
    seq: message.seq,
    parkedMessageId: message.messageId,
    topic: message.topic,
    body: JSON.stringify(message),
    parkedAt: now.toISOString(),
    expiresAt: expiresAtOf(now, entry.retentionDays),
  };
  return {
    Put: {
      TableName: entry.inboxTable,
      Item: { ...item },
      ConditionExpression: cursorAbsent,
      ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey },
    },
  };
}

/** The delete of a parked row, committed with the apply of the message it held. */
export function parkedDelete(target: OrderedRowTarget): TransactWriteAction {
  return {
    Delete: {
      TableName: target.inboxTable,
      Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(target.orderKey, target.seq) },
    },
  };
}

/** The `lastSeq` of a cursor row as DynamoDB returned it; 0 when there is no cursor yet. */
export function lastSeqOf(cursor: Readonly<Record<string, unknown>> | undefined): number {
  const lastSeq = cursor?.lastSeq;
  return typeof lastSeq === 'number' ? lastSeq : 0;
}

/** The envelope a parked row holds. */
export function parkedMessageOf(row: Readonly<Record<string, unknown>>): OrderedEnvelope {
  const message = parseEnvelope(JSON.parse(String(row.body)));
  if (!isOrdered(message)) {
    throw new TypeError(`parked row ${String(row.messageId)} holds a message without an order key and seq`);
  }
  return message;
}

/** Where a {@link DynamoConsumerInbox} keeps its rows. */
export interface DynamoConsumerInboxOptions {
  readonly client: DynamoDBDocumentClient;
  readonly inboxTable: string;
  /** Days an inbox (or parked) row is kept. @default 30 */
  readonly retentionDays?: number;
  /**
   * The subscriber this consumer applies messages as (SUBSCRIBER): its rows are keyed `<messageId>#<subscriber>`
   * (cursors and parked rows under `<orderKey>#<subscriber>`), so that consumers of several subscribers sharing
   * one table each apply a message once — a message carries the same id to every subscriber.
   * @default - rows keyed by the message id alone
   */
  readonly subscriber?: string;
}

/**
 * The consumer's inbox on its DynamoDB table: each commit is one TransactWriteItems of the inbox put (action 0),
 * for an ordered message the cursor move (action 1) and a drained message's parked-row delete, then the effect's
 * actions; a cancelled one says which condition failed first, read from the cancellation reasons.
 * @example
 * const inbox = new DynamoConsumerInbox({ client, inboxTable: 'inventory-inbox' });
 */
export class DynamoConsumerInbox implements ConsumerInbox {
  readonly #client: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #retentionDays: number | undefined;
  readonly #subscriber: string | undefined;

  constructor(options: DynamoConsumerInboxOptions) {
    this.#client = options.client;
    this.#table = options.inboxTable;
    this.#retentionDays = options.retentionDays;
    this.#subscriber = options.subscriber;
  }

  async commit(entry: InboxCommit): Promise<Exclude<InboxRefusal, { refused: 'CURSOR' }> | undefined> {
    try {
      await transactWrite(this.#client, [this.#inboxPut(entry), ...entry.effect]);
      return undefined;
    } catch (error) {
      if (!(error instanceof TransactionConditionError)) throw error;
      // Action 0 is the inbox put: its condition failing means this message was processed before.
      if (error.failed(0)) return { refused: 'INBOX', outcome: outcomeOf(error.oldItem(0)) };
      return { refused: 'BUSINESS' };
    }
  }

  async commitOrdered(entry: OrderedInboxCommit): Promise<InboxRefusal | undefined> {
    const target = this.#target(entry.message);
    try {
      await transactWrite(this.#client, [
        this.#inboxPut(entry),
        cursorAdvance({ ...target, now: entry.now }),
        ...(entry.fromParked ? [parkedDelete(target)] : []),
        ...entry.effect,
      ]);
      return undefined;
    } catch (error) {
      if (!(error instanceof TransactionConditionError)) throw error;
      if (error.failed(0)) return { refused: 'INBOX', outcome: outcomeOf(error.oldItem(0)) };
      if (error.failed(1)) return { refused: 'CURSOR', lastSeq: lastSeqOf(error.oldItem(1)) };
      return { refused: 'BUSINESS' };
    }
  }

  async park(message: OrderedEnvelope, now: Date): Promise<boolean> {
    try {
      await transactWrite(this.#client, [
        parkedPut({
          inboxTable: this.#table,
          message,
          orderKey: this.#orderKey(message.orderKey),
          now,
          ...(this.#retentionDays === undefined ? {} : { retentionDays: this.#retentionDays }),
        }),
        cursorBehind(this.#target(message)),
      ]);
      return true;
    } catch (error) {
      if (!(error instanceof TransactionConditionError)) throw error;
      // Action 1 checks the cursor: it reached the predecessor between the apply and this park.
      if (error.failed(1)) return false;
      // Only the put failed: a copy of this message is parked already.
      return true;
    }
  }

  async readParked(orderKey: string, seq: number): Promise<OrderedEnvelope | undefined> {
    const { Item: row } = await this.#client.send(
      new GetCommand({
        TableName: this.#table,
        Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(this.#orderKey(orderKey), seq) },
        ConsistentRead: true,
      }),
    );
    return row === undefined ? undefined : parkedMessageOf(row);
  }

  async deleteParked(orderKey: string, seq: number): Promise<void> {
    await this.#client.send(
      new DeleteCommand({
        TableName: this.#table,
        Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(this.#orderKey(orderKey), seq) },
      }),
    );
  }

  async eraseParked(parked: {
    readonly orderKey: string;
    readonly seq: number;
    readonly messageId: string;
  }): Promise<boolean> {
    return deleteParkedOf(this.#client, {
      inboxTable: this.#table,
      orderKey: this.#orderKey(parked.orderKey),
      seq: parked.seq,
      messageId: parked.messageId,
    });
  }

  #inboxPut(entry: InboxCommit): TransactWriteAction {
    const messageId = entry.message.messageId;
    return inboxPut({
      inboxTable: this.#table,
      messageId: this.#subscriber === undefined ? messageId : deliveryIdOf(messageId, this.#subscriber),
      topic: entry.message.topic,
      outcome: entry.outcome,
      now: entry.now,
      ...(this.#retentionDays === undefined ? {} : { retentionDays: this.#retentionDays }),
    });
  }

  #target(message: OrderedEnvelope): OrderedRowTarget {
    return { inboxTable: this.#table, orderKey: this.#orderKey(message.orderKey), seq: message.seq };
  }

  /** The order key this consumer's cursor and parked rows of `orderKey` are filed under. */
  #orderKey(orderKey: string): string {
    return this.#subscriber === undefined ? orderKey : subscriberOrderKeyOf(orderKey, this.#subscriber);
  }
}

/**
 * Deletes the parked row at `orderKey`/`seq` of `inboxTable` if it holds `messageId` (an erase of that message, by
 * the admin or by the subscriber's consumer): true when one was there.
 */
async function deleteParkedOf(
  client: Pick<DynamoDBDocumentClient, 'send'>,
  parked: {
    readonly inboxTable: string;
    readonly orderKey: string;
    readonly seq: number;
    readonly messageId: string;
  },
): Promise<boolean> {
  try {
    const deleted = await client.send(
      new DeleteCommand({
        TableName: parked.inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(parked.orderKey, parked.seq) },
        // Only the row that holds this message, never another's parked at the same place.
        ConditionExpression: '#parkedMessageId = :messageId',
        ExpressionAttributeNames: { '#parkedMessageId': 'parkedMessageId' },
        ExpressionAttributeValues: { ':messageId': parked.messageId },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return deleted.Attributes !== undefined;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** The outcome an inbox row records, when it is there and records one. */
function outcomeOf(row: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const outcome = row?.outcome;
  return typeof outcome === 'string' ? outcome : undefined;
}

/**
 * The sweeper's reads of a consumer's inbox table, each one row's key and one attribute of it, strongly
 * consistent, so a just-committed effect is never mistaken for a missing one.
 */
export function inboxDeliveryReads(client: DynamoDBDocumentClient, inboxTable: string): InboxDeliveryReads {
  const read = async (key: string, attribute: string) => {
    const result = await client.send(
      new GetCommand({
        TableName: inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: key },
        ConsistentRead: true,
        ProjectionExpression: `#messageId, #${attribute}`,
        ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey, [`#${attribute}`]: attribute },
      }),
    );
    return result.Item;
  };
  return {
    inboxRow: async (messageId) => {
      const row = await read(messageId, 'outcome');
      return row === undefined ? undefined : { outcome: outcomeOf(row) };
    },
    cursorLastSeq: async (orderKey) => lastSeqOf(await read(cursorKeyOf(orderKey), 'lastSeq')),
    parkedAt: async (orderKey, seq) => {
      const parked = await read(parkedKeyOf(orderKey, seq), 'parkedAt');
      return typeof parked?.parkedAt === 'string' ? parked.parkedAt : undefined;
    },
  };
}

/**
 * The sweeper's reconciliation check of a consumer built on this library, reading its inbox table (see
 * `deliveryCheckOfInbox`).
 * @example
 * deliveryCheckFor: (topic) => (topic === 'order.created' ? inboxDeliveryCheck(client, 'inventory-inbox') : undefined),
 */
export function inboxDeliveryCheck(client: DynamoDBDocumentClient, inboxTable: string): DeliveryCheck {
  return deliveryCheckOfInbox(inboxDeliveryReads(client, inboxTable));
}

/**
 * The admin's reads and writes of the consumers' inbox tables: an erase deletes the parked rows of its messages, a
 * skip reads and moves the ordered topics' cursors. Every inbox table has the same keys, so one store serves them
 * all; each call names its table.
 */
export class DynamoInboxAdminStore implements InboxAdminStore {
  readonly #client: Pick<DynamoDBDocumentClient, 'send'>;

  constructor(options: { readonly client: Pick<DynamoDBDocumentClient, 'send'> }) {
    this.#client = options.client;
  }

  /** @inheritdoc */
  deleteParked(parked: {
    readonly inboxTable: string;
    readonly messageId: string;
    readonly orderKey: string;
    readonly seq: number;
  }): Promise<boolean> {
    return deleteParkedOf(this.#client, parked);
  }

  /** @inheritdoc */
  async cursorOf(at: { readonly inboxTable: string; readonly orderKey: string }): Promise<number | null> {
    const { Item } = await this.#client.send(
      new GetCommand({
        TableName: at.inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(at.orderKey) },
        ConsistentRead: true,
      }),
    );
    const lastSeq = Item?.lastSeq;
    return typeof lastSeq === 'number' ? lastSeq : null;
  }

  /** @inheritdoc */
  cursorSkipAction(move: {
    readonly inboxTable: string;
    readonly orderKey: string;
    readonly seq: number;
    readonly lastSeq: number | null;
    readonly now: Date;
  }): TransactWriteAction {
    // Conditional on the cursor still being where it was read (or, for seq 1, still absent): a message the
    // consumer applied meanwhile makes the transaction fail.
    const still =
      move.lastSeq === null
        ? { expression: 'attribute_not_exists(#key)', values: {} }
        : { expression: '#lastSeq = :previous', values: { ':previous': move.lastSeq } };
    return {
      Update: {
        TableName: move.inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(move.orderKey) },
        UpdateExpression: 'SET #lastSeq = :seq, #updatedAt = :now',
        ConditionExpression: still.expression,
        ExpressionAttributeNames: {
          '#lastSeq': 'lastSeq',
          '#updatedAt': 'updatedAt',
          ...(move.lastSeq === null ? { '#key': INBOX_KEYS.partitionKey } : {}),
        },
        ExpressionAttributeValues: { ':seq': move.seq, ':now': move.now.toISOString(), ...still.values },
      },
    };
  }
}
