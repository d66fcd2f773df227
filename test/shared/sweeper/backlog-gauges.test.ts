import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countOutbox } from '../../../shared/admin/outbox-stats.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { type BacklogGauges, readBacklog } from '../../../shared/sweeper/backlog-gauges.ts';
import { FIXED_NOW, testMessageId } from '../../support/factories.ts';
import { type AdminFixture, adminFixture, SHARDS, storeMessage } from '../admin/admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const SQS = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
const minutesAgo = (n: number) => new Date(FIXED_NOW.getTime() - n * 60_000).toISOString();

/** order.created goes to inventory and loyalty, order.cancelled to loyalty, payment.captured to billing. */
const SUBSCRIPTIONS = {
  'order.created': { inventory: `${SQS}/inventory`, loyalty: `${SQS}/loyalty` },
  'order.cancelled': { loyalty: `${SQS}/loyalty` },
  'payment.captured': { billing: `${SQS}/billing` },
};

/** Stores `subscriber`'s delivery of message `n` as the writer keys it: `<messageId>#<subscriber>`. */
function storeDelivery(
  fixture: AdminFixture,
  { n, subscriber, ...overrides }: Partial<OutboxItem> & { readonly n: number; readonly subscriber: string },
): Promise<OutboxItem> {
  return storeMessage(fixture, {
    ...overrides,
    messageId: deliveryIdOf(testMessageId(n), subscriber),
    subscriber,
  });
}

/** The backlog as the sweeper reads it: through the outbox table's adapter, on the in-memory indexes. */
function backlogOf(fixture: AdminFixture) {
  return readBacklog(
    { outbox: fixture.deps.outbox, dueShards: SHARDS, clock: fixture.clock.now },
    { topics: ['order.created'], subscriptions: SUBSCRIPTIONS },
  );
}

const gauges = (values: Partial<BacklogGauges>): BacklogGauges => ({
  pending: 0,
  sentUnconfirmed: 0,
  failed: 0,
  oldestPendingAgeSeconds: 0,
  oldestUnconfirmedAgeSeconds: 0,
  ...values,
});

describe('readBacklog', () => {
  it('gives each subscriber its own backlog, per topic and over its topics, from the rows keyed to it', async () => {
    const fixture = adminFixture();
    // Message 1: inventory has not confirmed it for 40 minutes (resent 2 minutes ago); loyalty's delivery FAILED.
    await storeDelivery(fixture, {
      n: 1,
      subscriber: 'inventory',
      status: SENT,
      createdAt: minutesAgo(40),
      sentAt: minutesAgo(2),
    });
    await storeDelivery(fixture, { n: 1, subscriber: 'loyalty', status: FAILED, createdAt: minutesAgo(40) });
    // Message 2: not yet sent to inventory, sent to loyalty 3 minutes ago.
    await storeDelivery(fixture, {
      n: 2,
      subscriber: 'inventory',
      status: PENDING,
      createdAt: minutesAgo(3),
    });
    await storeDelivery(fixture, {
      n: 2,
      subscriber: 'loyalty',
      status: SENT,
      createdAt: minutesAgo(3),
      sentAt: minutesAgo(3),
    });
    // Message 3 of order.cancelled, to loyalty only: one PENDING for 10 minutes, one FAILED.
    await storeDelivery(fixture, {
      n: 3,
      subscriber: 'loyalty',
      topic: 'order.cancelled',
      status: PENDING,
      createdAt: minutesAgo(10),
    });
    await storeDelivery(fixture, { n: 4, subscriber: 'loyalty', topic: 'order.cancelled', status: FAILED });
    // Confirmed and cancelled deliveries are no backlog.
    await storeDelivery(fixture, { n: 5, subscriber: 'inventory', status: CONFIRMED });
    await storeDelivery(fixture, { n: 6, subscriber: 'inventory', status: CANCELLED });

    const backlog = await backlogOf(fixture);

    expect(backlog.subscribers.inventory).toEqual({
      topics: {
        'order.created': gauges({
          pending: 1,
          sentUnconfirmed: 1,
          oldestPendingAgeSeconds: 180,
          // Since it was written, not since its last send: it has waited 40 minutes for a receipt.
          oldestUnconfirmedAgeSeconds: 2_400,
        }),
      },
      total: gauges({
        pending: 1,
        sentUnconfirmed: 1,
        oldestPendingAgeSeconds: 180,
        oldestUnconfirmedAgeSeconds: 2_400,
      }),
    });
    expect(backlog.subscribers.loyalty).toEqual({
      topics: {
        'order.cancelled': gauges({ pending: 1, failed: 1, oldestPendingAgeSeconds: 600 }),
        'order.created': gauges({ sentUnconfirmed: 1, failed: 1, oldestUnconfirmedAgeSeconds: 180 }),
      },
      // Counts added up over its topics, the oldest of the ages.
      total: gauges({
        pending: 1,
        sentUnconfirmed: 1,
        failed: 2,
        oldestPendingAgeSeconds: 600,
        oldestUnconfirmedAgeSeconds: 180,
      }),
    });
    // The topic counts every delivery of it.
    expect(backlog.topics['order.created']).toEqual(
      gauges({
        pending: 1,
        sentUnconfirmed: 2,
        failed: 1,
        oldestPendingAgeSeconds: 180,
        oldestUnconfirmedAgeSeconds: 2_400,
      }),
    );
  });

  it('lists a subscriber with nothing in the outbox with zeros, so its gauges fall back to 0', async () => {
    const fixture = adminFixture();

    const backlog = await backlogOf(fixture);

    expect(backlog.subscribers.billing).toEqual({
      topics: { 'payment.captured': gauges({}) },
      total: gauges({}),
    });
    expect(Object.keys(backlog.subscribers).sort()).toEqual(['billing', 'inventory', 'loyalty']);
    expect(Object.keys(backlog.topics).sort()).toEqual([
      'order.cancelled',
      'order.created',
      'payment.captured',
    ]);
  });

  it('counts a message without a subscriber (a topic delivered to one queue) per topic only', async () => {
    const fixture = adminFixture();
    await storeMessage(fixture, { messageId: testMessageId(1), status: SENT, createdAt: minutesAgo(60) });
    await storeMessage(fixture, { messageId: testMessageId(2), status: FAILED });
    await storeDelivery(fixture, { n: 3, subscriber: 'inventory', status: SENT, createdAt: minutesAgo(5) });

    const backlog = await backlogOf(fixture);

    expect(backlog.topics['order.created']).toEqual(
      gauges({ sentUnconfirmed: 2, failed: 1, oldestUnconfirmedAgeSeconds: 3_600 }),
    );
    expect(backlog.subscribers.inventory?.total).toEqual(
      gauges({ sentUnconfirmed: 1, oldestUnconfirmedAgeSeconds: 300 }),
    );
    expect(backlog.subscribers.loyalty?.total).toEqual(gauges({}));
  });

  it('reads the indexes as the count does: the same queries, none asking the due index for `subscriber`', async () => {
    const fixture = adminFixture();
    await storeDelivery(fixture, { n: 1, subscriber: 'inventory', status: SENT, createdAt: minutesAgo(20) });
    await storeDelivery(fixture, { n: 2, subscriber: 'loyalty', status: FAILED });

    await backlogOf(fixture);
    const gaugeQueries = fixture.commands.splice(0);
    await countOutbox(
      { outbox: fixture.deps.outbox, dueShards: SHARDS, clock: fixture.clock.now },
      { topics: ['order.created'], subscriptions: SUBSCRIPTIONS },
    );
    const countQueries = fixture.commands.splice(0);

    expect(gaugeQueries.every((command) => command instanceof QueryCommand)).toBe(true);
    const inputs = (commands: unknown[]) => commands.map((command) => (command as QueryCommand).input);
    expect(inputs(gaugeQueries)).toEqual(inputs(countQueries));
    // The due index does not hold `subscriber`: a delivery's subscriber is read from its key.
    for (const input of inputs(gaugeQueries).filter((query) => query.IndexName === 'due')) {
      expect(Object.values(input.ExpressionAttributeNames ?? {})).not.toContain('subscriber');
    }
  });

  it('agrees with the count per topic, and each subscriber’s figures are its rows’, whatever the mix', async () => {
    const subscribers = ['inventory', 'loyalty'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            status: fc.constantFrom(PENDING, SENT, FAILED, CONFIRMED, CANCELLED),
            subscriber: fc.constantFrom(...subscribers, undefined),
            ageMinutes: fc.integer({ min: 0, max: 600 }),
          }),
          { maxLength: 40 },
        ),
        async (rows) => {
          const fixture = adminFixture();
          for (const [n, row] of rows.entries()) {
            const common = { status: row.status, createdAt: minutesAgo(row.ageMinutes) };
            if (row.subscriber === undefined) {
              await storeMessage(fixture, { ...common, messageId: testMessageId(n) });
            } else await storeDelivery(fixture, { ...common, n, subscriber: row.subscriber });
          }

          const backlog = await backlogOf(fixture);
          const counts = await countOutbox(
            { outbox: fixture.deps.outbox, dueShards: SHARDS, clock: fixture.clock.now },
            { topics: ['order.created'], subscriptions: SUBSCRIPTIONS },
          );

          const topic = counts.topics['order.created'];
          expect(backlog.topics['order.created']).toMatchObject({
            pending: topic?.PENDING,
            sentUnconfirmed: topic?.SENT,
            failed: topic?.FAILED,
            oldestPendingAgeSeconds: topic?.oldestPendingAgeSeconds,
          });
          for (const subscriber of subscribers) {
            const own = rows.filter((row) => row.subscriber === subscriber);
            const oldest = (status: string) =>
              Math.max(0, ...own.filter((row) => row.status === status).map((row) => row.ageMinutes * 60));
            const expected = gauges({
              pending: own.filter((row) => row.status === PENDING).length,
              sentUnconfirmed: own.filter((row) => row.status === SENT).length,
              failed: own.filter((row) => row.status === FAILED).length,
              oldestPendingAgeSeconds: oldest(PENDING),
              oldestUnconfirmedAgeSeconds: oldest(SENT),
            });
            expect(backlog.subscribers[subscriber]?.topics['order.created'], subscriber).toEqual(expected);
            expect(backlog.subscribers[subscriber]?.total, subscriber).toEqual(expected);
          }
        },
      ),
      { seed: 20_240_501, numRuns: 40 },
    );
  });
});
