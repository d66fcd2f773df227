import type { TransactWriteAction } from '../transaction/transaction-limits.ts';

/** Key of the inbox table (the consumer's dedupe record). */
export const INBOX_KEYS = { partitionKey: 'messageId', ttlAttribute: 'expiresAt' } as const;

/** Outcome recorded for an effect that committed. */
export const APPLIED = 'APPLIED';

/** Days an inbox row is kept; must outlast every redelivery (see `redeliveryHorizonMs`). */
export const DEFAULT_INBOX_RETENTION_DAYS = 30;

/** A processed message, as recorded in the inbox. */
export interface InboxRow {
  readonly messageId: string;
  readonly topic: string;
  readonly outcome: string;
  readonly processedAt: string;
  readonly expiresAt: number;
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
  const retentionDays = entry.retentionDays ?? DEFAULT_INBOX_RETENTION_DAYS;
  const item: InboxRow = {
    messageId: entry.messageId,
    topic: entry.topic,
    outcome: entry.outcome,
    processedAt: entry.now.toISOString(),
    expiresAt: Math.floor(entry.now.getTime() / 1000) + retentionDays * 86_400,
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
