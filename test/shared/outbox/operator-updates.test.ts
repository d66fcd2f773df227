import { describe, expect, it } from 'vitest';
import { cancelUpdate, replayUpdate } from '../../../shared/aws/outbox-table/operator-updates.ts';
import type { OutboxUpdate } from '../../../shared/aws/outbox-table/transition-updates.ts';
import { applyUpdate, compileCondition, type Item } from '../../../shared/memory/expressions.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { dueShardOf } from '../../../shared/outbox/outbox-item.ts';
import { FIXED_NOW, outboxItem, testMessageId } from '../../support/factories.ts';

const messageId = testMessageId(11);
const LATER = new Date(FIXED_NOW.getTime() + 3_600_000);
const move = { messageId, now: LATER, by: 'local:ana', reason: 'inventory fixed (INC-42)', dueShards: 4 };

function contextOf(update: OutboxUpdate) {
  return {
    ...(update.ExpressionAttributeNames ? { names: update.ExpressionAttributeNames } : {}),
    ...(update.ExpressionAttributeValues ? { values: update.ExpressionAttributeValues } : {}),
  };
}

const accepts = (update: OutboxUpdate, item: Item) =>
  compileCondition(update.ConditionExpression ?? '', contextOf(update))(item);
const updated = (update: OutboxUpdate, item: Item) =>
  applyUpdate(item, update.UpdateExpression ?? '', contextOf(update));

function expectWellFormed(update: OutboxUpdate): void {
  const text = `${update.UpdateExpression} ${update.ConditionExpression ?? ''}`;
  expect(new Set(Object.keys(update.ExpressionAttributeNames ?? {}))).toEqual(new Set(text.match(/#\w+/g)));
  expect(new Set(Object.keys(update.ExpressionAttributeValues ?? {}))).toEqual(new Set(text.match(/:\w+/g)));
  expect(update.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
}

/** A FAILED message as the relay leaves it: out of the due index, in the attention index, with its history. */
const failed = (): Item => {
  const { dueShard: _shard, nextAttemptAt: _next, ...item } = outboxItem({ messageId });
  return {
    ...item,
    status: MessageStatus.FAILED,
    attempts: 10,
    resends: 2,
    lastError: 'QueueDoesNotExist',
    attentionKey: `FAILED#${dueShardOf(messageId, 4)}`,
    history: [{ at: FIXED_NOW.toISOString(), event: 'FAILED', from: 'PENDING', to: 'FAILED', by: 'relay' }],
  };
};

describe('replayUpdate', () => {
  it('is well formed', () => {
    expectWellFormed(replayUpdate({ ...move, from: MessageStatus.FAILED }));
  });

  it('starts a FAILED message afresh: PENDING, attempts and rounds 0, due now in its due shard, out of the attention index', () => {
    const replayed = updated(replayUpdate({ ...move, from: MessageStatus.FAILED }), failed());

    expect(replayed).toMatchObject({
      status: MessageStatus.PENDING,
      attempts: 0,
      resends: 0,
      nextAttemptAt: LATER.toISOString(),
      dueShard: dueShardOf(messageId, 4),
      updatedAt: LATER.toISOString(),
    });
    for (const gone of ['attentionKey', 'expiresAt', 'leaseOwner', 'lastError', 'confirmedAt', 'outcome'])
      expect(replayed).not.toHaveProperty(gone);
  });

  it('appends a REPLAYED entry with who, why and from where, after the earlier entries', () => {
    const replayed = updated(replayUpdate({ ...move, from: MessageStatus.FAILED }), failed());

    expect(replayed.history).toEqual([
      expect.objectContaining({ event: 'FAILED' }),
      {
        at: LATER.toISOString(),
        event: 'REPLAYED',
        from: 'FAILED',
        to: 'PENDING',
        by: 'local:ana',
        reason: 'inventory fixed (INC-42)',
      },
    ]);
  });

  it('undoes a cancel: a CANCELLED message no longer expires and its recorded late outcome is dropped', () => {
    const cancelled = {
      ...failed(),
      status: MessageStatus.CANCELLED,
      attentionKey: `CANCELLED#${dueShardOf(messageId, 4)}`,
      expiresAt: 1_900_000_000,
      confirmedAt: FIXED_NOW.toISOString(),
      outcome: 'APPLIED',
    };
    const update = replayUpdate({ ...move, from: MessageStatus.CANCELLED });

    expect(accepts(update, cancelled)).toBe(true);
    const replayed = updated(update, cancelled);
    expect(replayed.status).toBe(MessageStatus.PENDING);
    expect(replayed).not.toHaveProperty('expiresAt');
    expect(replayed).not.toHaveProperty('outcome');
  });

  it('holds only while the message is still in the status the operator saw', () => {
    const update = replayUpdate({ ...move, from: MessageStatus.FAILED });

    expect(accepts(update, failed())).toBe(true);
    expect(accepts(update, { ...failed(), status: MessageStatus.CONFIRMED })).toBe(false);
    expect(accepts(update, { ...failed(), status: MessageStatus.CANCELLED })).toBe(false);
    expect(accepts(update, {})).toBe(false);
  });

  it('cannot be built from a status replay does not leave', () => {
    for (const from of [MessageStatus.PENDING, MessageStatus.SENT, MessageStatus.CONFIRMED])
      expect(() => replayUpdate({ ...move, from })).toThrow(RangeError);
  });
});

describe('cancelUpdate', () => {
  const pending = (): Item => ({ ...outboxItem({ messageId }), leaseOwner: 'sweeper-a', leaseUntil: 'x' });

  it('is well formed', () => {
    expectWellFormed(cancelUpdate({ ...move, from: MessageStatus.PENDING }));
  });

  it('takes a PENDING message out of the due index for good, drops its lease, files it for attention and lets it expire', () => {
    const cancelled = updated(
      cancelUpdate({ ...move, from: MessageStatus.PENDING, retentionDays: 7 }),
      pending(),
    );

    expect(cancelled).toMatchObject({
      status: MessageStatus.CANCELLED,
      cancelledAt: LATER.toISOString(),
      attentionKey: `CANCELLED#${dueShardOf(messageId, 4)}`,
      expiresAt: Math.floor(LATER.getTime() / 1000) + 7 * 86_400,
    });
    for (const gone of ['dueShard', 'nextAttemptAt', 'leaseOwner', 'leaseUntil'])
      expect(cancelled).not.toHaveProperty(gone);
    expect(cancelled.history).toEqual([
      {
        at: LATER.toISOString(),
        event: 'CANCELLED',
        from: 'PENDING',
        to: 'CANCELLED',
        by: 'local:ana',
        reason: 'inventory fixed (INC-42)',
      },
    ]);
  });

  it('moves a FAILED message from FAILED#shard to CANCELLED#shard of the attention index', () => {
    const cancelled = updated(cancelUpdate({ ...move, from: MessageStatus.FAILED }), failed());

    expect(cancelled.attentionKey).toBe(`CANCELLED#${dueShardOf(messageId, 4)}`);
    expect(cancelled.expiresAt).toBe(Math.floor(LATER.getTime() / 1000) + 30 * 86_400);
  });

  it('holds only while the message is still in the status the operator saw (a SENT one is never cancelled)', () => {
    const update = cancelUpdate({ ...move, from: MessageStatus.PENDING });

    expect(accepts(update, pending())).toBe(true);
    expect(accepts(update, { ...pending(), status: MessageStatus.SENT })).toBe(false);
    expect(() => cancelUpdate({ ...move, from: MessageStatus.SENT })).toThrow(RangeError);
    expect(() => cancelUpdate({ ...move, from: MessageStatus.CANCELLED })).toThrow(RangeError);
  });
});
