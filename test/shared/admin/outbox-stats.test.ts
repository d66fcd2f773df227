import type { QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countOutbox, outboxStats } from '../../../shared/admin/outbox-stats.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { envelope, FIXED_NOW, sqsRecord, testMessageId } from '../../support/factories.ts';
import { adminFixture, commandNames, ORDER_DLQ, PAYMENT_DLQ, storeMessage } from './admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const TOPICS = ['order.created', 'order.cancelled', 'payment.captured'] as const;
const minute = (n: number) => new Date(FIXED_NOW.getTime() + n * 60_000).toISOString();

describe('outboxStats', () => {
  it('equals the tables: per status and topic, whatever the mix of messages', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            status: fc.constantFrom(PENDING, SENT, FAILED, CONFIRMED, CANCELLED),
            topic: fc.constantFrom(...TOPICS),
          }),
          { maxLength: 60 },
        ),
        async (messages) => {
          const fixture = adminFixture();
          for (const [n, message] of messages.entries()) {
            await storeMessage(fixture, { messageId: testMessageId(n), ...message });
          }

          const stats = await outboxStats(fixture.deps);

          // Counted straight from every stored item, as a scan would.
          const stored = fixture.db.items('outbox');
          for (const topic of TOPICS) {
            for (const status of [PENDING, SENT, FAILED, CANCELLED] as const) {
              const expected = stored.filter((item) => item.topic === topic && item.status === status).length;
              expect(stats.topics[topic]?.[status], `${topic} ${status}`).toBe(expected);
            }
          }
          expect(stats.totals).toEqual({
            PENDING: stored.filter((item) => item.status === PENDING).length,
            SENT: stored.filter((item) => item.status === SENT).length,
            FAILED: stored.filter((item) => item.status === FAILED).length,
            CANCELLED: stored.filter((item) => item.status === CANCELLED).length,
          });
          expect(commandNames(fixture).every((name) => name === 'QueryCommand')).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('gives the oldest PENDING age and the oldest unconfirmed SENT age per topic', async () => {
    const fixture = adminFixture();
    await storeMessage(fixture, { messageId: testMessageId(1), status: PENDING, createdAt: minute(-30) });
    await storeMessage(fixture, { messageId: testMessageId(2), status: PENDING, createdAt: minute(-5) });
    await storeMessage(fixture, {
      messageId: testMessageId(3),
      status: SENT,
      createdAt: minute(-60),
      sentAt: minute(-12),
    });
    await storeMessage(fixture, {
      messageId: testMessageId(4),
      status: PENDING,
      topic: 'payment.captured',
      createdAt: minute(-2),
    });

    const { topics } = await outboxStats(fixture.deps);

    expect(topics['order.created']).toMatchObject({
      PENDING: 2,
      SENT: 1,
      oldestPendingAgeSeconds: 30 * 60,
      oldestSentUnconfirmedAgeSeconds: 12 * 60,
    });
    expect(topics['payment.captured']).toMatchObject({
      oldestPendingAgeSeconds: 120,
      oldestSentUnconfirmedAgeSeconds: 0,
    });
    // A routed topic with nothing in flight is listed with zeros, so its gauges fall back to 0.
    expect(topics['order.cancelled']).toEqual({
      PENDING: 0,
      SENT: 0,
      FAILED: 0,
      CANCELLED: 0,
      oldestPendingAgeSeconds: 0,
      oldestSentUnconfirmedAgeSeconds: 0,
    });
  });

  it('gives each DLQ depth, and says why CONFIRMED is not counted', async () => {
    const fixture = adminFixture();
    for (const n of [1, 2, 3]) {
      await fixture.queues.deadLetter({
        queueUrl: ORDER_DLQ,
        record: sqsRecord(envelope({ messageId: testMessageId(n) })),
        reason: 'MAX_RECEIVES',
        lastError: 'e',
      });
    }
    fixture.queues.receive(ORDER_DLQ, 1);

    const stats = await outboxStats(fixture.deps);

    expect(stats.deadLetterQueues).toEqual([
      {
        queueUrl: ORDER_DLQ,
        queueName: 'order-events-dlq',
        topics: ['order.created', 'order.cancelled'],
        messages: 2,
        inFlight: 1,
      },
      {
        queueUrl: PAYMENT_DLQ,
        queueName: 'payment-events-dlq',
        topics: ['payment.captured'],
        messages: 0,
        inFlight: 0,
      },
    ]);
    expect(stats.notCounted.CONFIRMED).toMatch(/counting them would read every message/);
    expect(stats.at).toBe(FIXED_NOW.toISOString());
  });

  it('reads only the due and attention indexes, never the payload', async () => {
    const fixture = adminFixture();
    await storeMessage(fixture, { messageId: testMessageId(1), status: FAILED });

    await countOutbox(fixture.deps);

    const queries = fixture.commands as QueryCommand[];
    expect(new Set(queries.map((query) => query.input.IndexName))).toEqual(new Set(['due', 'attention']));
    expect(queries).toHaveLength(4 + 2 * 4);
    for (const query of queries)
      expect(Object.values(query.input.ExpressionAttributeNames ?? {})).not.toContain('payload');
  });

  it('counts a message once even if it is wrongly in both indexes', async () => {
    const fixture = adminFixture();
    const item = await storeMessage(fixture, { messageId: testMessageId(1), status: FAILED });
    await storeMessage(fixture, { ...item, dueShard: '0', nextAttemptAt: minute(0) } as never);

    expect((await countOutbox(fixture.deps)).totals.FAILED).toBe(1);
  });
});
