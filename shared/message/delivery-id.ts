/**
 * One message, several subscribers: each subscriber's copy is a delivery of its own, stored under its own key on
 * both sides — the producer's outbox row of that delivery and the subscriber's inbox row — so that two subscribers
 * (even two sharing one inbox table) never take each other's record for their own. The message id on the wire
 * stays the message's: these keys are storage only. Pure.
 */

/** What joins a message id (or an order key) and a subscriber name in a delivery's keys. */
const SEPARATOR = '#';

/** The key of `subscriber`'s delivery of message `messageId`: `<messageId>#<subscriber>`. */
export function deliveryIdOf(messageId: string, subscriber: string): string {
  return `${messageId}${SEPARATOR}${subscriber}`;
}

/**
 * The subscriber a row key names: the part after `#` of a delivery's key, undefined for a message's own id (a ULID,
 * which never holds one).
 */
export function subscriberOfKey(key: string): string | undefined {
  const at = key.indexOf(SEPARATOR);
  return at < 0 ? undefined : key.slice(at + SEPARATOR.length);
}

/**
 * The order key `subscriber`'s deliveries of an ordered topic are sequenced under: `<orderKey>#<subscriber>`, so
 * each subscriber has its own sequence of each aggregate (one subscriber's gap never holds another's messages).
 */
export function subscriberOrderKeyOf(orderKey: string, subscriber: string): string {
  return `${orderKey}${SEPARATOR}${subscriber}`;
}

/**
 * The message id (or order key) a delivery key was made from; `key` itself when `subscriber` is undefined (a
 * message delivered to one queue, stored under its own id).
 * @throws RangeError when `key` is not a key of that subscriber's: a row whose key and subscriber disagree.
 */
export function unscopedKeyOf(key: string, subscriber: string | undefined): string {
  if (subscriber === undefined) return key;
  const suffix = `${SEPARATOR}${subscriber}`;
  if (!key.endsWith(suffix) || key.length === suffix.length) {
    throw new RangeError(`${key} is not a key of subscriber ${subscriber}'s deliveries`);
  }
  return key.slice(0, -suffix.length);
}
