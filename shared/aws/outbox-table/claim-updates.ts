import { MessageStatus } from '../../message/message-status.ts';
import { HistoryEvent } from '../../outbox/history.ts';
import type { ChangeContext, Claim, Postponement, Release, Unreadable } from '../../outbox/outbox-changes.ts';
import { attentionKeyOf } from '../../outbox/outbox-item.ts';
import { TRANSITIONS } from '../../outbox/state-machine.ts';
import { appendHistory } from './history-append.ts';
import { OUTBOX_KEYS } from './outbox-keys.ts';
import type { OutboxUpdate } from './transition-updates.ts';

const key = (messageId: string) => ({ [OUTBOX_KEYS.partitionKey]: messageId });

/**
 * Claims a due message for one sweeper (an in-flight lease with a timeout): sets the lease and moves
 * `nextAttemptAt` to its end. Conditional on the message still being in `status` and still due, so of two
 * sweepers that read the same due entry only the first claim succeeds; a crashed owner's lease simply falls
 * due again.
 */
export function claimUpdate({ messageId, status, owner, now, leaseMs, early }: Claim): OutboxUpdate {
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  const statuses = status === undefined ? WITH_WORK_LEFT : [status];
  const expected = Object.fromEntries(statuses.map((value, index) => [`:status${index}`, value]));
  const inStatus = `#status IN (${Object.keys(expected).join(', ')})`;
  const isDue = '#nextAttemptAt <= :now';
  // A live claim moved nextAttemptAt to its end, so "due" already excludes it; early, the lease is checked itself.
  const isUnclaimed = '(attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now)';
  return {
    Key: key(messageId),
    UpdateExpression: 'SET #leaseOwner = :owner, #leaseUntil = :leaseUntil, #nextAttemptAt = :leaseUntil',
    ConditionExpression:
      early === true ? `${inStatus} AND (${isDue} OR ${isUnclaimed})` : `${inStatus} AND ${isDue}`,
    ExpressionAttributeNames: {
      '#status': 'status',
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
    },
    ExpressionAttributeValues: {
      ...expected,
      ':owner': owner,
      ':leaseUntil': leaseUntil,
      ':now': now.toISOString(),
    },
  };
}

/**
 * Files a SENT message that fell due before its confirmation deadline under that deadline, in one write and
 * without a claim: a SENT message keeps the `nextAttemptAt` it had when it was sent, so one still unconfirmed after
 * the stream grace comes up due early. Conditional on it still being SENT with that deadline and due (not leased),
 * so a confirmation, a resend or another sweeper's claim in between wins.
 */
export function postponeUpdate({ messageId, confirmBy, now }: Postponement): OutboxUpdate {
  return {
    Key: key(messageId),
    UpdateExpression: 'SET #nextAttemptAt = :confirmBy',
    ConditionExpression: '#status = :sent AND #confirmBy = :confirmBy AND #nextAttemptAt <= :now',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#confirmBy': 'confirmBy',
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
    },
    ExpressionAttributeValues: {
      ':sent': MessageStatus.SENT,
      ':confirmBy': confirmBy,
      ':now': now.toISOString(),
    },
  };
}

/** Statuses of messages that can be due: the ones the sweeper may claim. */
const WITH_WORK_LEFT: readonly MessageStatus[] = [MessageStatus.PENDING, MessageStatus.SENT];

/**
 * → FAILED for a claimed message whose stored item cannot be read (written by another tool, or damaged): no
 * retry can send it, so it leaves the due index for the attention index with the reason and waits for an
 * operator. Conditional on the claim, so it never touches a message someone else advanced.
 */
export function failUnreadableUpdate(
  { messageId, owner, now, reason }: Unreadable,
  context: ChangeContext = {},
): OutboxUpdate {
  const from = Object.fromEntries(
    TRANSITIONS.failUnreadable.from.map((value, index) => [`:from${index}`, value]),
  );
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.FAILED,
    to: TRANSITIONS.failUnreadable.to,
    reason,
    ...(context.by === undefined ? {} : { by: context.by }),
  });
  return {
    Key: key(messageId),
    UpdateExpression: `SET #status = :to, #lastError = :reason, #updatedAt = :now, #failedAt = :now, #attentionKey = :attentionKey, ${history.set} REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil`,
    ConditionExpression: `#status IN (${Object.keys(from).join(', ')}) AND #leaseOwner = :owner`,
    ExpressionAttributeNames: {
      '#status': 'status',
      '#lastError': 'lastError',
      '#updatedAt': 'updatedAt',
      '#failedAt': 'failedAt',
      '#attentionKey': OUTBOX_KEYS.attentionIndex.partitionKey,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      ...history.names,
    },
    ExpressionAttributeValues: {
      ...from,
      ':to': TRANSITIONS.failUnreadable.to,
      ':reason': reason.slice(0, 1_000),
      ':now': now.toISOString(),
      ':owner': owner,
      ':attentionKey': attentionKeyOf(MessageStatus.FAILED, messageId, context.dueShards),
      ...history.values,
    },
  };
}

/** A SENT message whose claimant found the downstream never received it. */
export interface Requeue {
  readonly messageId: string;
  readonly owner: string;
  readonly now: Date;
  /** Recorded as the history entry's `by`. */
  readonly by?: string;
}

/** Why reconciliation requeues a message, in its `lastError` and history. */
const NOT_CONFIRMED = 'not confirmed by the downstream before the deadline; resending';

/**
 * SENT → PENDING when reconciliation finds the downstream never received the message: a new delivery
 * round (attempts back to 0, `resends` + 1, so the send-failure budget is not spent by a slow consumer),
 * still leased to the claimant so it can resend without a second claim.
 */
export function requeueUpdate({ messageId, owner, now, by }: Requeue): OutboxUpdate {
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.REQUEUED,
    from: TRANSITIONS.requeue.from[0],
    to: TRANSITIONS.requeue.to,
    reason: NOT_CONFIRMED,
    ...(by === undefined ? {} : { by }),
  });
  return {
    Key: key(messageId),
    UpdateExpression: `SET #status = :to, #updatedAt = :now, #lastError = :reason, #attempts = :zero, #resends = if_not_exists(#resends, :zero) + :one, ${history.set}`,
    ConditionExpression: '#status = :from AND #leaseOwner = :owner',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#updatedAt': 'updatedAt',
      '#lastError': 'lastError',
      '#leaseOwner': 'leaseOwner',
      '#attempts': 'attempts',
      '#resends': 'resends',
      ...history.names,
    },
    ExpressionAttributeValues: {
      ':from': TRANSITIONS.requeue.from[0],
      ':to': TRANSITIONS.requeue.to,
      ':now': now.toISOString(),
      ':owner': owner,
      ':zero': 0,
      ':one': 1,
      ':reason': NOT_CONFIRMED,
      ...history.values,
    },
  };
}

/**
 * Gives a claimed message back without changing its status, due again at `nextAttemptAt` (e.g. the
 * downstream could not be asked this time).
 */
export function releaseUpdate({ messageId, owner, now, nextAttemptAt }: Release): OutboxUpdate {
  return {
    Key: key(messageId),
    UpdateExpression: 'SET #nextAttemptAt = :next, #updatedAt = :now REMOVE #leaseOwner, #leaseUntil',
    ConditionExpression: '#leaseOwner = :owner',
    ExpressionAttributeNames: {
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#updatedAt': 'updatedAt',
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
    },
    ExpressionAttributeValues: {
      ':next': nextAttemptAt.toISOString(),
      ':now': now.toISOString(),
      ':owner': owner,
    },
  };
}
