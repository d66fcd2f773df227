/**
 * The example's subscribers as the drill sees them: the order service's outbox delivers both order topics to each,
 * one delivery row per subscriber, and each subscriber's consumer keys its inbox rows, cursors and parked rows by
 * its name. The names are the example's (`ORDER_SUBSCRIBERS` of the order service's stack, which a test holds these
 * to); the key formats are the library's documented ones.
 */

/** The subscribers of `order.created` and `order.cancelled`, in the order the order service declares them. */
export const SUBSCRIBERS = ['inventory', 'loyalty'] as const;

/** One of {@link SUBSCRIBERS}. */
export type Subscriber = (typeof SUBSCRIBERS)[number];

/** The subscriber the drill stops for a stretch of its run, and starts again. */
export const STOPPED_SUBSCRIBER: Subscriber = 'loyalty';

/** The subscriber that keeps running while the other is stopped. */
export const RUNNING_SUBSCRIBER: Subscriber = 'inventory';

/** The key of `subscriber`'s delivery of a message: its outbox row's and its inbox row's, `<messageId>#<subscriber>`. */
export function deliveryKey(messageId: string, subscriber: string): string {
  return `${messageId}#${subscriber}`;
}

/** The sequence `subscriber`'s deliveries of an ordered message are numbered in: `<orderKey>#<subscriber>`. */
export function subscriberOrderKey(orderKey: string, subscriber: string): string {
  return `${orderKey}#${subscriber}`;
}

/** The message id of a delivery key of `subscriber`'s; undefined when the key is not one of its deliveries. */
export function messageIdOfDelivery(key: string, subscriber: string): string | undefined {
  const suffix = `#${subscriber}`;
  return key.endsWith(suffix) && key.length > suffix.length ? key.slice(0, -suffix.length) : undefined;
}

/** Whether `name` is one of {@link SUBSCRIBERS}. */
export function isSubscriber(name: unknown): name is Subscriber {
  return (SUBSCRIBERS as readonly unknown[]).includes(name);
}
