import { type Envelope, parseEnvelope } from '../message/envelope.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { DEFAULT_INBOX_RETENTION_DAYS, INBOX_KEYS } from './inbox.ts';

/**
 * An ordered topic's consumer keeps two more kinds of rows in its inbox table, beside the inbox rows: per order
 * key a cursor (the last seq applied) and, per message that arrived before its predecessor, a parked row.
 */

/** An envelope of an ordered topic: it carries its order key and its place in that key's sequence. */
export type OrderedEnvelope = Envelope & { readonly orderKey: string; readonly seq: number };

/** Whether `message` belongs to an ordered topic (it carries an order key and a seq). */
export function isOrdered(message: Envelope): message is OrderedEnvelope {
  return message.orderKey !== undefined && message.seq !== undefined;
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

/** What the row builders of one ordered message need. */
export interface OrderedRowTarget {
  readonly inboxTable: string;
  readonly orderKey: string;
  readonly seq: number;
}

const names = {
  '#messageId': INBOX_KEYS.partitionKey,
  '#lastSeq': 'lastSeq',
} as const;
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
        ...(first ? { '#messageId': names['#messageId'] } : {}),
        '#lastSeq': names['#lastSeq'],
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
      ExpressionAttributeNames: { ...names },
      ExpressionAttributeValues: { ':previous': target.seq - 1 },
    },
  };
}

/** What {@link parkedPut} stores. */
export interface ParkedEntry {
  readonly inboxTable: string;
  /** The message as received. */
  readonly message: OrderedEnvelope;
  readonly now: Date;
  /** @default 30 */
  readonly retentionDays?: number;
}

/** The put of a parked row; it fails when the message is parked already (a copy of it arrived before). */
export function parkedPut(entry: ParkedEntry): TransactWriteAction {
  const { message, now } = entry;
  const retentionDays = entry.retentionDays ?? DEFAULT_INBOX_RETENTION_DAYS;
  const item: ParkedRow = {
    messageId: parkedKeyOf(message.orderKey, message.seq),
    orderKey: message.orderKey,
    seq: message.seq,
    parkedMessageId: message.messageId,
    topic: message.topic,
    body: JSON.stringify(message),
    parkedAt: now.toISOString(),
    expiresAt: Math.floor(now.getTime() / 1000) + retentionDays * 86_400,
  };
  return {
    Put: {
      TableName: entry.inboxTable,
      Item: { ...item },
      ConditionExpression: cursorAbsent,
      ExpressionAttributeNames: { '#messageId': names['#messageId'] },
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
