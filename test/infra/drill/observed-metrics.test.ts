import { describe, expect, it } from 'vitest';
import { MetricsTally, metricTotal, percentile } from '../../../infra/dev/drill/observed-metrics.ts';
import { consumeMetrics, sendMetrics } from '../../../shared/observability/report-metrics.ts';

describe('MetricsTally', () => {
  it('sums what each invocation would have published, per topic, and keeps every latency', () => {
    const tally = new MetricsTally();

    tally.add(
      sendMetrics({ 'order.created': { accepted: 3, sendFailures: 2, retryScheduled: 1, failed: 1 } }),
    );
    tally.add(
      sendMetrics({ 'order.created': { accepted: 1, sendFailures: 0, retryScheduled: 0, failed: 0 } }),
    );
    tally.add(
      consumeMetrics({
        'order.created': {
          applied: 2,
          duplicates: 1,
          rejected: 0,
          deadLettered: 0,
          requeued: 1,
          parked: 3,
          confirmLatenciesMs: [120, 80],
        },
        '(unknown)': {
          applied: 0,
          duplicates: 0,
          rejected: 0,
          deadLettered: 1,
          requeued: 0,
          parked: 0,
          confirmLatenciesMs: [],
        },
      }),
    );
    const totals = tally.totals();

    expect(totals['order.created']?.counts).toEqual({
      MessagesSent: 4,
      SendFailures: 2,
      RetriesScheduled: 1,
      MessagesFailed: 1,
      MessagesApplied: 2,
      DuplicatesSuppressed: 1,
      BusinessRejections: 0,
      DeadLettered: 0,
      Requeued: 1,
      MessagesParked: 3,
    });
    expect(totals['order.created']?.confirmLatenciesMs).toEqual([120, 80]);
    expect(metricTotal(totals, 'DeadLettered')).toBe(1);
  });

  it('ignores the sweeper gauges, which add up to nothing over runs', () => {
    const tally = new MetricsTally();

    tally.add({ 'order.created': { BacklogPending: 7, MessagesSent: 1 } });

    expect(tally.totals()['order.created']?.counts.MessagesSent).toBe(1);
  });
});

describe('percentile', () => {
  it('takes the nearest rank, and has none for no values', () => {
    const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];

    expect([percentile(values, 50), percentile(values, 95), percentile(values, 100)]).toEqual([5, 10, 10]);
    expect(percentile([], 50)).toBeUndefined();
  });
});
