import { HISTORY_ATTRIBUTE, type HistoryEntry } from '../../outbox/history.ts';

/** Longest reason and outcome kept in an entry: the list lives in the item, which DynamoDB caps at 400 KB. */
const MAX_REASON_CHARACTERS = 500;
const MAX_OUTCOME_CHARACTERS = 200;

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
