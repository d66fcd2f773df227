import type { MessageStatus } from '../../message/message-status.ts';
import { HistoryEvent } from '../../outbox/history.ts';
import type { CancelMove, OperatorMove } from '../../outbox/outbox-changes.ts';
import { attentionKeyOf, dueShardOf } from '../../outbox/outbox-item.ts';
import { TRANSITIONS } from '../../outbox/state-machine.ts';
import { appendHistory } from './history-append.ts';
import { OUTBOX_KEYS } from './outbox-keys.ts';
import { expiresAfter, type OutboxUpdate } from './transition-updates.ts';

function assertMoveFrom(name: 'replay' | 'cancel', from: MessageStatus): void {
  if (!(TRANSITIONS[name].from as readonly MessageStatus[]).includes(from)) {
    throw new RangeError(`${name} does not start from ${from}`);
  }
}

/**
 * The attribute a skip sets on the message it skipped: the consumers' cursors moved past it, so it must never be
 * replayed (a copy would be taken for a duplicate and never applied).
 */
export const SKIPPED_AT_ATTRIBUTE = 'skippedAt';

/**
 * FAILED or CANCELLED → PENDING: a fresh start (attempts, resends and refusals 0), due at once in the due index,
 * out of the attention index, no longer expiring; `replays` goes up by one and is never reset, so that the
 * replay's delivery round (`deliveryRoundOf`), which a FIFO deduplication id carries, does not start again from 0.
 * The outcome of a delivery recorded after a cancel is dropped:
 * the history keeps it, and the replay's own confirmation brings the current one. Conditional on `from`, and on
 * the message never having been skipped.
 */
export function replayUpdate({ messageId, from, now, by, reason, dueShards }: OperatorMove): OutboxUpdate {
  assertMoveFrom('replay', from);
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.REPLAYED,
    from,
    to: TRANSITIONS.replay.to,
    by,
    reason,
  });
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #status = :to, #attempts = :zero, #resends = :zero, #refusals = :zero, #nextAttemptAt = :now, #dueShard = :shard, #updatedAt = :now, ${history.set} REMOVE #attentionKey, #expiresAt, #leaseOwner, #leaseUntil, #lastError, #confirmedAt, #outcome ADD #replays :one`,
    // Never a skipped message: a skip landing between the operator's read and this write makes it fail.
    ConditionExpression: '#status = :from AND attribute_not_exists(#skippedAt)',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#skippedAt': SKIPPED_AT_ATTRIBUTE,
      '#attempts': 'attempts',
      '#resends': 'resends',
      '#refusals': 'refusals',
      '#replays': 'replays',
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#updatedAt': 'updatedAt',
      '#attentionKey': OUTBOX_KEYS.attentionIndex.partitionKey,
      '#expiresAt': OUTBOX_KEYS.ttlAttribute,
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      '#lastError': 'lastError',
      '#confirmedAt': 'confirmedAt',
      '#outcome': 'outcome',
      ...history.names,
    },
    ExpressionAttributeValues: {
      ':from': from,
      ':to': TRANSITIONS.replay.to,
      ':zero': 0,
      ':one': 1,
      ':now': now.toISOString(),
      ':shard': dueShardOf(messageId, dueShards),
      ...history.values,
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/**
 * PENDING or FAILED → CANCELLED: out of the due index (the sweeper never sends it again), its lease dropped (so a
 * sweeper that claimed it cannot mark it SENT, and sends nothing), into the attention index, and expiring after the
 * retention like a CONFIRMED message. A copy handed to SQS before it (an earlier delivery round's) may still be
 * applied; its confirmation is then recorded as APPLIED_AFTER_CANCEL. Conditional on `from`.
 */
export function cancelUpdate({
  messageId,
  from,
  now,
  by,
  reason,
  dueShards,
  retentionDays,
  skip,
}: CancelMove): OutboxUpdate {
  assertMoveFrom('cancel', from);
  const history = appendHistory({
    at: now.toISOString(),
    event: HistoryEvent.CANCELLED,
    from,
    to: TRANSITIONS.cancel.to,
    by,
    reason,
  });
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: messageId },
    UpdateExpression: `SET #status = :to, #updatedAt = :now, #cancelledAt = :now, #attentionKey = :attentionKey, #expiresAt = :expiresAt, ${history.set}${
      skip === true ? ', #skippedAt = :now' : ''
    } REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil`,
    ConditionExpression: '#status = :from',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#updatedAt': 'updatedAt',
      '#cancelledAt': 'cancelledAt',
      ...(skip === true ? { '#skippedAt': SKIPPED_AT_ATTRIBUTE } : {}),
      '#attentionKey': OUTBOX_KEYS.attentionIndex.partitionKey,
      '#expiresAt': OUTBOX_KEYS.ttlAttribute,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      ...history.names,
    },
    ExpressionAttributeValues: {
      ':from': from,
      ':to': TRANSITIONS.cancel.to,
      ':now': now.toISOString(),
      ':attentionKey': attentionKeyOf(TRANSITIONS.cancel.to, messageId, dueShards),
      ':expiresAt': expiresAfter(now, retentionDays),
      ...history.values,
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}
