import { describe, expect, it } from 'vitest';
import type { DrillSnapshot } from '../../../infra/dev/drill/drill-snapshot.ts';
import { checkMetrics, type MetricObservations } from '../../../infra/dev/drill/metric-invariants.ts';
import {
  COUNTED_METRICS,
  type CountedMetric,
  type ObservedMetrics,
} from '../../../infra/dev/drill/observed-metrics.ts';
import type { ReceiptCountsTotal } from '../../../infra/dev/drill/receipt-tally.ts';
import { testMessageId } from '../../support/factories.ts';
import { cancelledOrder, placedOrder, withRow, withSubscriber } from './drill-snapshot-fixture.ts';

const CREATED = 'order.created';
const CANCELLED = 'order.cancelled';

function topicMetrics(counts: Partial<Record<CountedMetric, number>>): ObservedMetrics[string] {
  const zero = Object.fromEntries(COUNTED_METRICS.map((name) => [name, 0])) as Record<CountedMetric, number>;
  return { counts: { ...zero, ...counts }, confirmLatenciesMs: [] };
}

const receipts = (confirmed: number): ReceiptCountsTotal => ({
  CONFIRMED: confirmed,
  ALREADY_CONFIRMED: 0,
  APPLIED_AFTER_CANCEL: 0,
  NOT_CONFIRMABLE: 0,
  NOT_FOUND: 0,
  ERROR: 0,
  unreadable: 0,
});

/**
 * What the functions published for {@link placedOrder}: the relay sent the create to both subscribers, one of its
 * sends refused first; the rogue message's two deliveries failed; each consumer applied its delivery, inventory's
 * inbox row committed by a delivery that then failed (its receipt never sent), so counted in no metric.
 */
const observed: MetricObservations = {
  metrics: {
    sends: {
      [CREATED]: topicMetrics({ MessagesSent: 2, SendFailures: 1, RetriesScheduled: 1, MessagesFailed: 2 }),
    },
    consumers: {
      inventory: { [CREATED]: topicMetrics({ DuplicatesSuppressed: 1 }) },
      loyalty: { [CREATED]: topicMetrics({ MessagesApplied: 1 }) },
    },
  },
  unreportedCommits: { inventory: { [CREATED]: { applied: 1, rejected: 0 } }, loyalty: {} },
  receiptsApplied: receipts(2),
};

/** The placed order's outbox with the rogue deliveries' moves to FAILED in their histories. */
function withRogueFailures(snapshot: DrillSnapshot): DrillSnapshot {
  let changed = snapshot;
  for (const key of ['r-1#inventory', 'r-1#loyalty']) {
    changed = withRow(changed, key, {
      history: [{ event: 'FAILED', from: 'PENDING', to: 'FAILED', by: 'relay', reason: 'a Set' }],
    });
  }
  return changed;
}

const [exact, bounds] = [0, 1];

describe('checkMetrics', () => {
  it('holds the senders to the outbox per topic, and each consumer to its own inbox per topic', () => {
    const results = checkMetrics(withRogueFailures(placedOrder()), observed);

    expect(results.map(({ ok }) => ok)).toEqual([true, true]);
    expect(results[exact]?.detail).toBe(
      'order.created: 2 moved to FAILED; inventory order.created: 1 inbox rows (1 unreported), 0 dead-lettered; ' +
        'loyalty order.created: 1 inbox rows (0 unreported), 0 dead-lettered; receipts: 2 deliveries confirmed by receipt',
    );
    expect(results[bounds]?.detail).toBe(
      'order.created: 2 sent ≤ 2 SENT transitions and ≥ 2 inbox rows, 1 retries ≤ 1 send failures',
    );
  });

  it("counts each subscriber's undoing cancel as applied and its nothing-to-undo cancel as rejected", () => {
    const cancelled = withSubscriber(withRogueFailures(cancelledOrder()), 'loyalty', {
      inbox: [
        ...(cancelledOrder().subscribers.loyalty.inbox.filter((row) => row.topic === CREATED) ?? []),
        { messageId: 'm-2#loyalty', topic: CANCELLED, outcome: 'NOTHING_TO_REVOKE' },
      ],
    });
    const metrics: MetricObservations = {
      ...observed,
      metrics: {
        sends: {
          [CREATED]: topicMetrics({ MessagesSent: 2, MessagesFailed: 2 }),
          [CANCELLED]: topicMetrics({ MessagesSent: 2 }),
        },
        consumers: {
          inventory: {
            [CREATED]: topicMetrics({ MessagesApplied: 1 }),
            [CANCELLED]: topicMetrics({ MessagesApplied: 1 }),
          },
          loyalty: {
            [CREATED]: topicMetrics({ MessagesApplied: 1 }),
            [CANCELLED]: topicMetrics({ BusinessRejections: 1 }),
          },
        },
      },
      unreportedCommits: { inventory: {}, loyalty: {} },
      receiptsApplied: receipts(4),
    };

    expect(checkMetrics(cancelled, metrics).map(({ ok, detail }) => (ok ? 'ok' : detail))).toEqual([
      'ok',
      'ok',
    ]);
  });

  it('catches an inbox row at a subscriber that neither its metric nor an unreported commit accounts for', () => {
    const result = checkMetrics(withRogueFailures(placedOrder()), {
      ...observed,
      unreportedCommits: { inventory: {}, loyalty: {} },
    })[exact];

    expect(result).toMatchObject({
      ok: false,
      detail: expect.stringContaining(
        'inventory order.created: MessagesApplied 0 + 0 unreported ≠ 1 applied inbox rows',
      ),
    });
  });

  it('catches a FAILED transition counted twice, and a receipt function that confirmed more deliveries than the receipts did', () => {
    const result = checkMetrics(withRogueFailures(placedOrder()), {
      ...observed,
      metrics: {
        ...observed.metrics,
        sends: {
          [CREATED]: topicMetrics({
            MessagesSent: 2,
            SendFailures: 1,
            RetriesScheduled: 1,
            MessagesFailed: 3,
          }),
        },
      },
      receiptsApplied: receipts(3),
    })[exact];

    expect(result?.detail).toContain('order.created: MessagesFailed 3 ≠ 2 moves to FAILED');
    expect(result?.detail).toContain('receipts function: CONFIRMED 3 ≠ 2 deliveries confirmed by receipt');
  });

  it('expects a row the sweeper could not read under (unknown), as the sweeper counts it', () => {
    const unreadable = withRow(placedOrder(), 'r-1#loyalty', {
      history: [{ event: 'FAILED', to: 'FAILED', by: 'sweeper', reason: 'unreadable outbox item' }],
    });
    const snapshot = withRow(unreadable, 'r-1#inventory', {
      history: [{ event: 'FAILED', from: 'PENDING', to: 'FAILED', by: 'relay', reason: 'a Set' }],
    });
    const result = checkMetrics(snapshot, {
      ...observed,
      metrics: {
        ...observed.metrics,
        sends: {
          [CREATED]: topicMetrics({
            MessagesSent: 2,
            SendFailures: 1,
            RetriesScheduled: 1,
            MessagesFailed: 1,
          }),
          '(unknown)': topicMetrics({ MessagesFailed: 1 }),
        },
      },
    });

    expect(result.map(({ ok }) => ok)).toEqual([true, true]);
  });

  it("counts only a consumer's own dead letters, by topic, not copies its queue's redrive policy moved", () => {
    const letter = (attributes: Record<string, string>) => ({
      body: JSON.stringify({
        messageId: testMessageId(9),
        topic: CREATED,
        aggregateId: 'o-9',
        payload: {},
        headers: {},
        createdAt: '2030-01-01T00:00:00.000Z',
        schemaVersion: 1,
      }),
      attributes,
    });
    const snapshot = withSubscriber(withRogueFailures(placedOrder()), 'loyalty', {
      deadLetters: [letter({ dead_letter_reason: 'POISON', last_error: 'x' }), letter({ topic: CREATED })],
    });
    const metrics = (deadLettered: number): MetricObservations => ({
      ...observed,
      metrics: {
        ...observed.metrics,
        consumers: {
          ...observed.metrics.consumers,
          loyalty: { [CREATED]: topicMetrics({ MessagesApplied: 1, DeadLettered: deadLettered }) },
        },
      },
    });

    expect(checkMetrics(snapshot, metrics(1))[exact]?.ok).toBe(true);
    expect(checkMetrics(snapshot, metrics(2))[exact]?.detail).toContain(
      'loyalty order.created: DeadLettered 2 ≠ 1 dead letters with a reason',
    );
  });

  it('catches more sends than SENT marks, fewer than the inbox rows at every subscriber, and more retries than failed sends', () => {
    const result = (counts: Partial<Record<CountedMetric, number>>) =>
      checkMetrics(withRogueFailures(placedOrder()), {
        ...observed,
        metrics: {
          ...observed.metrics,
          sends: { [CREATED]: topicMetrics({ MessagesFailed: 2, ...counts }) },
        },
      })[bounds];

    expect(result({ MessagesSent: 3 })?.detail).toContain('MessagesSent 3 > 2 SENT transitions');
    expect(result({ MessagesSent: 1 })?.detail).toContain('MessagesSent 1 < 2 inbox rows');
    expect(result({ MessagesSent: 2, RetriesScheduled: 2, SendFailures: 1 })?.detail).toContain(
      'RetriesScheduled 2 > SendFailures 1',
    );
  });
});
