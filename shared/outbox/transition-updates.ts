import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { MessageStatus } from '../message/message-status.ts';
import { appendHistory, HistoryEvent } from './history.ts';
import { attentionKeyOf, OUTBOX_KEYS } from './outbox-item.ts';
import { TRANSITIONS } from './state-machine.ts';

/** An UpdateItem on the outbox, without the table name. */
export type OutboxUpdate = Omit<UpdateCommandInput, 'TableName'>;

const DAY_SECONDS = 86_400;

/** How long terminal messages stay before TTL archives them. */
export const DEFAULT_RETENTION_DAYS = 30;

/** Who makes a change, and how messages are spread over the index shards. */
export interface ChangeContext {
  /** Recorded as the history entry's `by`: `relay`, `sweeper`, `consumer`, or the operator. */
  readonly by?: string;
  /** Partitions of the due index, which the attention index shares. @default 8 */
  readonly dueShards?: number;
}

/** Builds a condition "status is one of `statuses`" from named parts, so it reads as a sentence. */
export function statusIsOneOf(statuses: readonly MessageStatus[]): {
  expression: string;
  values: Record<string, string>;
} {
  const values = Object.fromEntries(statuses.map((status, index) => [`:from${index}`, status]));
  return { expression: `#status IN (${Object.keys(values).join(', ')})`, values };
}

const messageExists = 'attribute_exists(#messageId)';

/** The epoch second at which TTL removes a message finished at `now`. */
export function expiresAfter(now: Date, retentionDays: number = DEFAULT_RETENTION_DAYS): number {
  return Math.floor(now.getTime() / 1000) + retentionDays * DAY_SECONDS;
}

/** A message handed to SQS. */
export interface MarkSent extends ChangeContext {
  readonly messageId: string;
  readonly now: Date;
  /** How long the message may wait for its confirmation before the sweeper reconciles it. */
  readonly confirmDeadlineMs: number;
}

/**
 * PENDING → SENT after SQS accepted the message, with `confirmBy` = the confirmation deadline. The message stays
 * in the due index under the `nextAttemptAt` it had: moving it there would change the index key, a delete and a put
 * of the index entry on every message, while almost every message is confirmed long before the sweeper looks. A
 * sweeper that finds a SENT message due before its `confirmBy` gives it back until then; after it, it reconciles.
 */
export function markSentUpdate({ messageId, now, confirmDeadlineMs, by }: MarkSent): OutboxUpdate {
  const from = statusIsOneOf(TRANSITIONS.markSent.from);
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.SENT,
    from: MessageStatus.PENDING,
    to: TRANSITIONS.markSent.to,
    ...(by === undefined ? {} : { by }),
  });
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #status = :to, #attempts = if_not_exists(#attempts, :zero) + :one, #sentAt = :now, #updatedAt = :now, #confirmBy = :deadline, ${history.set} REMOVE #leaseOwner, #leaseUntil`,
    ConditionExpression: `${messageExists} AND ${from.expression}`,
    ExpressionAttributeNames: {
      '#messageId': OUTBOX_KEYS.partitionKey,
      '#status': 'status',
      '#attempts': 'attempts',
      '#sentAt': 'sentAt',
      '#updatedAt': 'updatedAt',
      '#confirmBy': 'confirmBy',
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      ...history.names,
    },
    ExpressionAttributeValues: {
      ...from.values,
      ':to': TRANSITIONS.markSent.to,
      ':zero': 0,
      ':one': 1,
      ':now': now.toISOString(),
      ':deadline': new Date(now.getTime() + confirmDeadlineMs).toISOString(),
      ...history.values,
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
 * being PENDING and nobody else having recorded an attempt since, so two writers never double-count. A retry
 * keeps the status and writes no history; giving up moves the message to FAILED, into the attention index.
 */
export function sendFailureUpdate(
  { messageId, seenAttempts, decision, error, now }: SendFailure,
  context: ChangeContext = {},
): OutboxUpdate {
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
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.FAILED,
    from: MessageStatus.PENDING,
    to: TRANSITIONS.fail.to,
    reason: error,
    ...(context.by === undefined ? {} : { by: context.by }),
  });
  // FAILED leaves the due index (nothing more to do) for the attention index, but keeps payload, attempts and
  // lastError; it is never archived by TTL, because an operator must see it and may replay it.
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #status = :to, #attempts = :attempts, #lastError = :error, #updatedAt = :now, #failedAt = :now, #attentionKey = :attentionKey, ${history.set} REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil`,
    ConditionExpression: condition,
    ExpressionAttributeNames: {
      ...names,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#failedAt': 'failedAt',
      '#attentionKey': OUTBOX_KEYS.attentionIndex.partitionKey,
      ...history.names,
    },
    ExpressionAttributeValues: {
      ...values,
      ':attentionKey': attentionKeyOf(MessageStatus.FAILED, messageId, context.dueShards),
      ...history.values,
    },
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
  /** Who confirms: `consumer` or `sweeper` (reconciliation). */
  readonly by?: string;
}

/**
 * → CONFIRMED once the downstream applied the message, with the consumer's outcome when it is known. Leaves the
 * due and attention indexes and sets the TTL, so the table does not grow forever.
 */
export function confirmUpdate({ messageId, now, outcome, retentionDays, by }: Confirmation): OutboxUpdate {
  const from = statusIsOneOf(TRANSITIONS.confirm.from);
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.CONFIRMED,
    to: TRANSITIONS.confirm.to,
    ...(by === undefined ? {} : { by }),
    ...(outcome === undefined ? {} : { outcome }),
  });
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #status = :to, #confirmedAt = :now, #updatedAt = :now, #expiresAt = :expiresAt, ${history.set}${
      outcome === undefined ? '' : ', #outcome = :outcome'
    } REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil, #attentionKey`,
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
      '#attentionKey': OUTBOX_KEYS.attentionIndex.partitionKey,
      ...history.names,
      ...(outcome === undefined ? {} : { '#outcome': 'outcome' }),
    },
    ExpressionAttributeValues: {
      ...from.values,
      ':to': TRANSITIONS.confirm.to,
      ':now': now.toISOString(),
      ':expiresAt': expiresAfter(now, retentionDays),
      ...history.values,
      ...(outcome === undefined ? {} : { ':outcome': outcome.slice(0, 200) }),
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/**
 * Records on a CANCELLED message that a copy already in flight at the cancel was applied downstream: the
 * outcome, `confirmedAt` and an APPLIED_AFTER_CANCEL history entry; the status stays CANCELLED. Conditional on
 * no such record yet, so a redelivered copy's confirmation does not record it twice.
 */
export function appliedAfterCancelUpdate({ messageId, now, outcome, by }: Confirmation): OutboxUpdate {
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.APPLIED_AFTER_CANCEL,
    from: MessageStatus.CANCELLED,
    to: TRANSITIONS.applyAfterCancel.to,
    ...(by === undefined ? {} : { by }),
    ...(outcome === undefined ? {} : { outcome }),
  });
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #confirmedAt = :now, #updatedAt = :now, ${history.set}${
      outcome === undefined ? '' : ', #outcome = :outcome'
    }`,
    ConditionExpression: `${messageExists} AND #status = :cancelled AND attribute_not_exists(#confirmedAt)`,
    ExpressionAttributeNames: {
      '#messageId': OUTBOX_KEYS.partitionKey,
      '#status': 'status',
      '#confirmedAt': 'confirmedAt',
      '#updatedAt': 'updatedAt',
      ...history.names,
      ...(outcome === undefined ? {} : { '#outcome': 'outcome' }),
    },
    ExpressionAttributeValues: {
      ':cancelled': MessageStatus.CANCELLED,
      ':now': now.toISOString(),
      ...history.values,
      ...(outcome === undefined ? {} : { ':outcome': outcome.slice(0, 200) }),
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/**
 * Every attribute a consumer's confirmation names (the key, what it sets and removes, what its condition reads),
 * taken from the two updates it sends, so that an IAM grant limited to these (`dynamodb:Attributes`) cannot
 * drift from the code.
 */
export const CONFIRMATION_ATTRIBUTES: readonly string[] = [
  ...new Set(
    [confirmUpdate, appliedAfterCancelUpdate].flatMap((update) =>
      Object.values(
        update({ messageId: '-', now: new Date(0), outcome: '-' }).ExpressionAttributeNames ?? {},
      ),
    ),
  ),
].sort();

/** The `ReturnValues` a confirmation asks for: none (a failed condition returns the item by itself). */
export const CONFIRMATION_RETURN_VALUES = 'NONE';
