import type { MessageStatus } from '../message/message-status.ts';

/** What a history entry records: a status change, an operator's action, or a delivery after a cancel. */
export const HistoryEvent = {
  SENT: 'SENT',
  /** SQS refused a message its sender had just marked SENT: back to PENDING for the next attempt. */
  SEND_REFUSED: 'SEND_REFUSED',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  REQUEUED: 'REQUEUED',
  REPLAYED: 'REPLAYED',
  CANCELLED: 'CANCELLED',
  /** A copy in flight when the message was cancelled was applied downstream; the status stays CANCELLED. */
  APPLIED_AFTER_CANCEL: 'APPLIED_AFTER_CANCEL',
} as const;

/** One of the {@link HistoryEvent} values. */
export type HistoryEvent = (typeof HistoryEvent)[keyof typeof HistoryEvent];

/**
 * One entry of a message's `history` list: when, what, the statuses it moved between (`from` is absent when
 * the update accepts several), who (`relay`, `sweeper`, `consumer`, or the operator) and why.
 */
export interface HistoryEntry {
  readonly at: string;
  readonly event: HistoryEvent;
  readonly from?: MessageStatus;
  readonly to?: MessageStatus;
  readonly by?: string;
  readonly reason?: string;
  readonly outcome?: string;
}

/** The history attribute of an outbox item. */
export const HISTORY_ATTRIBUTE = 'history';

/** The history entries of a stored item, oldest first; anything that is not a list reads as none. */
export function historyOf(item: Readonly<Record<string, unknown>>): HistoryEntry[] {
  const history = item[HISTORY_ATTRIBUTE];
  return Array.isArray(history) ? (history as HistoryEntry[]) : [];
}
