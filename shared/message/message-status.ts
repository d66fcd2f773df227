/** Lifecycle states of an outbox message (DESIGN §3). */
export const MessageStatus = {
  PENDING: 'PENDING',
  SENT: 'SENT',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  CANCELLED: 'CANCELLED',
} as const;

/** One of the {@link MessageStatus} values. */
export type MessageStatus = (typeof MessageStatus)[keyof typeof MessageStatus];
