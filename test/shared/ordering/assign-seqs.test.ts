import { describe, expect, it } from 'vitest';
import { counterUpdate } from '../../../shared/aws/sequence-table.ts';
import { InvalidMessageError } from '../../../shared/errors.ts';
import { assignSeqs, countedOrderKeys } from '../../../shared/ordering/assign-seqs.ts';
import type { OrderingByTopic } from '../../../shared/ordering/ordering.ts';
import { envelope, testMessageId } from '../../support/factories.ts';

const ordering: OrderingByTopic = {
  'order.created': { scope: 'order', gapTimeoutMs: 60_000 },
  'order.cancelled': { scope: 'order', gapTimeoutMs: 60_000 },
  'payment.captured': { scope: 'payment', gapTimeoutMs: 60_000 },
};
/** The same topics with scope `order` numbered by the order's version. */
const versioned: OrderingByTopic = {
  ...ordering,
  'order.created': { scope: 'order', gapTimeoutMs: 60_000, sequence: 'aggregate-version' },
  'order.cancelled': { scope: 'order', gapTimeoutMs: 60_000, sequence: 'aggregate-version' },
};
const message = (n: number, topic: string, aggregateId = 'a-1') =>
  envelope({ messageId: testMessageId(n), topic, aggregateId });

describe('assignSeqs', () => {
  it('continues each order key from its counter, in the order given, and says how each counter moves', () => {
    const messages = [
      message(1, 'order.created'),
      message(2, 'payment.captured'),
      message(3, 'order.cancelled'),
      message(4, 'order.created', 'a-2'),
    ];

    const sequenced = assignSeqs(messages, { ordering, lastSeqs: new Map([['order#a-1', 4]]) });

    expect(sequenced.messages.map(({ orderKey, seq }) => ({ orderKey, seq }))).toEqual([
      { orderKey: 'order#a-1', seq: 5 },
      { orderKey: 'payment#a-1', seq: 1 },
      { orderKey: 'order#a-1', seq: 6 },
      { orderKey: 'order#a-2', seq: 1 },
    ]);
    expect(sequenced.counters).toEqual([
      { orderKey: 'order#a-1', from: 4, to: 6 },
      { orderKey: 'payment#a-1', from: undefined, to: 1 },
      { orderKey: 'order#a-2', from: undefined, to: 1 },
    ]);
  });

  it('numbers the messages of a scope numbered by version up to the aggregate’s version, with no counter', () => {
    const sequenced = assignSeqs([message(1, 'order.created'), message(2, 'order.cancelled')], {
      ordering: versioned,
      aggregateVersions: { 'a-1': 7 },
      lastSeqs: new Map([['order#a-1', 2]]),
    });

    expect(sequenced.messages.map((m) => m.seq)).toEqual([6, 7]);
    expect(sequenced.counters).toEqual([]);
  });

  it('numbers a scope from its counter even when the write gives the aggregate’s version: one scope, one source', () => {
    // Two writes of one aggregate, one with its version and one without, in a scope numbered by the counter.
    const first = assignSeqs([message(1, 'order.created')], { ordering, aggregateVersions: { 'a-1': 1 } });
    const second = assignSeqs([message(2, 'order.cancelled')], {
      ordering,
      lastSeqs: new Map([['order#a-1', 1]]),
    });

    expect([first.messages[0]?.seq, second.messages[0]?.seq]).toEqual([1, 2]);
    expect(first.counters).toEqual([{ orderKey: 'order#a-1', from: undefined, to: 1 }]);
  });

  it('refuses a message of a scope numbered by version when the write gives no version for its aggregate', () => {
    expect(() => assignSeqs([message(1, 'order.created')], { ordering: versioned })).toThrow(
      expect.objectContaining({
        name: 'InvalidMessageError',
        path: 'aggregateVersions.a-1',
        message: expect.stringContaining('is required'),
      }),
    );
  });

  it('refuses an ordering whose scope names two seq sources, naming the topics of each', () => {
    const mixed: OrderingByTopic = {
      'order.created': { scope: 'order', gapTimeoutMs: 60_000, sequence: 'aggregate-version' },
      'order.note-added': { scope: 'order', gapTimeoutMs: 60_000 },
    };

    expect(() =>
      assignSeqs([message(1, 'order.created'), message(2, 'order.note-added')], {
        ordering: mixed,
        aggregateVersions: { 'a-1': 1 },
      }),
    ).toThrow(
      /scope 'order' takes its seqs from two sources \(counter: order\.note-added; aggregate-version: order\.created\)/,
    );
  });

  it('returns unordered messages as they are, and leaves the given messages untouched', () => {
    const given = [message(1, 'order.shipped'), message(2, 'order.created')];

    const sequenced = assignSeqs(given, { ordering });

    expect(sequenced.messages[0]).toBe(given[0]);
    expect(given[1]).not.toHaveProperty('seq');
    expect(assignSeqs(given, {}).messages).toEqual(given);
  });

  it("takes a version only from the aggregate's own entry, never from the object's prototype", () => {
    expect(() =>
      assignSeqs([message(1, 'order.created', 'constructor')], {
        ordering: versioned,
        aggregateVersions: { 'a-1': 3 },
      }),
    ).toThrow(expect.objectContaining({ path: 'aggregateVersions.constructor' }));
  });

  it('treats a topic set to "none" as unordered', () => {
    const sequenced = assignSeqs([message(1, 'order.created')], { ordering: { 'order.created': 'none' } });

    expect(sequenced.messages[0]).not.toHaveProperty('seq');
    expect(sequenced.counters).toEqual([]);
  });
});

describe('countedOrderKeys', () => {
  it('lists the order keys numbered from a counter, once each, in the order their first message came', () => {
    const messages = [
      message(1, 'order.created', 'a-2'),
      message(2, 'order.created', 'a-1'),
      message(3, 'order.cancelled', 'a-2'),
      message(4, 'payment.captured', 'a-1'),
    ];

    expect(countedOrderKeys(messages, { ordering, aggregateVersions: { 'a-1': 1 } })).toEqual([
      'order#a-2',
      'order#a-1',
      'payment#a-1',
    ]);
    expect(
      countedOrderKeys(messages, { ordering: versioned, aggregateVersions: { 'a-1': 1, 'a-2': 2 } }),
    ).toEqual(['payment#a-1']);
  });

  it('refuses what assignSeqs refuses, before any counter is read', () => {
    expect(() => countedOrderKeys([envelope({ messageId: testMessageId(1), seq: 2 })], { ordering })).toThrow(
      InvalidMessageError,
    );
  });
});

describe('counterUpdate', () => {
  it('creates the counter only if no writer did since the read', () => {
    expect(counterUpdate('sequences', { orderKey: 'order#a-1', from: undefined, to: 2 })).toEqual({
      Update: {
        TableName: 'sequences',
        Key: { orderKey: 'order#a-1' },
        UpdateExpression: 'SET #lastSeq = :to',
        ConditionExpression: 'attribute_not_exists(#orderKey)',
        ExpressionAttributeNames: { '#orderKey': 'orderKey', '#lastSeq': 'lastSeq' },
        ExpressionAttributeValues: { ':to': 2 },
      },
    });
  });

  it('moves the counter only if it still holds the seq read', () => {
    expect(counterUpdate('sequences', { orderKey: 'order#a-1', from: 4, to: 5 }).Update).toMatchObject({
      ConditionExpression: '#lastSeq = :from',
      ExpressionAttributeNames: { '#lastSeq': 'lastSeq' },
      ExpressionAttributeValues: { ':to': 5, ':from': 4 },
    });
  });
});
