import { describe, expect, it } from 'vitest';
import type { DeadLetterCopy, DrillSnapshot } from '../../../infra/dev/drill/invariants.ts';
import { checkMetrics, type MetricObservations } from '../../../infra/dev/drill/metric-invariants.ts';
import {
  COUNTED_METRICS,
  type CountedMetric,
  type ObservedMetrics,
} from '../../../infra/dev/drill/observed-metrics.ts';
import { NO_OPERATOR_ACTIONS } from '../../../infra/dev/drill/operator-actions.ts';

const TOPIC = 'order.created';

function topicMetrics(
  counts: Partial<Record<CountedMetric, number>>,
  confirmLatenciesMs: readonly number[] = [],
): ObservedMetrics[string] {
  const zero = Object.fromEntries(COUNTED_METRICS.map((name) => [name, 0])) as Record<CountedMetric, number>;
  return { counts: { ...zero, ...counts }, confirmLatenciesMs };
}

const sent = { event: 'SENT', from: 'PENDING', to: 'SENT', by: 'relay' };
const confirmedBy = (by: string) => ({ event: 'CONFIRMED', to: 'CONFIRMED', by });

/** One message confirmed by the consumer, one confirmed by the sweeper's reconciliation, one poisoned (FAILED). */
const snapshot: DrillSnapshot = {
  orders: [],
  outbox: [
    { messageId: 'm-1', topic: TOPIC, status: 'CONFIRMED', history: [sent, confirmedBy('consumer')] },
    { messageId: 'm-2', topic: TOPIC, status: 'CONFIRMED', history: [sent, confirmedBy('sweeper')] },
    {
      messageId: 'm-3',
      topic: TOPIC,
      status: 'FAILED',
      history: [{ event: 'FAILED', from: 'PENDING', to: 'FAILED', by: 'relay', reason: 'poisoned' }],
    },
  ],
  inbox: [
    { messageId: 'm-1', topic: TOPIC, outcome: 'APPLIED' },
    { messageId: 'm-2', topic: TOPIC, outcome: 'REJECTED_OUT_OF_STOCK' },
  ],
  cursors: [],
  parked: [],
  inventory: [],
  reservations: [],
  initialStock: new Map(),
  poisonedOrders: new Set(),
  stalledOrders: new Set(),
  acknowledgedOrders: new Set(),
  cancelledOrders: new Set(),
  hotOrders: new Set(),
  rogueMessages: new Map(),
  deadLetters: [],
  maxReceiveCount: 5,
  erasedLeft: [],
  operator: NO_OPERATOR_ACTIONS,
};

/** What the functions published for that snapshot, with m-2's rejection committed by a delivery that then failed. */
const observed: MetricObservations = {
  metrics: {
    [TOPIC]: topicMetrics(
      { MessagesSent: 2, SendFailures: 6, RetriesScheduled: 5, MessagesFailed: 1, MessagesApplied: 1 },
      [40],
    ),
  },
  unreportedCommits: { [TOPIC]: { applied: 0, rejected: 1 } },
};

const [exact, bounds] = [0, 1];

describe('checkMetrics', () => {
  it('holds the metrics to the tables per topic, counting rows committed by a delivery that then failed', () => {
    const results = checkMetrics(snapshot, observed);

    expect(results.filter((result) => !result.ok)).toEqual([]);
    expect(results[exact]?.detail).toBe(
      'order.created: 1 moved to FAILED, 0 dead-lettered, 1 confirmed by the consumer, 2 inbox rows (1 unreported)',
    );
    expect(results[bounds]?.detail).toBe(
      'order.created: 2 sent ≤ 2 SENT transitions and ≥ 2 inbox rows, 5 retries ≤ 6 send failures',
    );
  });

  it("counts a cancel's RELEASED row as applied and its NOTHING_TO_RELEASE row as rejected", () => {
    const cancels = {
      ...snapshot,
      inbox: [
        ...snapshot.inbox,
        { messageId: 'm-6', topic: 'order.cancelled', outcome: 'RELEASED' },
        { messageId: 'm-7', topic: 'order.cancelled', outcome: 'NOTHING_TO_RELEASE' },
      ],
    };
    const metrics = {
      ...observed.metrics,
      'order.cancelled': topicMetrics({ MessagesSent: 2, MessagesApplied: 1, BusinessRejections: 1 }),
    };

    expect(checkMetrics(cancels, { ...observed, metrics })[exact]?.ok).toBe(true);
    const swapped = { 'order.cancelled': topicMetrics({ MessagesSent: 2, MessagesApplied: 2 }) };
    expect(
      checkMetrics(cancels, { ...observed, metrics: { ...observed.metrics, ...swapped } })[exact]?.ok,
    ).toBe(false);
  });

  it('catches an inbox row that neither a metric nor an unreported commit accounts for', () => {
    const result = checkMetrics(snapshot, { ...observed, unreportedCommits: {} })[exact];

    expect(result).toMatchObject({
      ok: false,
      detail: expect.stringContaining('BusinessRejections + 0 unreported 0 ≠ 1 rejected inbox rows'),
    });
  });

  it('catches a FAILED transition counted twice, and a latency for a confirmation the consumer did not write', () => {
    const metrics = {
      [TOPIC]: topicMetrics(
        { MessagesSent: 3, SendFailures: 6, RetriesScheduled: 5, MessagesFailed: 2, MessagesApplied: 1 },
        [40, 50],
      ),
    };

    const detail = checkMetrics(snapshot, { ...observed, metrics })[exact]?.detail;

    expect(detail).toContain('MessagesFailed 2 ≠ 1 moves to FAILED');
    expect(detail).toContain('ConfirmLatencyMs values + 0 unreported 2 ≠ 1 confirmations by the consumer');
  });

  it('counts a confirmation written by a delivery that then failed (at the drain of its parked successors)', () => {
    const metrics = {
      [TOPIC]: topicMetrics(
        { MessagesSent: 3, SendFailures: 6, RetriesScheduled: 5, MessagesFailed: 1, MessagesApplied: 0 },
        [],
      ),
    };
    const unreportedCommits = { [TOPIC]: { applied: 1, rejected: 1, confirmed: 1 } };

    expect(checkMetrics(snapshot, { metrics, unreportedCommits })[exact]?.ok).toBe(true);
    expect(
      checkMetrics(snapshot, { metrics, unreportedCommits: { [TOPIC]: { applied: 1, rejected: 1 } } })[exact]
        ?.detail,
    ).toContain('ConfirmLatencyMs values + 0 unreported 0 ≠ 1 confirmations by the consumer');
  });

  it('counts a message that failed and was then confirmed by a late delivery of an earlier copy', () => {
    const lateConfirmed = {
      messageId: 'm-5',
      topic: TOPIC,
      status: 'CONFIRMED',
      history: [
        { event: 'FAILED', from: 'PENDING', to: 'FAILED', by: 'relay', reason: 'send failed' },
        { event: 'CONFIRMED', from: 'FAILED', to: 'CONFIRMED', by: 'consumer' },
      ],
    };
    const withLate = { ...snapshot, outbox: [...snapshot.outbox, lateConfirmed] };
    const metrics = {
      [TOPIC]: topicMetrics(
        { MessagesSent: 3, SendFailures: 6, RetriesScheduled: 5, MessagesFailed: 2, MessagesApplied: 1 },
        [40, 60],
      ),
    };

    const results = checkMetrics(withLate, { ...observed, metrics });

    expect(results[exact]).toMatchObject({ ok: true, detail: expect.stringContaining('2 moved to FAILED') });
  });

  it('expects a message the sweeper could not read under (unknown), as the sweeper counts it', () => {
    const unreadable = {
      messageId: 'm-4',
      topic: TOPIC,
      status: 'FAILED',
      history: [{ event: 'FAILED', to: 'FAILED', by: 'sweeper', reason: 'unreadable outbox item: …' }],
    };
    const withUnreadable = { ...snapshot, outbox: [...snapshot.outbox, unreadable] };
    const metrics = { ...observed.metrics, '(unknown)': topicMetrics({ MessagesFailed: 1 }) };

    expect(checkMetrics(withUnreadable, { ...observed, metrics })[exact]?.ok).toBe(true);
    expect(checkMetrics(withUnreadable, observed)[exact]?.detail).toContain(
      '(unknown): MessagesFailed 0 ≠ 1 moves to FAILED',
    );
  });

  it("counts only the consumer's own dead letters, not copies SQS moved by its redrive policy", () => {
    const body = JSON.stringify({ messageId: 'm-9', topic: TOPIC });
    const deadLetters: DeadLetterCopy[] = [
      { body, attributes: { dead_letter_reason: 'MAX_RECEIVES', topic: TOPIC } },
      { body, attributes: { topic: TOPIC } },
    ];

    const detail = checkMetrics({ ...snapshot, deadLetters }, observed)[exact]?.detail;

    expect(detail).toContain("DeadLettered 0 ≠ 1 consumer's dead letters");
  });

  it('catches more sends than SENT marks, and more retries than failed sends', () => {
    const metrics = {
      [TOPIC]: topicMetrics(
        { MessagesSent: 3, SendFailures: 1, RetriesScheduled: 2, MessagesFailed: 1, MessagesApplied: 1 },
        [40],
      ),
    };

    const result = checkMetrics(snapshot, { ...observed, metrics })[bounds];

    expect(result?.ok).toBe(false);
    expect(result?.detail).toContain('MessagesSent 3 > 2 SENT transitions');
    expect(result?.detail).toContain('RetriesScheduled 2 > SendFailures 1');
  });
});
