import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';

/** Key of the audit table: one partition per subject, rows in time order (the action id is a ULID). */
export const AUDIT_KEYS = { partitionKey: 'subject', sortKey: 'actionId' } as const;

/** What an operator did. */
export const AuditAction = {
  REPLAY: 'REPLAY',
  CANCEL: 'CANCEL',
  BULK_REPLAY: 'BULK_REPLAY',
  REDRIVE: 'REDRIVE',
  ERASE: 'ERASE',
  /** A message of an ordered sequence skipped: cancelled, the consumers' cursors moved past it. */
  SKIP: 'SKIP',
} as const;

/** One of the {@link AuditAction} values. */
export type AuditAction = (typeof AuditAction)[keyof typeof AuditAction];

/** The subjects audit rows are filed under. */
export const auditSubject = {
  message: (messageId: string) => `message:${messageId}`,
  deadLetterQueue: (queueName: string) => `dlq:${queueName}`,
  aggregate: (aggregateId: string) => `aggregate:${aggregateId}`,
  /** One ordered sequence (an order key): a skip of a seq whose message the outbox no longer holds. */
  sequence: (orderKey: string) => `sequence:${orderKey}`,
  /** The redrive journal of one dead-letter queue: a row per DLQ message, keyed by its SQS message id. */
  redriveJournal: (queueName: string) => `redrive:${queueName}`,
} as const;

/**
 * One row of the audit trail: who did what, when and why. `details` holds ids, statuses and counts, never a
 * message's payload (which may carry personal data).
 */
export interface AuditRow {
  readonly subject: string;
  readonly actionId: string;
  readonly at: string;
  readonly action: AuditAction;
  readonly actor: string;
  readonly reason: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * The Put of an audit row, for the same TransactWriteItems as the change it records: both or neither. Never
 * overwrites a row.
 */
export function auditPut(auditTable: string, row: AuditRow): TransactWriteAction {
  return {
    Put: {
      TableName: auditTable,
      Item: { ...row },
      ConditionExpression: 'attribute_not_exists(#subject)',
      ExpressionAttributeNames: { '#subject': AUDIT_KEYS.partitionKey },
    },
  };
}

/** Writes an audit row on its own, for actions that change no outbox item (a redrive, an erase). */
export async function putAuditRow(
  client: DynamoDBDocumentClient,
  auditTable: string,
  row: AuditRow,
): Promise<void> {
  const { Put } = auditPut(auditTable, row);
  if (Put !== undefined) await client.send(new PutCommand(Put));
}

/** Every audit row of `subject`, oldest first. */
export async function readAuditTrail(
  client: DynamoDBDocumentClient,
  auditTable: string,
  subject: string,
): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: auditTable,
        KeyConditionExpression: '#subject = :subject',
        ExpressionAttributeNames: { '#subject': AUDIT_KEYS.partitionKey },
        ExpressionAttributeValues: { ':subject': subject },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    rows.push(...((page.Items ?? []) as AuditRow[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return rows;
}
