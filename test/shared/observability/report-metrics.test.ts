import { describe, expect, it } from 'vitest';
import {
  backlogMetrics,
  mergeSubscriberMetrics,
  subscriberBacklogMetrics,
  subscriberSendMetrics,
} from '../../../shared/observability/report-metrics.ts';
import { countSend, type SendCountsByTopic } from '../../../shared/relay/send-counts.ts';
import type { Backlog, BacklogGauges } from '../../../shared/sweeper/backlog-gauges.ts';

const gauges = (values: Partial<BacklogGauges>): BacklogGauges => ({
  pending: 0,
  sentUnconfirmed: 0,
  failed: 0,
  oldestPendingAgeSeconds: 0,
  oldestUnconfirmedAgeSeconds: 0,
  ...values,
});

describe('subscriberSendMetrics', () => {
  it('gives each subscriber its MessagesSent, SendFailures and MessagesFailed per topic and added up', () => {
    const counts: SendCountsByTopic = {};
    countSend(counts, { topic: 'order.created', subscriber: 'loyalty' }, 'accepted');
    countSend(counts, { topic: 'order.cancelled', subscriber: 'loyalty' }, 'accepted');
    countSend(counts, { topic: 'order.cancelled', subscriber: 'loyalty' }, 'sendFailures');
    countSend(counts, { topic: 'order.cancelled', subscriber: 'loyalty' }, 'retryScheduled');
    countSend(counts, { topic: 'payment.captured' }, 'accepted');

    expect(subscriberSendMetrics(counts)).toEqual({
      loyalty: {
        topics: {
          'order.cancelled': { MessagesSent: 1, SendFailures: 1, MessagesFailed: 0 },
          'order.created': { MessagesSent: 1, SendFailures: 0, MessagesFailed: 0 },
        },
        total: { MessagesSent: 2, SendFailures: 1, MessagesFailed: 0 },
      },
    });
  });

  it('gives nothing when no send was a delivery to a subscriber', () => {
    const counts: SendCountsByTopic = {};
    countSend(counts, { topic: 'payment.captured' }, 'accepted');

    expect(subscriberSendMetrics(counts)).toEqual({});
  });
});

describe('the backlog metrics', () => {
  const backlog: Backlog = {
    at: '2024-05-01T12:00:00.000Z',
    topics: { 'order.created': gauges({ pending: 3, oldestUnconfirmedAgeSeconds: 90 }) },
    subscribers: {
      inventory: {
        topics: { 'order.created': gauges({ pending: 2, failed: 1, oldestUnconfirmedAgeSeconds: 90 }) },
        total: gauges({ pending: 2, failed: 1, oldestUnconfirmedAgeSeconds: 90 }),
      },
    },
  };

  it('names each topic’s gauges, the oldest unconfirmed age among them', () => {
    expect(backlogMetrics(backlog)).toEqual({
      'order.created': {
        BacklogPending: 3,
        BacklogSentUnconfirmed: 0,
        OldestPendingAgeSeconds: 0,
        OldestUnconfirmedAgeSeconds: 90,
        FailedMessages: 0,
      },
    });
  });

  it('names each subscriber’s gauges per topic and in all, and merges them with its sends', () => {
    const merged = mergeSubscriberMetrics(
      { inventory: { topics: { 'order.created': { MessagesSent: 4 } }, total: { MessagesSent: 4 } } },
      subscriberBacklogMetrics(backlog),
    );

    const values = {
      BacklogPending: 2,
      BacklogSentUnconfirmed: 0,
      OldestPendingAgeSeconds: 0,
      OldestUnconfirmedAgeSeconds: 90,
      FailedMessages: 1,
    };
    expect(merged).toEqual({
      inventory: {
        topics: { 'order.created': { MessagesSent: 4, ...values } },
        total: { MessagesSent: 4, ...values },
      },
    });
  });
});
