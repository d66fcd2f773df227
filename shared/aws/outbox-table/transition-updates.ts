import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { MessageStatus } from '../../message/message-status.ts';
import { HistoryEvent } from '../../outbox/history.ts';
import type { ChangeContext, SendFailure } from '../../outbox/outbox-changes.ts';
import { DEFAULT_RETENTION_DAYS } from '../../outbox/outbox-defaults.ts';
import { attentionKeyOf } from '../../outbox/outbox-item.ts';
import { TRANSITIONS } from '../../outbox/state-machine.ts';
import { appendHistory } from './history-append.ts';
import { OUTBOX_KEYS } from './outbox-keys.ts';

/** An UpdateItem on the outbox, without the table name. */
export type OutboxUpdate = Omit<UpdateCommandInput, 'TableName'>;

const DAY_SECONDS = 86_400;

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

/** A message about to be handed to SQS. */
export interface MarkSent extends ChangeContext {
  readonly messageId: string;
  readonly now: Date;
  /** How long the message may wait for its confirmation before the sweeper reconciles it. */
  readonly confirmDeadlineMs: number;
  /**
   * The lease owner of a sweeper that claimed the message: the mark holds only while its claim does. Absent (the
   * stream relay): only while no sweeper holds a live claim on it.
   */
  readonly claimedBy?: string;
}

/**
 * PENDING → SENT just before the message is handed to SQS, with `confirmBy` = the confirmation deadline and
 * `sentAt` = `now`, which the sender's record of a refused send names. The mark comes first so that it is the one
 * point where a send and an operator's cancel meet: a cancel that lands before it makes it fail and nothing is
 * sent; once it is made, the message is SENT and a cancel is refused. A sender that stops between its mark and its
 * send leaves a SENT message that nobody sent; reconciliation resends it after its deadline.
 * The message stays in the due index under the `nextAttemptAt` it had: moving it there would change the index key,
 * a delete and a put of the index entry on every message, while almost every message is confirmed long before the
 * sweeper looks. A sweeper that finds a SENT message due before its `confirmBy` gives it back until then; after it,
 * it reconciles.
 */
export function markSentUpdate({ messageId, now, confirmDeadlineMs, by, claimedBy }: MarkSent): OutboxUpdate {
  const from = statusIsOneOf(TRANSITIONS.markSent.from);
  // A sweeper's mark holds only under its own claim (a cancel drops the claim); the relay's only under nobody's.
  const claim =
    claimedBy === undefined
      ? { expression: '(attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now)', values: {} }
      : { expression: '#leaseOwner = :owner', values: { ':owner': claimedBy } };
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
    ConditionExpression: `${messageExists} AND ${from.expression} AND ${claim.expression}`,
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
      ...claim.values,
      ':to': TRANSITIONS.markSent.to,
      ':zero': 0,
      ':one': 1,
      ':now': now.toISOString(),
      ':deadline': new Date(now.getTime() + confirmDeadlineMs).toISOString(),
      ...history.values,
    },
  };
}

/**
 * Records a failed send made when the message had `seenAttempts` attempts: back to PENDING with the next attempt's
 * time (attempts left), or FAILED, into the attention index (none left). Conditional on the message being where
 * the sender left it — SENT under its own mark (`markedAt`), or still PENDING with nobody having counted an attempt
 * since — so two writers never double-count and a stale record never undoes someone else's move. Giving up, and
 * undoing a mark, write a history entry; a retry of a message never marked writes none.
 */
export function sendFailureUpdate(
  { messageId, seenAttempts, decision, error, now, markedAt }: SendFailure,
  context: ChangeContext = {},
): OutboxUpdate {
  const transition = decision.kind === 'retry' ? TRANSITIONS.recordAttempt : TRANSITIONS.fail;
  const from = statusIsOneOf(markedAt === undefined ? [MessageStatus.PENDING] : [MessageStatus.SENT]);
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
  const refusals: {
    readonly set: string;
    readonly names: Record<string, string>;
    readonly values: Record<string, number>;
  } =
    decision.refusals === undefined
      ? { set: '', names: {}, values: {} }
      : {
          set: ', #refusals = :refusals',
          names: { '#refusals': 'refusals' },
          values: { ':refusals': decision.refusals },
        };
  const values = {
    ...from.values,
    ...refusals.values,
    ':to': transition.to,
    ':attempts': decision.attempts,
    ':error': error.slice(0, 1_000),
    ':now': now.toISOString(),
  };
  // Where the sender left it: SENT under its own mark (a refused send), or PENDING at the attempts it read.
  const leftThere: {
    readonly condition: string;
    readonly values: Record<string, string | number>;
    readonly names: Record<string, string>;
    readonly undoMark: string;
  } =
    markedAt === undefined
      ? {
          condition: `${messageExists} AND ${from.expression} AND (#attempts = :seen OR attribute_not_exists(#attempts))`,
          values: { ':seen': seenAttempts },
          names: {},
          undoMark: '',
        }
      : {
          condition: `${messageExists} AND ${from.expression} AND #sentAt = :markedAt`,
          values: { ':markedAt': markedAt },
          names: { '#sentAt': 'sentAt', '#confirmBy': 'confirmBy' },
          undoMark: ', #sentAt, #confirmBy',
        };
  const refused =
    markedAt === undefined
      ? undefined
      : appendHistory({
          at: now.toISOString(),
          event: decision.kind === 'retry' ? HistoryEvent.SEND_REFUSED : HistoryEvent.FAILED,
          from: MessageStatus.SENT,
          to: transition.to,
          reason: error,
          ...(context.by === undefined ? {} : { by: context.by }),
        });
  if (decision.kind === 'retry') {
    return {
      Key: { [OUTBOX_KEYS.partitionKey]: messageId },
      UpdateExpression: `SET #status = :to, #attempts = :attempts, #lastError = :error, #updatedAt = :now, #nextAttemptAt = :next${refusals.set}${
        refused === undefined ? '' : `, ${refused.set}`
      } REMOVE #leaseOwner, #leaseUntil${leftThere.undoMark}`,
      ConditionExpression: leftThere.condition,
      ExpressionAttributeNames: { ...names, ...refusals.names, ...leftThere.names, ...refused?.names },
      ExpressionAttributeValues: {
        ...values,
        ...leftThere.values,
        ...refused?.values,
        ':next': decision.nextAttemptAt.toISOString(),
      },
    };
  }
  const history =
    refused ??
    appendHistory({
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
    UpdateExpression: `SET #status = :to, #attempts = :attempts, #lastError = :error, #updatedAt = :now, #failedAt = :now, #attentionKey = :attentionKey, ${history.set}${refusals.set} REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil${leftThere.undoMark}`,
    ConditionExpression: leftThere.condition,
    ExpressionAttributeNames: {
      ...names,
      ...refusals.names,
      ...leftThere.names,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#failedAt': 'failedAt',
      '#attentionKey': OUTBOX_KEYS.attentionIndex.partitionKey,
      ...history.names,
    },
    ExpressionAttributeValues: {
      ...values,
      ...leftThere.values,
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
 * `update` made conditional also on the message's topic being one of `topics` (at most 100, DynamoDB's bound on
 * IN): a receipt confirms only a message of a topic the subscriber that signed it is declared for.
 */
export function onlyOfTopics(update: OutboxUpdate, topics: readonly string[]): OutboxUpdate {
  const values = Object.fromEntries(topics.map((topic, n) => [`:onlyTopic${n}`, topic]));
  return {
    ...update,
    ConditionExpression: `${update.ConditionExpression} AND #topic IN (${Object.keys(values).join(', ')})`,
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#topic': 'topic' },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ...values },
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
export const CONFIRMATION_ATTRIBUTES: readonly string[] = /* @__PURE__ */ confirmationAttributes();

/**
 * The {@link CONFIRMATION_ATTRIBUTES}, read off the two updates. A function called as pure: only the CDK construct
 * reads them, so a Lambda bundle that never confirms (the admin's) drops both updates with it.
 */
function confirmationAttributes(): string[] {
  return [
    ...new Set(
      [confirmUpdate, appliedAfterCancelUpdate].flatMap((update) =>
        Object.values(
          update({ messageId: '-', now: new Date(0), outcome: '-' }).ExpressionAttributeNames ?? {},
        ),
      ),
    ),
  ].sort();
}

/** The `ReturnValues` a confirmation asks for: none (a failed condition returns the item by itself). */
export const CONFIRMATION_RETURN_VALUES = 'NONE';
