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

/** Longest reason and outcome kept in an entry: the list lives in the item, which DynamoDB caps at 400 KB. */
const MAX_REASON_CHARACTERS = 500;
const MAX_OUTCOME_CHARACTERS = 200;

/** The history attribute of an outbox item. */
export const HISTORY_ATTRIBUTE = 'history';

/** The parts an update needs to append one entry to the history list. */
export interface HistoryAppend {
  /** A SET action: `#history = list_append(if_not_exists(#history, :noHistory), :historyEntry)`. */
  readonly set: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/**
 * Appends `entry` to the message's history, creating the list on the first entry. Fields left undefined are
 * dropped and long texts cut, so the entry is always a valid DynamoDB map.
 */
export function appendHistory(entry: HistoryEntry): HistoryAppend {
  const stored: Record<string, string> = { at: entry.at, event: entry.event };
  if (entry.from !== undefined) stored.from = entry.from;
  if (entry.to !== undefined) stored.to = entry.to;
  if (entry.by !== undefined && entry.by !== '') stored.by = entry.by;
  if (entry.reason !== undefined && entry.reason !== '')
    stored.reason = entry.reason.slice(0, MAX_REASON_CHARACTERS);
  if (entry.outcome !== undefined && entry.outcome !== '')
    stored.outcome = entry.outcome.slice(0, MAX_OUTCOME_CHARACTERS);
  return {
    set: '#history = list_append(if_not_exists(#history, :noHistory), :historyEntry)',
    names: { '#history': HISTORY_ATTRIBUTE },
    values: { ':noHistory': [], ':historyEntry': [stored] },
  };
}

/** The history entries of a stored item, oldest first; anything that is not a list reads as none. */
export function historyOf(item: Readonly<Record<string, unknown>>): HistoryEntry[] {
  const history = item[HISTORY_ATTRIBUTE];
  return Array.isArray(history) ? (history as HistoryEntry[]) : [];
}
