/**
 * A message delivered to several subscribers has one delivery per subscriber, each with its own status; the
 * message's status is derived from them. Pure: what the API and the operator tools show for a message.
 */
import { MessageStatus } from '../message/message-status.ts';

/**
 * The status of a message from its deliveries' statuses:
 * - CONFIRMED only when every delivery is CONFIRMED, CANCELLED when every one is CANCELLED;
 * - while any delivery has work left, PENDING if one is PENDING, else SENT (the message is still in flight);
 * - otherwise (every delivery finished, at least one FAILED) FAILED: an operator looks at the deliveries to see
 *   which subscribers failed, and a FAILED delivery never hides another's confirmation.
 * A message with deliveries both CONFIRMED and CANCELLED (cancelled after one subscriber confirmed) is CANCELLED:
 * it will not complete.
 * @throws RangeError for no deliveries: every message has at least one subscriber.
 */
export function messageStatusOf(deliveries: readonly MessageStatus[]): MessageStatus {
  if (deliveries.length === 0) throw new RangeError('a message has at least one delivery');
  const has = (status: MessageStatus) => deliveries.includes(status);
  if (has(MessageStatus.PENDING)) return MessageStatus.PENDING;
  if (has(MessageStatus.SENT)) return MessageStatus.SENT;
  if (has(MessageStatus.FAILED)) return MessageStatus.FAILED;
  if (has(MessageStatus.CANCELLED)) return MessageStatus.CANCELLED;
  return MessageStatus.CONFIRMED;
}
