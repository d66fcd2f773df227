import type { TransactWriteAction } from '../transaction/transaction-limits.ts';

/** Key of the inbox table (the consumer's dedupe record). */
export const INBOX_KEYS = { partitionKey: 'messageId', ttlAttribute: 'expiresAt' } as const;

/** Days an inbox row is kept; must outlast every redelivery (SQS keeps a message at most 14 days). */
export const DEFAULT_INBOX_RETENTION_DAYS = 30;

/** A processed message, as recorded in the inbox. */
export interface InboxRow {
  readonly messageId: string;
  readonly topic: string;
  readonly outcome: string;
  readonly processedAt: string;
  readonly expiresAt: number;
}

/**
 * The inbox put that makes the effect happen once: it succeeds only for a message id never seen before,
 * and it commits in the SAME transaction as the business effect. A duplicate fails the condition and
 * returns the earlier row (ALL_OLD), so detecting it costs no extra read.
 */
export function inboxPut(
  inboxTable: string,
  row: { messageId: string; topic: string; outcome: string },
  now: Date,
  retentionDays: number = DEFAULT_INBOX_RETENTION_DAYS,
): TransactWriteAction {
  const item: InboxRow = {
    ...row,
    processedAt: now.toISOString(),
    expiresAt: Math.floor(now.getTime() / 1000) + retentionDays * 86_400,
  };
  return {
    Put: {
      TableName: inboxTable,
      Item: { ...item },
      ConditionExpression: 'attribute_not_exists(#messageId)',
      ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
