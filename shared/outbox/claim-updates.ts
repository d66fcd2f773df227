import type { MessageStatus } from '../message/message-status.ts';
import { OUTBOX_KEYS } from './outbox-item.ts';
import { TRANSITIONS } from './state-machine.ts';
import type { OutboxUpdate } from './transition-updates.ts';

const key = (messageId: string) => ({ [OUTBOX_KEYS.partitionKey]: messageId });

/** A sweeper's claim on one due message. */
export interface Claim {
  readonly messageId: string;
  /** The status the message was read in; the claim holds only if it is still in it. */
  readonly status: MessageStatus;
  /** Unique per sweeper run: the lease owner. */
  readonly owner: string;
  readonly now: Date;
  /** How long the claim lasts; a crashed owner's messages fall due again after it. */
  readonly leaseMs: number;
}

/** A claimed message given back without a status change, due again at `nextAttemptAt`. */
export interface Release {
  readonly messageId: string;
  readonly owner: string;
  readonly now: Date;
  readonly nextAttemptAt: Date;
}

/**
 * Claims a due message for one sweeper (an in-flight lease with a timeout): sets the lease and moves
 * `nextAttemptAt` to its end. Conditional on the message still being in `status` and still due, so of two
 * sweepers that read the same due entry only the first claim succeeds; a crashed owner's lease simply falls
 * due again.
 */
export function claimUpdate({ messageId, status, owner, now, leaseMs }: Claim): OutboxUpdate {
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  return {
    Key: key(messageId),
    UpdateExpression: 'SET #leaseOwner = :owner, #leaseUntil = :leaseUntil, #nextAttemptAt = :leaseUntil',
    ConditionExpression: '#status = :status AND #nextAttemptAt <= :now',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
    },
    ExpressionAttributeValues: {
      ':status': status,
      ':owner': owner,
      ':leaseUntil': leaseUntil,
      ':now': now.toISOString(),
    },
  };
}

/**
 * SENT → PENDING when reconciliation finds the downstream never received the message: a new delivery
 * round (attempts back to 0, `resends` + 1, so the send-failure budget is not spent by a slow consumer),
 * still leased to the claimant so it can resend without a second claim.
 */
export function requeueUpdate(messageId: string, owner: string, now: Date): OutboxUpdate {
  return {
    Key: key(messageId),
    UpdateExpression:
      'SET #status = :to, #updatedAt = :now, #lastError = :reason, #attempts = :zero, #resends = if_not_exists(#resends, :zero) + :one',
    ConditionExpression: '#status = :from AND #leaseOwner = :owner',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#updatedAt': 'updatedAt',
      '#lastError': 'lastError',
      '#leaseOwner': 'leaseOwner',
      '#attempts': 'attempts',
      '#resends': 'resends',
    },
    ExpressionAttributeValues: {
      ':from': TRANSITIONS.requeue.from[0],
      ':to': TRANSITIONS.requeue.to,
      ':now': now.toISOString(),
      ':owner': owner,
      ':zero': 0,
      ':one': 1,
      ':reason': 'not confirmed by the downstream before the deadline; resending',
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
