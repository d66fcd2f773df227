import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  causeOf,
  type FailedDelivery,
  groupByCause,
  maskVariables,
  membersOf,
} from '../../../../shared/cli/console/cause-groups.ts';

const delivery = (overrides: Partial<FailedDelivery> & { readonly messageId: string }): FailedDelivery => ({
  topic: 'order.created',
  aggregateId: 'order-1',
  createdAt: '2026-12-01T04:00:00.000Z',
  updatedAt: '2026-12-01T04:00:00.000Z',
  ...overrides,
});

describe('maskVariables', () => {
  it.each([
    ['message 01HWTS3E000000000000000001 refused', 'message <id> refused'],
    ['request 0f8fad5b-d9cb-469f-a165-70867728950e failed', 'request <id> failed'],
    ['sha 9f86d081884c7d659a2feaa0c55ad015 mismatch', 'sha <id> mismatch'],
    ['RequestId: R3Q8ZK2M1XB7 throttled', 'RequestId: <id> throttled'],
    ['after 3 attempts, 1.5 s apart', 'after <n> attempts, <n> s apart'],
    ['at 2026-12-01T04:42:00.379Z', 'at <time>'],
    [
      'arn:aws:sqs:us-east-1:123456789012:OutboxLoyalty-local-Queue',
      'arn:aws:sqs:us-east-<n>:<n>:OutboxLoyalty-local-Queue',
    ],
    ['  two\n  lines  ', 'two lines'],
  ])('%s → %s', (text, masked) => {
    expect(maskVariables(text)).toBe(masked);
  });

  it('keeps words, names and punctuation', () => {
    expect(maskVariables('QueueDoesNotExist: The specified queue does not exist.')).toBe(
      'QueueDoesNotExist: The specified queue does not exist.',
    );
  });

  it('gives the same text for messages that differ only in their ids and numbers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 0, max: 1e9 }), (a, b) => {
        expect(maskVariables(`order ${a} rejected after ${b} tries`)).toBe(
          maskVariables('order 1 rejected after 2 tries'),
        );
      }),
      { seed: 21, numRuns: 200 },
    );
  });
});

describe('causeOf', () => {
  it('reads the kind from "Name: message", as the library records an error', () => {
    expect(causeOf('InternalError: rejected by the test')).toMatchObject({
      kind: 'InternalError',
      message: 'rejected by the test',
    });
  });

  it('takes text without a name for the message, and no text for no error recorded', () => {
    expect(causeOf('no confirmation after 10 attempts')).toMatchObject({
      kind: '',
      message: 'no confirmation after <n> attempts',
    });
    expect(causeOf(undefined)).toMatchObject({ kind: '', message: 'no error recorded' });
    expect(causeOf('   ').id).toBe(causeOf(undefined).id);
  });

  it('gives one id per cause, and another to another kind with the same message', () => {
    expect(causeOf('InternalError: queue 1 down').id).toBe(causeOf('InternalError: queue 2 down').id);
    expect(causeOf('InternalError: queue 1 down').id).not.toBe(
      causeOf('ServiceUnavailable: queue 1 down').id,
    );
    expect(causeOf('InternalError: queue 1 down').id).toMatch(/^[\w-]{16}$/);
  });
});

describe('groupByCause', () => {
  it('counts each cause with its first and last failure, topics and subscribers, the largest group first', () => {
    const groups = groupByCause([
      delivery({
        messageId: 'm1',
        subscriber: 'loyalty',
        lastError: 'InternalError: shard 7 refused',
        updatedAt: '2026-12-01T04:05:00Z',
      }),
      delivery({
        messageId: 'm2',
        subscriber: 'inventory',
        lastError: 'InternalError: shard 9 refused',
        updatedAt: '2026-12-01T04:01:00Z',
        topic: 'order.cancelled',
      }),
      delivery({
        messageId: 'm3',
        subscriber: 'loyalty',
        lastError: 'InternalError: shard 2 refused',
        updatedAt: '2026-12-01T04:09:00Z',
      }),
      delivery({ messageId: 'm4', lastError: 'QueueDoesNotExist: gone' }),
    ]);

    expect(groups).toEqual([
      expect.objectContaining({
        kind: 'InternalError',
        message: 'shard <n> refused',
        count: 3,
        firstAt: '2026-12-01T04:01:00Z',
        lastAt: '2026-12-01T04:09:00Z',
        topics: ['order.cancelled', 'order.created'],
        subscribers: ['inventory', 'loyalty'],
        example: { messageId: 'm1', subscriber: 'loyalty', lastError: 'InternalError: shard 7 refused' },
      }),
      expect.objectContaining({ kind: 'QueueDoesNotExist', count: 1, subscribers: [] }),
    ]);
  });

  it('puts every delivery in exactly one group', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            n: fc.nat(50),
            kind: fc.constantFrom('A', 'B', 'C'),
            error: fc.option(fc.string(), { nil: undefined }),
          }),
          {
            maxLength: 60,
          },
        ),
        (rows) => {
          const deliveries = rows.map((row, index) =>
            delivery({
              messageId: `m${index}`,
              ...(row.error === undefined ? {} : { lastError: `${row.kind}Error: ${row.error} ${row.n}` }),
            }),
          );
          const groups = groupByCause(deliveries);
          expect(groups.reduce((sum, group) => sum + group.count, 0)).toBe(deliveries.length);
          for (const group of groups) expect(membersOf(deliveries, group.id)).toHaveLength(group.count);
        },
      ),
      { seed: 21, numRuns: 100 },
    );
  });
});

describe('membersOf', () => {
  it("lists a cause's deliveries oldest first, as a replay takes them", () => {
    const deliveries = [
      delivery({
        messageId: 'b',
        subscriber: 'loyalty',
        lastError: 'E: x 1',
        createdAt: '2026-12-01T04:02:00Z',
      }),
      delivery({
        messageId: 'a',
        subscriber: 'loyalty',
        lastError: 'E: x 2',
        createdAt: '2026-12-01T04:03:00Z',
      }),
      delivery({
        messageId: 'b',
        subscriber: 'inventory',
        lastError: 'E: x 3',
        createdAt: '2026-12-01T04:02:00Z',
      }),
      delivery({ messageId: 'c', lastError: 'F: y', createdAt: '2026-12-01T04:00:00Z' }),
    ];

    expect(membersOf(deliveries, causeOf('E: x 9').id).map((d) => `${d.messageId}#${d.subscriber}`)).toEqual([
      'b#inventory',
      'b#loyalty',
      'a#loyalty',
    ]);
  });
});
