import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import {
  attentionKeyOf,
  attentionPartitions,
  DEFAULT_DUE_SHARDS,
  dueShardKeys,
  dueShardOf,
  newOutboxItem,
} from '../../../shared/outbox/outbox-item.ts';
import { envelope, FIXED_NOW, testMessageId } from '../../support/factories.ts';

describe('dueShardOf', () => {
  it('is stable for a message id', () => {
    expect(dueShardOf(testMessageId(5))).toBe(dueShardOf(testMessageId(5)));
  });

  it('always names one of the partitions the sweeper reads: a message id a plain shard, a delivery its subscriber’s', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((id) => !id.includes('#')),
        fc.option(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), { nil: undefined }),
        fc.integer({ min: 1, max: 64 }),
        (id, subscriber, shards) => {
          const key = subscriber === undefined ? id : deliveryIdOf(id, subscriber);
          const partitions = dueShardKeys(shards, subscriber === undefined ? [] : [subscriber]);
          expect(partitions).toContain(dueShardOf(key, shards));
          expect(dueShardKeys(shards, [])).toContain(dueShardOf(id, shards));
        },
      ),
    );
  });

  it('files a delivery under its subscriber’s partition of the shard its key spreads to, and lists those after the plain ones', () => {
    const key = deliveryIdOf(testMessageId(5), 'loyalty');
    expect(dueShardOf(key, 4)).toMatch(/^[0-3]#loyalty$/);
    expect(dueShardKeys(2, ['inventory', 'loyalty'])).toEqual([
      '0',
      '1',
      '0#inventory',
      '1#inventory',
      '0#loyalty',
      '1#loyalty',
    ]);
    // The attention index stays one partition per shard and status: an operator reads it, not the sweeper.
    expect(attentionKeyOf('FAILED', key, 4)).toMatch(/^FAILED#[0-3]$/);
  });

  it('spreads message ids over every shard', () => {
    const used = new Set(Array.from({ length: 200 }, (_, i) => dueShardOf(testMessageId(i))));

    expect(used.size).toBe(DEFAULT_DUE_SHARDS);
  });
});

describe('newOutboxItem', () => {
  it('is PENDING with no attempts and due after the stream grace period', () => {
    const message = envelope();

    expect(newOutboxItem(message, { now: FIXED_NOW, streamGraceMs: 10_000, dueShards: 4 })).toEqual({
      ...message,
      status: 'PENDING',
      attempts: 0,
      nextAttemptAt: '2024-05-01T12:00:10.000Z',
      dueShard: dueShardOf(message.messageId, 4),
      updatedAt: FIXED_NOW.toISOString(),
    });
  });
});

describe('the attention index keys', () => {
  it('file a message under its status and its due shard', () => {
    const id = testMessageId(9);

    expect(attentionKeyOf('FAILED', id, 4)).toBe(`FAILED#${dueShardOf(id, 4)}`);
    expect(attentionKeyOf('CANCELLED', id)).toBe(`CANCELLED#${dueShardOf(id)}`);
  });

  it('list one partition per due shard, so every filed message is in one of them', () => {
    expect(attentionPartitions('FAILED', 3)).toEqual(['FAILED#0', 'FAILED#1', 'FAILED#2']);
    expect(dueShardKeys(3)).toEqual(['0', '1', '2']);
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 64 }), (id, shards) => {
        expect(attentionPartitions('CANCELLED', shards)).toContain(attentionKeyOf('CANCELLED', id, shards));
      }),
    );
  });

  it('refuse a shard count no sweeper could query', () => {
    expect(() => dueShardKeys(0)).toThrow(RangeError);
    expect(() => attentionPartitions('FAILED', 65)).toThrow(RangeError);
  });
});
