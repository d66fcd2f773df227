import { MessageStatus } from '../message/message-status.ts';
import { attentionPartitions, dueShardKeys } from '../outbox/outbox-item.ts';
import { subscriberNames } from '../outbox/subscriptions.ts';
import type { AdminDeps } from './admin-deps.ts';
import { InvalidAdminRequestError, ListFilterRequiredError } from './admin-errors.ts';
import { instantOf, integerWithin } from './admin-input.ts';
import type { ListSource, PageKey, StoredMessage } from './admin-ports.ts';
import { type MessageSummary, SUMMARY_ATTRIBUTES, summarizeMessage } from './message-summary.ts';

/** Which messages to list; at least one filter, since listing every message would read the whole table. */
export interface ListMessagesInput {
  /** Any status; CONFIRMED only with an `aggregateId` (CONFIRMED messages are in no index but byAggregate). */
  readonly status?: string;
  readonly topic?: string;
  /** Only the deliveries to this subscriber (a topic with subscribers is stored as one delivery per subscriber). */
  readonly subscriber?: string;
  readonly aggregateId?: string;
  /** Only messages created at or after this instant (ISO-8601). */
  readonly since?: string;
  /** @default 50, at most 500 */
  readonly limit?: number;
  /** The `cursor` of the previous page, to read the next one with the same filters. */
  readonly cursor?: string;
}

/** One page of a listing. */
export interface MessagePage {
  readonly items: readonly MessageSummary[];
  /** Present when more may follow: pass it back for the next page. A page may be short and still have one. */
  readonly cursor?: string;
}

/** Page sizes: 50 by default, at most 500. */
export const LIST_LIMITS = { defaultLimit: 50, maxLimit: 500 } as const;

/**
 * Queries made for one page at most: a selective filter over a large partition returns a short page with a
 * cursor rather than reading on without bound.
 */
const MAX_QUERIES_PER_PAGE = 25;

/**
 * Messages read by key for one page at most (an aggregate's listing reads each message the index names): a
 * selective filter over a large aggregate returns a short page with a cursor rather than thousands of reads.
 */
const MAX_READS_PER_PAGE = 1_000;

interface Filters {
  readonly status?: MessageStatus;
  readonly topic?: string;
  readonly subscriber?: string;
  readonly aggregateId?: string;
  readonly since?: string;
}

/**
 * A page of message summaries, read through the indexes only — never a Scan: an aggregate's messages through
 * `byAggregate` (which holds their keys only: each message is then read by key and filtered as read); PENDING
 * and SENT through the due index, FAILED and CANCELLED through the attention index, shard after shard; a topic,
 * a subscriber or `since` without a status through both. A message delivered to subscribers is listed as one
 * summary per delivery, each naming its subscriber. The payload is never read.
 * Throws {@link ListFilterRequiredError} without a filter, or for CONFIRMED without an aggregate, and
 * {@link InvalidAdminRequestError} for a bad status, instant, limit or cursor.
 * @example
 * const { items, cursor } = await listMessages(deps, { status: 'FAILED', topic: 'order.created' });
 */
export async function listMessages(
  deps: Pick<AdminDeps, 'outbox' | 'dueShards' | 'subscriptions'>,
  input: ListMessagesInput,
): Promise<MessagePage> {
  const filters = filtersOf(input);
  const limit = integerWithin('limit', input.limit, {
    min: 1,
    max: LIST_LIMITS.maxLimit,
    fallback: LIST_LIMITS.defaultLimit,
  });
  // A subscriber named is read from its own due partitions, whether or not the subscriptions list it.
  const subscribers =
    filters.subscriber === undefined ? subscriberNames(deps.subscriptions ?? {}) : [filters.subscriber];
  const sources = sourcesFor(filters, deps.dueShards, subscribers);
  const fingerprint = JSON.stringify([filters, deps.dueShards, subscribers]);
  const start = input.cursor === undefined ? { source: 0 } : decodeCursor(input.cursor, fingerprint);

  const items: MessageSummary[] = [];
  let source = start.source;
  let startKey = start.key;
  let queries = 0;
  let reads = 0;
  while (
    source < sources.length &&
    items.length < limit &&
    queries < MAX_QUERIES_PER_PAGE &&
    reads < MAX_READS_PER_PAGE
  ) {
    const from = sources[source];
    if (from === undefined) break;
    // Never more than the page still needs (nor more reads than it has left), so a page never stops in the
    // middle of what DynamoDB returned.
    const wanted = limit - items.length;
    let found: readonly StoredMessage[];
    let nextKey: PageKey | undefined;
    if (from.index === 'aggregate') {
      // The index holds keys only: each message is read by key and the filters apply to what was read, since
      // the index has no status, topic or createdAt to filter on.
      const page = await deps.outbox.aggregatePage({
        aggregateId: from.aggregateId,
        limit: Math.min(wanted, MAX_READS_PER_PAGE - reads),
        ...(startKey === undefined ? {} : { startKey }),
      });
      reads += page.items.length;
      found = (await deps.outbox.readMany(page.items, SUMMARY_ATTRIBUTES)).filter((item) =>
        matches(item, from.status, filters),
      );
      nextKey = page.nextKey;
    } else {
      const page = await deps.outbox.listPage({
        source: from,
        filters: {
          ...(filters.topic === undefined ? {} : { topic: filters.topic }),
          ...(filters.subscriber === undefined ? {} : { subscriber: filters.subscriber }),
          ...(filters.since === undefined ? {} : { since: filters.since }),
        },
        attributes: SUMMARY_ATTRIBUTES,
        limit: wanted,
        ...(startKey === undefined ? {} : { startKey }),
      });
      found = page.items;
      nextKey = page.nextKey;
    }
    queries += 1;
    items.push(...found.map(summarizeMessage));
    startKey = nextKey;
    if (startKey === undefined) source += 1;
  }
  return source < sources.length
    ? {
        items,
        cursor: encodeCursor({ fingerprint, source, ...(startKey === undefined ? {} : { key: startKey }) }),
      }
    : { items };
}

const STATUSES: readonly string[] = Object.values(MessageStatus);

function filtersOf(input: ListMessagesInput): Filters {
  const present = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
  const status = present(input.status);
  if (status !== undefined && !STATUSES.includes(status)) {
    throw new InvalidAdminRequestError('status', `must be one of ${STATUSES.join(', ')}, got ${status}`);
  }
  const since = present(input.since);
  const topic = present(input.topic);
  const subscriber = present(input.subscriber?.trim());
  const aggregateId = present(input.aggregateId);
  return {
    ...(status === undefined ? {} : { status: status as MessageStatus }),
    ...(topic === undefined ? {} : { topic }),
    ...(subscriber === undefined ? {} : { subscriber }),
    ...(aggregateId === undefined ? {} : { aggregateId }),
    ...(since === undefined ? {} : { since: instantOf('since', since) }),
  };
}

/** The index partitions that hold the messages `filters` select, in the order they are read. */
function sourcesFor(filters: Filters, shards: number, subscribers: readonly string[]): ListSource[] {
  if (filters.aggregateId !== undefined) {
    return [
      {
        index: 'aggregate',
        aggregateId: filters.aggregateId,
        ...(filters.status === undefined ? {} : { status: filters.status }),
      },
    ];
  }
  // The due index holds PENDING and SENT alike: a status filter picks one.
  const due = (status?: MessageStatus): ListSource[] =>
    dueShardKeys(shards, subscribers).map((shard) => ({
      index: 'due',
      shard,
      ...(status === undefined ? {} : { status }),
    }));
  const attention = (status: typeof MessageStatus.FAILED | typeof MessageStatus.CANCELLED): ListSource[] =>
    attentionPartitions(status, shards).map((partition) => ({ index: 'attention', partition }));
  switch (filters.status) {
    case MessageStatus.PENDING:
    case MessageStatus.SENT:
      return due(filters.status);
    case MessageStatus.FAILED:
    case MessageStatus.CANCELLED:
      return attention(filters.status);
    case MessageStatus.CONFIRMED:
      throw new ListFilterRequiredError(
        'CONFIRMED messages are listed only for an aggregateId: no other index holds them, and finding them otherwise would read every message',
      );
    case undefined:
      if (filters.topic === undefined && filters.subscriber === undefined && filters.since === undefined) {
        throw new ListFilterRequiredError(
          'give a status (PENDING, SENT, FAILED or CANCELLED), a topic, a subscriber, a since instant or an aggregateId: listing every message would read the whole table',
        );
      }
      // Everything the due and attention indexes hold: every status but CONFIRMED.
      return [...due(), ...attention(MessageStatus.FAILED), ...attention(MessageStatus.CANCELLED)];
  }
}

/** Whether a message read by key passes the filters a query of `source` would otherwise apply. */
function matches(
  item: Readonly<Record<string, unknown>>,
  status: MessageStatus | undefined,
  filters: Filters,
): boolean {
  if (status !== undefined && item.status !== status) return false;
  if (filters.topic !== undefined && item.topic !== filters.topic) return false;
  if (filters.subscriber !== undefined && item.subscriber !== filters.subscriber) return false;
  // ISO-8601 instants in UTC compare as text, as the FilterExpression compares them.
  return (
    filters.since === undefined || (typeof item.createdAt === 'string' && item.createdAt >= filters.since)
  );
}

interface CursorState {
  readonly fingerprint: string;
  readonly source: number;
  readonly key?: Record<string, unknown>;
}

function encodeCursor(state: CursorState): string {
  return Buffer.from(JSON.stringify({ v: 1, f: state.fingerprint, s: state.source, k: state.key })).toString(
    'base64url',
  );
}

/** Where the previous page stopped; refused when malformed or made for other filters. */
function decodeCursor(
  cursor: string,
  fingerprint: string,
): { readonly source: number; readonly key?: Record<string, unknown> } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidAdminRequestError('cursor', 'is not a cursor this listing returned');
  }
  const state = decoded as { v?: unknown; f?: unknown; s?: unknown; k?: unknown };
  const keyIsValid =
    state.k === undefined ||
    (typeof state.k === 'object' &&
      state.k !== null &&
      Object.values(state.k).every((value) => typeof value === 'string'));
  if (state.v !== 1 || !Number.isInteger(state.s) || (state.s as number) < 0 || !keyIsValid) {
    throw new InvalidAdminRequestError('cursor', 'is not a cursor this listing returned');
  }
  if (state.f !== fingerprint) {
    throw new InvalidAdminRequestError('cursor', 'belongs to a listing with other filters');
  }
  return {
    source: state.s as number,
    ...(state.k === undefined ? {} : { key: state.k as Record<string, unknown> }),
  };
}
