import { describe, expect, it } from 'vitest';
import { replayUpdate } from '../../../shared/aws/outbox-table/operator-updates.ts';
import type { OutboxUpdate } from '../../../shared/aws/outbox-table/transition-updates.ts';
import { applyUpdate, type Item } from '../../../shared/memory/expressions.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { deliveryRoundOf, type OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { FIXED_NOW, outboxItem, testMessageId } from '../../support/factories.ts';

const messageId = testMessageId(7);
const move = { messageId, now: FIXED_NOW, by: 'local:ana', reason: 'downstream fixed' };

const replayed = (update: OutboxUpdate, item: Item): Item =>
  applyUpdate(item, update.UpdateExpression ?? '', {
    ...(update.ExpressionAttributeNames ? { names: update.ExpressionAttributeNames } : {}),
    ...(update.ExpressionAttributeValues ? { values: update.ExpressionAttributeValues } : {}),
  });

const failed = (fields: Partial<OutboxItem> = {}): Item => ({
  ...outboxItem({ messageId }),
  status: MessageStatus.FAILED,
  ...fields,
});

describe('an operator replay and the delivery round', () => {
  it('counts the first replay of a message that has none as 1', () => {
    expect(replayed(replayUpdate({ ...move, from: MessageStatus.FAILED }), failed())).toMatchObject({
      replays: 1,
      resends: 0,
    });
  });

  it('adds one to replays each time and never resets it, while resends start again at 0', () => {
    const update = replayUpdate({ ...move, from: MessageStatus.FAILED });
    const once = replayed(update, failed({ resends: 3 }));
    const twice = replayed(update, { ...once, status: MessageStatus.FAILED, resends: 2 });

    expect(once).toMatchObject({ replays: 1, resends: 0 });
    expect(twice).toMatchObject({ replays: 2, resends: 0 });
  });

  it('moves a replayed CANCELLED message without resends on to the next delivery round', () => {
    const cancelled = failed({ status: MessageStatus.CANCELLED, replays: 2 });
    const after = replayed(replayUpdate({ ...move, from: MessageStatus.CANCELLED }), cancelled);

    expect(deliveryRoundOf(after)).not.toBe(deliveryRoundOf(cancelled));
  });

  it('never repeats a round across replays, although a replay starts resends again at 0', () => {
    const rounds = [
      deliveryRoundOf({}),
      deliveryRoundOf({ resends: 1 }),
      deliveryRoundOf({ resends: 1000 }),
      deliveryRoundOf({ replays: 1 }),
      deliveryRoundOf({ replays: 1, resends: 1 }),
      deliveryRoundOf({ replays: 2 }),
    ];

    expect(new Set(rounds).size).toBe(rounds.length);
    expect(deliveryRoundOf({})).toBe(0);
  });
});
