/**
 * Who a producer delivers each topic to: per topic, its subscribers by name, each with the queue its deliveries
 * are sent to (SUBSCRIPTIONS). The views of it each function needs. Pure.
 */

/** Topic → subscriber name → the URL of that subscriber's queue. */
export type Subscriptions = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Topic → the names of its subscribers, in the order declared: what a writer stores a delivery row for. */
export function subscribersByTopic(subscriptions: Subscriptions): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(subscriptions).map(([topic, queues]) => [topic, Object.keys(queues)]),
  );
}

/** Subscriber name → the topics it receives: what a receipt of that subscriber may confirm. */
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

/** The queue of `subscriber`'s deliveries of `topic`; undefined when it is not subscribed to it. */
export function subscriberQueueOf(
  subscriptions: Subscriptions,
  topic: string,
  subscriber: string,
): string | undefined {
  const queues = Object.hasOwn(subscriptions, topic) ? subscriptions[topic] : undefined;
  return queues !== undefined && Object.hasOwn(queues, subscriber) ? queues[subscriber] : undefined;
}
