import { describe, expect, it } from 'vitest';
import { CONTROL_TOPICS } from '../../../shared/message/control-topics.ts';
import {
  type Subscriptions,
  subscriberNames,
  subscriberQueueOf,
  subscribersByTopic,
  topicsBySubscriber,
} from '../../../shared/outbox/subscriptions.ts';

const SQS = 'https://sqs.eu-west-1.amazonaws.com/111111111111';
const SUBSCRIPTIONS: Subscriptions = {
  'order.created': { inventory: `${SQS}/inventory`, loyalty: `${SQS}/loyalty` },
  'order.cancelled': { loyalty: `${SQS}/loyalty` },
};

describe('subscriptions', () => {
  it('names each topic’s subscribers, each subscriber’s topics, and every subscriber once', () => {
    expect(subscribersByTopic(SUBSCRIPTIONS)).toEqual({
      'order.created': ['inventory', 'loyalty'],
      'order.cancelled': ['loyalty'],
    });
    expect(topicsBySubscriber(SUBSCRIPTIONS)).toEqual({
      inventory: ['order.created'],
      loyalty: ['order.created', 'order.cancelled'],
    });
    expect(subscriberNames(SUBSCRIPTIONS)).toEqual(['inventory', 'loyalty']);
  });

  it('routes a delivery to its subscriber’s queue of its topic, and nowhere for a topic it does not receive', () => {
    expect(subscriberQueueOf(SUBSCRIPTIONS, 'order.created', 'inventory')).toBe(`${SQS}/inventory`);
    expect(subscriberQueueOf(SUBSCRIPTIONS, 'order.cancelled', 'inventory')).toBeUndefined();
    expect(subscriberQueueOf(SUBSCRIPTIONS, 'order.created', 'billing')).toBeUndefined();
    expect(subscriberQueueOf(SUBSCRIPTIONS, 'constructor', 'inventory')).toBeUndefined();
  });

  it.each(CONTROL_TOPICS)(
    'routes the outbox’s own %s to the subscriber’s queue, which no subscription names it for',
    (topic) => {
      expect(subscriberQueueOf(SUBSCRIPTIONS, topic, 'inventory')).toBe(`${SQS}/inventory`);
      expect(subscriberQueueOf(SUBSCRIPTIONS, topic, 'loyalty')).toBe(`${SQS}/loyalty`);
      // Never to a subscriber the producer does not declare.
      expect(subscriberQueueOf(SUBSCRIPTIONS, topic, 'billing')).toBeUndefined();
      expect(subscriberQueueOf(SUBSCRIPTIONS, topic, 'constructor')).toBeUndefined();
    },
  );
});
