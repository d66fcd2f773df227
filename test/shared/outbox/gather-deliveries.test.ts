import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryIdOf, subscriberOrderKeyOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { messageStatusOf } from '../../../shared/outbox/delivery-status.ts';
import { gatherDeliveries } from '../../../shared/outbox/gather-deliveries.ts';
import { outboxItem, testMessageId } from '../../support/factories.ts';

const { PENDING, SENT, CONFIRMED, FAILED } = MessageStatus;
const RUNS = { numRuns: 300, seed: 20_260_312 } as const;

/** `subscriber`'s delivery row of message `n`, as the writer stores it, with its own state. */
function delivery(n: number, subscriber: string, state: Record<string, unknown> = {}) {
  const message = outboxItem({ messageId: testMessageId(n), orderKey: 'order#order-1', seq: n });
  return {
    ...message,
    messageId: deliveryIdOf(message.messageId, subscriber),
    orderKey: subscriberOrderKeyOf('order#order-1', subscriber),
    subscriber,
    ...state,
  };
}

describe('gatherDeliveries', () => {
  it('keeps a message stored as one row exactly as it is, without deliveries', () => {
    const row = { messageId: testMessageId(1), topic: 'order.created', status: SENT, attempts: 1, seq: 1 };

    expect(gatherDeliveries([row])).toEqual([row]);
  });

  it("gathers a message's delivery rows into the message, under its own id and order key, with each delivery's own state", () => {
    const inventory = delivery(1, 'inventory', { status: CONFIRMED, attempts: 1, outcome: 'APPLIED' });
    const loyalty = delivery(1, 'loyalty', { status: SENT, attempts: 2, lastError: 'Throttled' });

    const [message, ...others] = gatherDeliveries([loyalty, inventory]);

    expect(others).toEqual([]);
    expect(message).toEqual({
      messageId: testMessageId(1),
      topic: 'order.created',
      aggregateId: 'order-1',
      payload: inventory.payload,
      headers: {},
      createdAt: inventory.createdAt,
      schemaVersion: inventory.schemaVersion,
      orderKey: 'order#order-1',
      seq: 1,
      status: SENT,
      deliveries: [
        {
          subscriber: 'inventory',
          status: CONFIRMED,
          attempts: 1,
          outcome: 'APPLIED',
          nextAttemptAt: inventory.nextAttemptAt,
          dueShard: inventory.dueShard,
          updatedAt: inventory.updatedAt,
        },
        {
          subscriber: 'loyalty',
          status: SENT,
          attempts: 2,
          lastError: 'Throttled',
          nextAttemptAt: loyalty.nextAttemptAt,
          dueShard: loyalty.dueShard,
          updatedAt: loyalty.updatedAt,
        },
      ],
    });
  });

  it.each([
    [[CONFIRMED, CONFIRMED], CONFIRMED],
    [[CONFIRMED, FAILED], FAILED],
    [[FAILED, SENT], SENT],
    [[CONFIRMED, PENDING], PENDING],
  ])('derives the status of a message whose deliveries are %j: %s', (statuses, expected) => {
    const rows = statuses.map((status, index) => delivery(1, `subscriber-${index}`, { status }));

    expect(gatherDeliveries(rows)[0]?.status).toBe(expected);
  });

  it("shows no status for a message when a delivery's status was not read or is not one", () => {
    const unread = {
      messageId: deliveryIdOf(testMessageId(1), 'loyalty'),
      subscriber: 'loyalty',
      topic: 't',
    };
    const odd = delivery(1, 'inventory', { status: 'LOST' });

    const [message] = gatherDeliveries([unread, odd]);

    expect(message).not.toHaveProperty('status');
    expect(message?.deliveries?.map((d) => [d.subscriber, d.status])).toEqual([
      ['inventory', 'LOST'],
      ['loyalty', undefined],
    ]);
  });

  it('reads rows with only some attributes: a delivery row read without its seq or topic is still gathered', () => {
    const rows = [
      { messageId: deliveryIdOf(testMessageId(1), 'loyalty'), subscriber: 'loyalty', status: SENT },
      { messageId: deliveryIdOf(testMessageId(1), 'inventory'), subscriber: 'inventory', status: CONFIRMED },
    ];

    expect(gatherDeliveries(rows)).toEqual([
      {
        messageId: testMessageId(1),
        status: SENT,
        deliveries: [
          { subscriber: 'inventory', status: CONFIRMED },
          { subscriber: 'loyalty', status: SENT },
        ],
      },
    ]);
  });

  it('leaves out a row without a message id, and keeps a row whose key is not its subscriber’s as a message of its own', () => {
    const stray = { messageId: testMessageId(5), subscriber: 'loyalty', status: SENT, seq: 5 };

    expect(gatherDeliveries([{ status: SENT }, { messageId: 7 }, stray])).toEqual([stray]);
  });

  it('orders messages of both kinds by seq, then by id, those without a seq last, whatever the order read', () => {
    const created = { messageId: testMessageId(9), topic: 'order.created', status: CONFIRMED, seq: 1 };
    const cancelled = [delivery(2, 'loyalty'), delivery(2, 'inventory')].map((row) => ({ ...row, seq: 2 }));
    const unordered = [
      { messageId: testMessageId(4), topic: 'order.noted', status: SENT },
      { messageId: testMessageId(3), topic: 'order.noted', status: SENT },
    ];

    const messages = gatherDeliveries([...unordered, ...cancelled, created]);

    expect(messages.map((message) => message.messageId)).toEqual([
      testMessageId(9),
      testMessageId(2),
      testMessageId(3),
      testMessageId(4),
    ]);
    expect(messages[1]?.deliveries?.map((d) => d.subscriber)).toEqual(['inventory', 'loyalty']);
  });

  it('shows every row once, as a message or one of its deliveries, with the status messageStatusOf derives, in any order read', () => {
    const status = fc.constantFrom(...Object.values(MessageStatus));
    const row = fc.oneof(
      fc.record({ n: fc.integer({ min: 1, max: 6 }), status }),
      fc.record({
        n: fc.integer({ min: 1, max: 6 }),
        status,
        subscriber: fc.constantFrom('inventory', 'loyalty', 'audit'),
      }),
    );
    const rows = fc
      .uniqueArray(row, {
        maxLength: 12,
        selector: ({ n, ...rest }) => ('subscriber' in rest ? `${n}#${rest.subscriber}` : `${n}`),
      })
      // A message is stored as one row or as deliveries, never both.
      .map((drawn) =>
        drawn.filter((r) => !('subscriber' in r) || !drawn.some((o) => o.n === r.n && !('subscriber' in o))),
      )
      .map((drawn) =>
        drawn.map(({ n, status: state, ...rest }) => ({
          ...outboxItem({ messageId: testMessageId(n), seq: 7 - n, status: state }),
          ...('subscriber' in rest
            ? { messageId: deliveryIdOf(testMessageId(n), rest.subscriber), subscriber: rest.subscriber }
            : {}),
        })),
      );

    fc.assert(
      fc.property(rows, fc.func(fc.integer()), (stored, order) => {
        const messages = gatherDeliveries(stored);

        const shown = messages.flatMap((message) =>
          message.deliveries === undefined
            ? [message.messageId]
            : message.deliveries.map((d) => deliveryIdOf(message.messageId, d.subscriber)),
        );
        expect(shown.sort()).toEqual(stored.map((r) => r.messageId).sort());
        expect(new Set(messages.map((m) => m.messageId)).size).toBe(messages.length);
        for (const message of messages) {
          if (message.deliveries === undefined) continue;
          expect(message.status).toBe(
            messageStatusOf(message.deliveries.map((d) => d.status as MessageStatus)),
          );
        }
        const shuffled = [...stored].sort((a, b) => order(a.messageId) - order(b.messageId));
        expect(gatherDeliveries(shuffled)).toEqual(messages);
      }),
      RUNS,
    );
  });
});
