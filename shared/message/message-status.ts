/**
 * Lifecycle states of an outbox message: PENDING → SENT → CONFIRMED on the happy path; FAILED when its
 * attempts are exhausted; CANCELLED by an operator. CONFIRMED and CANCELLED are terminal.
 */
export const MessageStatus = {
  PENDING: 'PENDING',
  SENT: 'SENT',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  CANCELLED: 'CANCELLED',
} as const;

/** One of the {@link MessageStatus} values. */
export type MessageStatus = (typeof MessageStatus)[keyof typeof MessageStatus];
