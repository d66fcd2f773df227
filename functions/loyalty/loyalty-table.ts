/**
 * The loyalty table: one table, partition key {@link LOYALTY_TABLE_KEY} (a string), holding two kinds of row told
 * apart by their key's prefix, so neither can ever be read or written as the other:
 * - a customer's points row, `customer#<customerId>`: `{ customerId, points, updatedAt }`;
 * - an order's award row, `award#<orderId>`: what that order awarded and to whom, `{ orderId, customerId, points,
 *   awardedAt }`, and `revokedAt` once its cancellation took the points back. It stays after the revocation, so an
 *   order awards once, ever.
 * This module is the only one that knows those keys.
 */

/** The setting (environment variable) that names the loyalty table, in the consumer's and the API's functions. */
export const LOYALTY_TABLE = 'LOYALTY_TABLE';

/** The loyalty table's partition key attribute, a string; the table has no sort key. */
export const LOYALTY_TABLE_KEY = 'pk';

/** DynamoDB's limit on a partition key: 2048 bytes of UTF-8. */
const MAX_KEY_BYTES = 2048;

/** Before a customer id in the key of that customer's points row. */
export const POINTS_KEY_PREFIX = 'customer#';

/** Before an order id in the key of that order's award row. */
export const AWARD_KEY_PREFIX = 'award#';

/** The longest customer id (in bytes of UTF-8) whose points row key is still a valid key. */
export const MAX_CUSTOMER_ID_BYTES = MAX_KEY_BYTES - Buffer.byteLength(POINTS_KEY_PREFIX);

/** The longest order id (in bytes of UTF-8) whose award row key is still a valid key. */
export const MAX_ORDER_ID_BYTES = MAX_KEY_BYTES - Buffer.byteLength(AWARD_KEY_PREFIX);

/** The loyalty table key of a customer's points row. */
export function pointsKeyOf(customerId: string): Record<string, string> {
  return { [LOYALTY_TABLE_KEY]: `${POINTS_KEY_PREFIX}${customerId}` };
}

/** The loyalty table key of an order's award row. */
export function awardKeyOf(orderId: string): Record<string, string> {
  return { [LOYALTY_TABLE_KEY]: `${AWARD_KEY_PREFIX}${orderId}` };
}
