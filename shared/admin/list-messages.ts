import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { MessageStatus } from '../message/message-status.ts';
import { readMessagesById } from '../outbox/aggregate-messages.ts';
import { attentionPartitions, dueShardKeys, OUTBOX_KEYS } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import { InvalidAdminRequestError, ListFilterRequiredError } from './admin-errors.ts';
import { instantOf, integerWithin } from './admin-input.ts';
import {
  type MessageSummary,
  projectionOf,
  SUMMARY_ATTRIBUTES,
  summarizeMessage,
} from './message-summary.ts';

/** Which messages to list; at least one filter, since listing every message would read the whole table. */
export interface ListMessagesInput {
  /** Any status; CONFIRMED only with an `aggregateId` (CONFIRMED messages are in no index but byAggregate). */
  readonly status?: string;
  readonly topic?: string;
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

/** One index partition a listing reads, in order. */
interface Source {
  readonly index: string;
  readonly partitionKey: string;
  readonly partitionValue: string;
  readonly sortKey: string;
  /** The due index holds PENDING and SENT alike: a status filter picks one. */
  readonly status?: MessageStatus;
  /**
   * The index holds keys only (byAggregate): each message is read by key and the filters apply to what was
   * read, since the index has no status, topic or createdAt to filter on.
   */
  readonly keysOnly?: boolean;
}

interface Filters {
  readonly status?: MessageStatus;
  readonly topic?: string;
  readonly aggregateId?: string;
  readonly since?: string;
}

/**
 * A page of message summaries, read through the indexes only — never a Scan: an aggregate's messages through
 * `byAggregate` (which holds their keys only: each message is then read by key and filtered as read); PENDING
 * and SENT through the due index, FAILED and CANCELLED through the attention index, shard after shard; a topic
 * or `since` without a status through both. The payload is never read.
 * Throws {@link ListFilterRequiredError} without a filter, or for CONFIRMED without an aggregate, and
 * {@link InvalidAdminRequestError} for a bad status, instant, limit or cursor.
 * @example
 * const { items, cursor } = await listMessages(deps, { status: 'FAILED', topic: 'order.created' });
 */
export async function listMessages(
  deps: Pick<AdminDeps, 'client' | 'outboxTable' | 'dueShards'>,
  input: ListMessagesInput,
): Promise<MessagePage> {
  const filters = filtersOf(input);
  const limit = integerWithin('limit', input.limit, {
    min: 1,
    max: LIST_LIMITS.maxLimit,
    fallback: LIST_LIMITS.defaultLimit,
  });
  const sources = sourcesFor(filters, deps.dueShards);
  const fingerprint = JSON.stringify([filters, deps.dueShards]);
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
    const page = await deps.client.send(
      new QueryCommand({
        TableName: deps.outboxTable,
        ...queryOf(from, filters),
        Limit: from.keysOnly ? Math.min(wanted, MAX_READS_PER_PAGE - reads) : wanted,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    queries += 1;
    let found = page.Items ?? [];
    if (from.keysOnly) {
      reads += found.length;
      found = (
        await readMessagesById(deps, { messageIds: found.map(idOf), attributes: SUMMARY_ATTRIBUTES })
      ).filter((item) => matches(item, from, filters));
    }
    items.push(...found.map(summarizeMessage));
    startKey = page.LastEvaluatedKey;
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
  const aggregateId = present(input.aggregateId);
  return {
    ...(status === undefined ? {} : { status: status as MessageStatus }),
    ...(topic === undefined ? {} : { topic }),
    ...(aggregateId === undefined ? {} : { aggregateId }),
    ...(since === undefined ? {} : { since: instantOf('since', since) }),
  };
}

/** The index partitions that hold the messages `filters` select, in the order they are read. */
function sourcesFor(filters: Filters, shards: number): Source[] {
  const { attentionIndex, dueIndex, aggregateIndex } = OUTBOX_KEYS;
  if (filters.aggregateId !== undefined) {
    return [
      {
        index: aggregateIndex.name,
        partitionKey: aggregateIndex.partitionKey,
        partitionValue: filters.aggregateId,
        sortKey: aggregateIndex.sortKey,
        ...(filters.status === undefined ? {} : { status: filters.status }),
        keysOnly: true,
      },
    ];
  }
  const due = (status?: MessageStatus): Source[] =>
    dueShardKeys(shards).map((shard) => ({
      index: dueIndex.name,
      partitionKey: dueIndex.partitionKey,
      partitionValue: shard,
      sortKey: dueIndex.sortKey,
      ...(status === undefined ? {} : { status }),
    }));
  const attention = (status: typeof MessageStatus.FAILED | typeof MessageStatus.CANCELLED): Source[] =>
    attentionPartitions(status, shards).map((partition) => ({
      index: attentionIndex.name,
      partitionKey: attentionIndex.partitionKey,
      partitionValue: partition,
      sortKey: attentionIndex.sortKey,
    }));
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
      if (filters.topic === undefined && filters.since === undefined) {
        throw new ListFilterRequiredError(
          'give a status (PENDING, SENT, FAILED or CANCELLED), a topic, a since instant or an aggregateId: listing every message would read the whole table',
        );
      }
      // Everything the due and attention indexes hold: every status but CONFIRMED.
      return [...due(), ...attention(MessageStatus.FAILED), ...attention(MessageStatus.CANCELLED)];
  }
}

/** The key condition, filter and projection of a query of one source; of a keys-only source, its key condition. */
function queryOf(source: Source, filters: Filters) {
  if (source.keysOnly === true) {
    return {
      IndexName: source.index,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': source.partitionKey },
      ExpressionAttributeValues: { ':pk': source.partitionValue },
    };
  }
  const names: Record<string, string> = { '#pk': source.partitionKey };
  const values: Record<string, unknown> = { ':pk': source.partitionValue };
  let keyCondition = '#pk = :pk';
  const conditions: string[] = [];
  if (filters.since !== undefined) {
    names['#createdAt'] = 'createdAt';
    values[':since'] = filters.since;
    // The attention index is sorted by createdAt: there `since` narrows the key range instead of filtering.
    if (source.sortKey === 'createdAt') keyCondition += ' AND #createdAt >= :since';
    else conditions.push('#createdAt >= :since');
  }
  if (source.status !== undefined) {
    names['#status'] = 'status';
    values[':status'] = source.status;
    conditions.push('#status = :status');
  }
  if (filters.topic !== undefined) {
    names['#topic'] = 'topic';
    values[':topic'] = filters.topic;
    conditions.push('#topic = :topic');
  }
  const projection = projectionOf(SUMMARY_ATTRIBUTES);
  return {
    IndexName: source.index,
    KeyConditionExpression: keyCondition,
    ...(conditions.length === 0 ? {} : { FilterExpression: conditions.join(' AND ') }),
    ProjectionExpression: projection.ProjectionExpression,
    ExpressionAttributeNames: { ...names, ...projection.ExpressionAttributeNames },
    ExpressionAttributeValues: values,
  };
}

/** The message id of an index entry. */
function idOf(key: Readonly<Record<string, unknown>>): string {
  return String(key[OUTBOX_KEYS.partitionKey]);
}

/** Whether a message read by key passes the filters a query of `source` would otherwise apply. */
function matches(item: Readonly<Record<string, unknown>>, source: Source, filters: Filters): boolean {
  if (source.status !== undefined && item.status !== source.status) return false;
  if (filters.topic !== undefined && item.topic !== filters.topic) return false;
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
