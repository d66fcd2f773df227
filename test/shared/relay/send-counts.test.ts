import { describe, expect, it } from 'vitest';
import { addSendCounts, countSend, type SendCountsByTopic } from '../../../shared/relay/send-counts.ts';

describe('countSend', () => {
  it('counts a delivery for its topic and its subscriber, a message without one for its topic only', () => {
    const counts: SendCountsByTopic = {};

    countSend(counts, { topic: 'order.created', subscriber: 'inventory' }, 'accepted');
    countSend(counts, { topic: 'order.created', subscriber: 'loyalty' }, 'sendFailures');
    countSend(counts, { topic: 'order.created' }, 'accepted');

    expect(counts).toEqual({
      'order.created': {
        accepted: 2,
        sendFailures: 1,
        retryScheduled: 0,
        failed: 0,
        subscribers: {
          inventory: { accepted: 1, sendFailures: 0, retryScheduled: 0, failed: 0 },
          loyalty: { accepted: 0, sendFailures: 1, retryScheduled: 0, failed: 0 },
        },
      },
    });
  });

  it('leaves the figures of a topic no delivery was sent for as they always were', () => {
    const counts: SendCountsByTopic = {};

    countSend(counts, { topic: 'payment.captured' }, 'failed');

    expect(counts).toEqual({
      'payment.captured': { accepted: 0, sendFailures: 0, retryScheduled: 0, failed: 1 },
    });
  });

  it('keeps a stored name like __proto__ as an entry of its own', () => {
    const counts: SendCountsByTopic = {};

    countSend(counts, { topic: '__proto__', subscriber: '__proto__' }, 'accepted');

    expect(Object.keys(counts)).toEqual(['__proto__']);
    const [topic] = Object.values(counts);
    expect(Object.keys(topic?.subscribers ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(counts)).toBe(Object.prototype);
  });
});

describe('addSendCounts', () => {
  it('adds up rounds, each subscriber’s figures included', () => {
    const run: SendCountsByTopic = {};
    const first: SendCountsByTopic = {};
    countSend(first, { topic: 'order.created', subscriber: 'inventory' }, 'accepted');
    const second: SendCountsByTopic = {};
    countSend(second, { topic: 'order.created', subscriber: 'inventory' }, 'accepted');
    countSend(second, { topic: 'order.created', subscriber: 'loyalty' }, 'failed');

    addSendCounts(run, first);
    addSendCounts(run, second);

    expect(run['order.created']).toEqual({
      accepted: 2,
      sendFailures: 0,
      retryScheduled: 0,
      failed: 1,
      subscribers: {
        inventory: { accepted: 2, sendFailures: 0, retryScheduled: 0, failed: 0 },
        loyalty: { accepted: 0, sendFailures: 0, retryScheduled: 0, failed: 1 },
      },
    });
  });
});
