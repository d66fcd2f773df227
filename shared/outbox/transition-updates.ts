import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { MessageStatus } from '../message/message-status.ts';
import { OUTBOX_KEYS } from './outbox-item.ts';
import { TRANSITIONS } from './state-machine.ts';

/** An UpdateItem on the outbox, without the table name. */
export type OutboxUpdate = Omit<UpdateCommandInput, 'TableName'>;

const DAY_SECONDS = 86_400;

/** How long terminal messages stay before TTL archives them. */
export const DEFAULT_RETENTION_DAYS = 30;

/** Builds a condition "status is one of `statuses`" from named parts, so it reads as a sentence. */
function statusIsOneOf(statuses: readonly MessageStatus[]): {
  expression: string;
  values: Record<string, string>;
} {
  const values = Object.fromEntries(statuses.map((status, index) => [`:from${index}`, status]));
  return { expression: `#status IN (${Object.keys(values).join(', ')})`, values };
}

const messageExists = 'attribute_exists(#messageId)';

/**
 * PENDING → SENT after SQS accepted the message. The message stays in the due index with
 * `nextAttemptAt` = the confirmation deadline, so the sweeper reconciles it if no confirmation comes.
 */
export function markSentUpdate(messageId: string, now: Date, confirmDeadlineMs: number): OutboxUpdate {
  const from = statusIsOneOf(TRANSITIONS.markSent.from);
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression:
      'SET #status = :to, #attempts = if_not_exists(#attempts, :zero) + :one, #sentAt = :now, #updatedAt = :now, #nextAttemptAt = :deadline REMOVE #leaseOwner, #leaseUntil',
    ConditionExpression: `${messageExists} AND ${from.expression}`,
    ExpressionAttributeNames: {
      '#messageId': OUTBOX_KEYS.partitionKey,
      '#status': 'status',
      '#attempts': 'attempts',
      '#sentAt': 'sentAt',
      '#updatedAt': 'updatedAt',
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
    },
    ExpressionAttributeValues: {
      ...from.values,
      ':to': TRANSITIONS.markSent.to,
      ':zero': 0,
      ':one': 1,
      ':now': now.toISOString(),
      ':deadline': new Date(now.getTime() + confirmDeadlineMs).toISOString(),
    },
  };
}

/** What a failed send does to a message: retry later, or give up. */
export type SendFailureDecision =
  | { readonly kind: 'retry'; readonly attempts: number; readonly nextAttemptAt: Date }
  | { readonly kind: 'fail'; readonly attempts: number };

/** A failed send to record on its message. */
export interface SendFailure {
  readonly messageId: string;
  /** The attempts the message had when it was read; the record holds only if nobody counted one since. */
  readonly seenAttempts: number;
  readonly decision: SendFailureDecision;
  /** Why the send failed, for `lastError`. */
  readonly error: string;
  readonly now: Date;
}

/**
 * Records a failed send made when the message had `seenAttempts` attempts. Conditional on the status still
 * being PENDING and nobody else having recorded an attempt since, so two writers never double-count.
 */
export function sendFailureUpdate({
  messageId,
  seenAttempts,
  decision,
  error,
  now,
}: SendFailure): OutboxUpdate {
  const transition = decision.kind === 'retry' ? TRANSITIONS.recordAttempt : TRANSITIONS.fail;
  const from = statusIsOneOf(transition.from);
  const names = {
    '#messageId': OUTBOX_KEYS.partitionKey,
    '#status': 'status',
    '#attempts': 'attempts',
    '#lastError': 'lastError',
    '#updatedAt': 'updatedAt',
    '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
    '#leaseOwner': 'leaseOwner',
    '#leaseUntil': 'leaseUntil',
  };
  const values = {
    ...from.values,
    ':to': transition.to,
    ':attempts': decision.attempts,
    ':seen': seenAttempts,
    ':error': error.slice(0, 1_000),
    ':now': now.toISOString(),
  };
  const condition = `${messageExists} AND ${from.expression} AND (#attempts = :seen OR attribute_not_exists(#attempts))`;
  if (decision.kind === 'retry') {
    return {
      Key: { [OUTBOX_KEYS.partitionKey]: messageId },
      UpdateExpression:
        'SET #status = :to, #attempts = :attempts, #lastError = :error, #updatedAt = :now, #nextAttemptAt = :next REMOVE #leaseOwner, #leaseUntil',
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ...values, ':next': decision.nextAttemptAt.toISOString() },
    };
  }
  // FAILED leaves the due index (nothing more to do) but keeps payload, attempts and lastError; it is
  // never archived by TTL, because an operator must see it and may replay it.
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression:
      'SET #status = :to, #attempts = :attempts, #lastError = :error, #updatedAt = :now, #failedAt = :now REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil',
    ConditionExpression: condition,
    ExpressionAttributeNames: {
      ...names,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#failedAt': 'failedAt',
    },
    ExpressionAttributeValues: values,
  };
}

/** A message the downstream applied. */
export interface Confirmation {
  readonly messageId: string;
  readonly now: Date;
  /** What the consumer recorded (`APPLIED`, `REJECTED_OUT_OF_STOCK`…), shown to the producer. */
  readonly outcome?: string;
  /** Days until TTL removes the message. @default 30 */
  readonly retentionDays?: number;
}

/**
 * → CONFIRMED once the downstream applied the message, with the consumer's outcome when it is known. Leaves the
 * due index and sets the TTL, so the table does not grow forever.
 */
export function confirmUpdate({ messageId, now, outcome, retentionDays }: Confirmation): OutboxUpdate {
  const from = statusIsOneOf(TRANSITIONS.confirm.from);
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #status = :to, #confirmedAt = :now, #updatedAt = :now, #expiresAt = :expiresAt${
      outcome === undefined ? '' : ', #outcome = :outcome'
    } REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil`,
    ConditionExpression: `${messageExists} AND ${from.expression}`,
    ExpressionAttributeNames: {
      '#messageId': OUTBOX_KEYS.partitionKey,
      '#status': 'status',
      '#confirmedAt': 'confirmedAt',
      '#updatedAt': 'updatedAt',
      '#expiresAt': OUTBOX_KEYS.ttlAttribute,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      ...(outcome === undefined ? {} : { '#outcome': 'outcome' }),
    },
    ExpressionAttributeValues: {
      ...from.values,
      ':to': TRANSITIONS.confirm.to,
      ':now': now.toISOString(),
      ':expiresAt':
        Math.floor(now.getTime() / 1000) + (retentionDays ?? DEFAULT_RETENTION_DAYS) * DAY_SECONDS,
      ...(outcome === undefined ? {} : { ':outcome': outcome.slice(0, 200) }),
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}
