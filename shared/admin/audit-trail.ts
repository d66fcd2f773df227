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
 * One row of the audit trail, filed under its subject in time order (the action id is a ULID): who did what, when and why. `details` holds ids, statuses and counts, never a
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
