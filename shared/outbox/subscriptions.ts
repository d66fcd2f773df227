/**
 * Who a producer delivers each topic to: per topic, its subscribers by name, each with the queue its deliveries
 * are sent to (SUBSCRIPTIONS). The views of it each function needs. Pure.
 */

import { isControlTopic } from '../message/control-topics.ts';

/** Topic → subscriber name → the URL of that subscriber's queue. */
export type Subscriptions = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Topic → the names of its subscribers, in the order declared: what a writer stores a delivery row for. */
export function subscribersByTopic(subscriptions: Subscriptions): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(subscriptions).map(([topic, queues]) => [topic, Object.keys(queues)]),
  );
}

/**
 * Subscriber name → the topics it receives: what a receipt of that subscriber may confirm (with the control topics,
 * which every subscriber is sent).
 */
export function topicsBySubscriber(subscriptions: Subscriptions): Record<string, string[]> {
  const topics: Record<string, string[]> = {};
  for (const [topic, queues] of Object.entries(subscriptions)) {
    for (const subscriber of Object.keys(queues)) topics[subscriber] = [...(topics[subscriber] ?? []), topic];
  }
  return topics;
}

/** Every subscriber named, once each, sorted. */
export function subscriberNames(subscriptions: Subscriptions): string[] {
  return Object.keys(topicsBySubscriber(subscriptions)).sort();
}

/**
 * The queue of `subscriber`'s deliveries of `topic`; undefined when it is not subscribed to it. The outbox's own
 * messages (a control topic, which no subscription names) go to the subscriber's queue: the one of the first of its
 * topics, in the order declared (a subscriber's stack holds one queue for all of its topics).
 */
export function subscriberQueueOf(
  subscriptions: Subscriptions,
  topic: string,
  subscriber: string,
): string | undefined {
  if (isControlTopic(topic)) return anyQueueOf(subscriptions, subscriber);
  const queues = Object.hasOwn(subscriptions, topic) ? subscriptions[topic] : undefined;
  return queues !== undefined && Object.hasOwn(queues, subscriber) ? queues[subscriber] : undefined;
}

/** The queue of the first topic that names `subscriber`; undefined when none does. */
function anyQueueOf(subscriptions: Subscriptions, subscriber: string): string | undefined {
  for (const queues of Object.values(subscriptions)) {
    if (Object.hasOwn(queues, subscriber)) return queues[subscriber];
  }
  return undefined;
}
