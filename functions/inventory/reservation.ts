/**
 * The inventory table keeps, beside each SKU's stock row, one reservation row per order it reserved stock
 * for: key `reservation#<orderId>`, never a SKU (a SKU is letters, digits, `_` and `-` only), so the stock
 * routes can never read or write one.
 */
export const RESERVATION_KEY_PREFIX = 'reservation#';

/** The inventory table key of an order's reservation row. */
export function reservationKeyOf(orderId: string): string {
  return `${RESERVATION_KEY_PREFIX}${orderId}`;
}

/** Whether an inventory table key is a reservation row's rather than a SKU's stock row's. */
export function isReservationKey(key: string): boolean {
  return key.startsWith(RESERVATION_KEY_PREFIX);
}
