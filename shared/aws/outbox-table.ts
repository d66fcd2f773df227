import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type {
  AttentionRange,
  ListPageQuery,
  OutboxAdminStore,
  Page,
  PageKey,
  StoredMessage,
} from '../admin/admin-ports.ts';
import { deliveryIdOf } from '../message/delivery-id.ts';
import { MessageStatus } from '../message/message-status.ts';
import { HistoryEvent } from '../outbox/history.ts';
import type { CancelMove, OperatorMove } from '../outbox/outbox-changes.ts';
import { dueShardOf, type OutboxItem } from '../outbox/outbox-item.ts';
import { TRANSITIONS } from '../outbox/state-machine.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { appendHistory } from './outbox-table/history-append.ts';
import { cancelUpdate, replayUpdate, SKIPPED_AT_ATTRIBUTE } from './outbox-table/operator-updates.ts';
import { OUTBOX_KEYS } from './outbox-table/outbox-keys.ts';
import type { OutboxUpdate } from './outbox-table/transition-updates.ts';

/**
 * The outbox table: its keys and indexes ({@link OUTBOX_KEYS}, which the CDK construct reads too), the store of
 * the relay, sweeper and consumers ({@link DynamoOutboxStore}), and every read and write of the admin
 * ({@link DynamoOutboxAdminStore}): the index queries of listing, counting and bulk replay, reads by key, the
 * aggregate and order index look-ups, the erase's deletes and the actions of replay, cancel and skip. The files
 * of `outbox-table/` are its parts: the keys, the conditional updates of every status change (transition, claim
 * and operator updates, with their history entries), the tolerant read of a stored item and the store.
 */
export { DynamoOutboxStore, type DynamoOutboxStoreOptions } from './outbox-table/dynamo-outbox-store.ts';
export { DynamoOutboxConfirmer, type DynamoOutboxConfirmerOptions } from './outbox-table/outbox-confirmer.ts';
export { OUTBOX_KEYS, type OutboxIndexProjection } from './outbox-table/outbox-keys.ts';
export { DynamoRelayStore } from './outbox-table/relay-store.ts';
export { CONFIRMATION_ATTRIBUTES, CONFIRMATION_RETURN_VALUES } from './outbox-table/transition-updates.ts';

/** Messages read by key at once: enough to hide the round trips, few enough to stay clear of throttling. */
export const DEFAULT_READ_CONCURRENCY = 10;

/** Where the outbox is and how to read it. */
export interface OutboxReader {
  readonly client: Pick<DynamoDBDocumentClient, 'send'>;
  readonly outboxTable: string;
}

/** What to read of an aggregate's messages. */
export interface AggregateMessagesOptions {
  readonly aggregateId: string;
  /** The attributes the caller needs of each message; `messageId` is always read. */
  readonly attributes: readonly string[];
  /** GetItem calls in flight at once. @default {@link DEFAULT_READ_CONCURRENCY} */
  readonly concurrency?: number;
}

/** Which messages to read by key. */
export interface MessagesByIdOptions {
  /** Message ids, in the order the result keeps. */
  readonly messageIds: readonly string[];
  /** The attributes the caller needs of each message; `messageId` is always read. */
  readonly attributes: readonly string[];
  /** GetItem calls in flight at once. @default {@link DEFAULT_READ_CONCURRENCY} */
  readonly concurrency?: number;
}

/**
 * Every message of an aggregate, oldest id first: the ids from the `byAggregate` index (every page; the index
 * holds keys only, so that a status change never rewrites it), then each message by key with only `attributes`.
 * A message deleted between the two reads is left out. The index lags writes by a moment, so a message written
 * just now may be missing; a message read by key shows its status as stored (an eventually consistent read).
 * @example
 * const messages = await readAggregateMessages(
 *   { client, outboxTable },
 *   { aggregateId: 'order-17', attributes: ['status', 'topic'] },
 * );
 */
export async function readAggregateMessages(
  reader: OutboxReader,
  options: AggregateMessagesOptions,
): Promise<Record<string, unknown>[]> {
  const messageIds = await aggregateMessageIds(reader, options.aggregateId);
  return readMessagesById(reader, {
    messageIds,
    attributes: options.attributes,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  });
}

/** The ids of an aggregate's messages in the `byAggregate` index, across query pages (a page stops at 1 MB). */
export async function aggregateMessageIds(reader: OutboxReader, aggregateId: string): Promise<string[]> {
  const { aggregateIndex } = OUTBOX_KEYS;
  const keys = await queryAll(reader.client, {
    TableName: reader.outboxTable,
    IndexName: aggregateIndex.name,
    KeyConditionExpression: '#aggregateId = :aggregateId',
    ExpressionAttributeNames: { '#aggregateId': aggregateIndex.partitionKey },
    ExpressionAttributeValues: { ':aggregateId': aggregateId },
  });
  return keys.map((item) => String(item[OUTBOX_KEYS.partitionKey]));
}

/** Every item a query matches, across its pages (a page stops at 1 MB). */
async function queryAll(
  client: Pick<DynamoDBDocumentClient, 'send'>,
  input: QueryCommandInput,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({ ...input, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/**
 * The messages `messageIds` name, in that order, each read by key with only `attributes` and at most
 * `concurrency` reads in flight; a message that no longer exists is left out. The first failed read fails the
 * whole call.
 */
export async function readMessagesById(
  reader: OutboxReader,
  options: MessagesByIdOptions,
): Promise<Record<string, unknown>[]> {
  const concurrency = options.concurrency ?? DEFAULT_READ_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`read concurrency must be a positive integer, got ${concurrency}`);
  }
  const projection = projectionOf([OUTBOX_KEYS.partitionKey, ...options.attributes]);
  const read = await mapWithConcurrency(options.messageIds, concurrency, async (messageId) => {
    const found = await reader.client.send(
      new GetCommand({
        TableName: reader.outboxTable,
        Key: { [OUTBOX_KEYS.partitionKey]: messageId },
        ...projection,
      }),
    );
    return found.Item;
  });
  return read.filter((item): item is Record<string, unknown> => item !== undefined);
}

/** `work` applied to each item with at most `concurrency` calls pending; results in the items' order. */
async function mapWithConcurrency<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    // After a failure the other workers finish the read they started and stop: no new reads for a lost cause.
    while (!failed && next < items.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await work(items[index] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** A ProjectionExpression of `attributes` (each once), every name a placeholder: `status` is a reserved word. */
function projectionOf(attributes: readonly string[]): {
  readonly ProjectionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
} {
  const names = Object.fromEntries([...new Set(attributes)].map((name, n) => [`#p${n}`, name]));
  return { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names };
}

/** Settings of the admin's outbox store. */
export interface DynamoOutboxAdminStoreOptions {
  readonly client: Pick<DynamoDBDocumentClient, 'send'>;
  readonly outboxTable: string;
}

/** {@link OutboxAdminStore} on the DynamoDB outbox table: reads through the indexes and by key, never a Scan. */
export class DynamoOutboxAdminStore implements OutboxAdminStore {
  readonly #client: Pick<DynamoDBDocumentClient, 'send'>;
  readonly #table: string;

  constructor(options: DynamoOutboxAdminStoreOptions) {
    this.#client = options.client;
    this.#table = options.outboxTable;
  }

  /** @inheritdoc */
  async listPage(query: ListPageQuery): Promise<Page<StoredMessage>> {
    const { source, filters } = query;
    const index = source.index === 'due' ? OUTBOX_KEYS.dueIndex : OUTBOX_KEYS.attentionIndex;
    const partitionValue = source.index === 'due' ? source.shard : source.partition;
    const status = source.index === 'due' ? source.status : undefined;
    const names: Record<string, string> = { '#pk': index.partitionKey };
    const values: Record<string, unknown> = { ':pk': partitionValue };
    let keyCondition = '#pk = :pk';
    const conditions: string[] = [];
    if (filters.since !== undefined) {
      names['#createdAt'] = 'createdAt';
      values[':since'] = filters.since;
      // The attention index is sorted by createdAt: there `since` narrows the key range instead of filtering.
      if (index.sortKey === 'createdAt') keyCondition += ' AND #createdAt >= :since';
      else conditions.push('#createdAt >= :since');
    }
    if (status !== undefined) {
      names['#status'] = 'status';
      values[':status'] = status;
      conditions.push('#status = :status');
    }
    if (filters.topic !== undefined) {
      names['#topic'] = 'topic';
      values[':topic'] = filters.topic;
      conditions.push('#topic = :topic');
    }
    // The due index does not hold `subscriber`: there a delivery's subscriber is read from its key, after the query.
    const byKey = source.index === 'due';
    if (filters.subscriber !== undefined && !byKey) {
      names['#subscriber'] = SUBSCRIBER_ATTRIBUTE;
      values[':subscriber'] = filters.subscriber;
      conditions.push('#subscriber = :subscriber');
    }
    const projection = projectionOf(
      byKey ? dueIndexAttributes(query.attributes, filters.subscriber !== undefined) : query.attributes,
    );
    const page = await this.#client.send(
      new QueryCommand({
        TableName: this.#table,
        IndexName: index.name,
        KeyConditionExpression: keyCondition,
        ...(conditions.length === 0 ? {} : { FilterExpression: conditions.join(' AND ') }),
        ProjectionExpression: projection.ProjectionExpression,
        ExpressionAttributeNames: { ...names, ...projection.ExpressionAttributeNames },
        ExpressionAttributeValues: values,
        Limit: query.limit,
        ...(query.startKey === undefined ? {} : { ExclusiveStartKey: { ...query.startKey } }),
      }),
    );
    let items = page.Items ?? [];
    if (byKey) {
      items = withSubscriberOfKey(items, query.attributes);
      if (filters.subscriber !== undefined) {
        items = items.filter(
          (item) => subscriberOfKey(item[OUTBOX_KEYS.partitionKey]) === filters.subscriber,
        );
      }
    }
    return pageOf(items, page.LastEvaluatedKey);
  }

  /** @inheritdoc */
  async aggregatePage(query: {
    readonly aggregateId: string;
    readonly limit: number;
    readonly startKey?: PageKey;
  }): Promise<Page<string>> {
    const { aggregateIndex } = OUTBOX_KEYS;
    const page = await this.#client.send(
      new QueryCommand({
        TableName: this.#table,
        IndexName: aggregateIndex.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': aggregateIndex.partitionKey },
        ExpressionAttributeValues: { ':pk': query.aggregateId },
        Limit: query.limit,
        ...(query.startKey === undefined ? {} : { ExclusiveStartKey: { ...query.startKey } }),
      }),
    );
    return pageOf(
      (page.Items ?? []).map((key) => String(key[OUTBOX_KEYS.partitionKey])),
      page.LastEvaluatedKey,
    );
  }

  /** @inheritdoc */
  async readPartition(
    partition:
      | { readonly index: 'due'; readonly shard: string }
      | { readonly index: 'attention'; readonly partition: string },
    attributes: readonly string[],
  ): Promise<StoredMessage[]> {
    return readOutboxPartition(this.#reader(), partition, attributes);
  }

  /** @inheritdoc */
  async readAttentionRange(range: AttentionRange): Promise<StoredMessage[]> {
    const { attentionIndex } = OUTBOX_KEYS;
    const bounds =
      range.from !== undefined && range.to !== undefined
        ? ' AND #createdAt BETWEEN :from AND :to'
        : range.from !== undefined
          ? ' AND #createdAt >= :from'
          : range.to !== undefined
            ? ' AND #createdAt <= :to'
            : '';
    const projection = projectionOf(['messageId', 'status', 'createdAt', SUBSCRIBER_ATTRIBUTE]);
    return queryAll(this.#client, {
      TableName: this.#table,
      IndexName: attentionIndex.name,
      KeyConditionExpression: `#attentionKey = :partition${bounds}`,
      FilterExpression: `#topic = :topic${range.subscriber === undefined ? '' : ' AND #subscriber = :subscriber'}`,
      ProjectionExpression: projection.ProjectionExpression,
      ExpressionAttributeNames: {
        '#attentionKey': attentionIndex.partitionKey,
        '#topic': 'topic',
        ...(range.subscriber === undefined ? {} : { '#subscriber': SUBSCRIBER_ATTRIBUTE }),
        ...(bounds === '' ? {} : { '#createdAt': attentionIndex.sortKey }),
        ...projection.ExpressionAttributeNames,
      },
      ExpressionAttributeValues: {
        ':partition': range.partition,
        ':topic': range.topic,
        ...(range.subscriber === undefined ? {} : { ':subscriber': range.subscriber }),
        ...(range.from === undefined ? {} : { ':from': range.from }),
        ...(range.to === undefined ? {} : { ':to': range.to }),
      },
    });
  }

  /** @inheritdoc */
  async read(messageId: string): Promise<StoredMessage | undefined> {
    const { Item } = await this.#client.send(
      new GetCommand({
        TableName: this.#table,
        Key: { [OUTBOX_KEYS.partitionKey]: messageId },
        ConsistentRead: true,
      }),
    );
    return Item;
  }

  /** @inheritdoc */
  readMany(messageIds: readonly string[], attributes: readonly string[]): Promise<StoredMessage[]> {
    return readMessagesById(this.#reader(), { messageIds, attributes });
  }

  /** @inheritdoc */
  readAggregate(aggregateId: string, attributes: readonly string[]): Promise<StoredMessage[]> {
    return readAggregateMessages(this.#reader(), { aggregateId, attributes });
  }

  /** @inheritdoc */
  async readInSequence(at: {
    readonly orderKey: string;
    readonly seq: number;
    readonly after?: boolean;
  }): Promise<{ readonly messageId: string; readonly item: StoredMessage } | undefined> {
    const index = OUTBOX_KEYS.orderIndex;
    const condition = at.after === true ? '#seq > :seq' : '#seq = :seq';
    const found = await this.#client.send(
      new QueryCommand({
        TableName: this.#table,
        IndexName: index.name,
        KeyConditionExpression: `#orderKey = :orderKey AND ${condition}`,
        ExpressionAttributeNames: { '#orderKey': index.partitionKey, '#seq': index.sortKey },
        ExpressionAttributeValues: { ':orderKey': at.orderKey, ':seq': at.seq },
        Limit: 1,
      }),
    );
    // A seq is given once per order key; the index is eventually consistent, so the item is read by key.
    const id = found.Items?.[0]?.[OUTBOX_KEYS.partitionKey];
    if (typeof id !== 'string') return undefined;
    const item = await this.read(id);
    return item === undefined ? undefined : { messageId: id, item };
  }

  /** @inheritdoc */
  async deleteFinished(messageId: string): Promise<StoredMessage | 'IN_FLIGHT' | undefined> {
    try {
      const deleted = await this.#client.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: { [OUTBOX_KEYS.partitionKey]: messageId },
          ConditionExpression: 'NOT (#status IN (:pending, :sent))',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':pending': MessageStatus.PENDING, ':sent': MessageStatus.SENT },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return deleted.Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'IN_FLIGHT';
      throw error;
    }
  }

  /** @inheritdoc */
  skippedAtOf(message: StoredMessage): string | undefined {
    const skippedAt = message[SKIPPED_AT_ATTRIBUTE];
    return typeof skippedAt === 'string' ? skippedAt : undefined;
  }

  /** @inheritdoc */
  replayAction(move: OperatorMove): TransactWriteAction {
    return transactUpdate(this.#table, replayUpdate(move));
  }

  /** @inheritdoc */
  cancelAction(move: CancelMove): TransactWriteAction {
    return transactUpdate(this.#table, cancelUpdate(move));
  }

  /** @inheritdoc */
  markSkippedAction(at: { readonly messageId: string; readonly now: Date }): TransactWriteAction {
    return {
      Update: {
        TableName: this.#table,
        Key: { [OUTBOX_KEYS.partitionKey]: at.messageId },
        UpdateExpression: 'SET #updatedAt = :now, #skippedAt = if_not_exists(#skippedAt, :now)',
        ConditionExpression: '#status = :cancelled',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#updatedAt': 'updatedAt',
          '#skippedAt': SKIPPED_AT_ATTRIBUTE,
        },
        ExpressionAttributeValues: { ':cancelled': MessageStatus.CANCELLED, ':now': at.now.toISOString() },
      },
    };
  }

  /** @inheritdoc */
  dueNowAction(at: { readonly messageId: string; readonly now: Date }): TransactWriteAction {
    // Conditional on it still being PENDING and unclaimed, so a sweeper's claim in between (which moves
    // `nextAttemptAt` to its lease's end) is never undone.
    return {
      Update: {
        TableName: this.#table,
        Key: { [OUTBOX_KEYS.partitionKey]: at.messageId },
        UpdateExpression: 'SET #nextAttemptAt = :now, #updatedAt = :now',
        ConditionExpression: '#status = :pending AND attribute_not_exists(#leaseOwner)',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
          '#updatedAt': 'updatedAt',
          '#leaseOwner': 'leaseOwner',
        },
        ExpressionAttributeValues: { ':pending': MessageStatus.PENDING, ':now': at.now.toISOString() },
      },
    };
  }

  /** @inheritdoc */
  insertAction(item: OutboxItem): TransactWriteAction {
    return {
      Put: {
        TableName: this.#table,
        Item: { ...item },
        ConditionExpression: 'attribute_not_exists(#messageId)',
        ExpressionAttributeNames: { '#messageId': OUTBOX_KEYS.partitionKey },
      },
    };
  }

  /** @inheritdoc */
  resendAction(move: {
    readonly messageId: string;
    readonly now: Date;
    readonly by: string;
    readonly reason: string;
    readonly dueShards: number;
  }): TransactWriteAction {
    return transactUpdate(this.#table, resendUpdate(move));
  }

  #reader(): OutboxReader {
    return { client: this.#client, outboxTable: this.#table };
  }
}

/** An outbox update as an action of a TransactWriteItems. */
export function transactUpdate(tableName: string, update: OutboxUpdate): TransactWriteAction {
  return { Update: { ...update, TableName: tableName, UpdateExpression: update.UpdateExpression } };
}

/**
 * SENT → PENDING for a successor the consumer holds parked: a new delivery round (`resends` + 1, so a FIFO
 * queue's deduplication id changes; attempts back to 0), due now in the due index, any sweeper lease dropped (its
 * conditional release or requeue then fails harmlessly). The relay forwards inserts only, so the sweeper sends it.
 * Conditional on it still being SENT.
 */
function resendUpdate(move: {
  readonly messageId: string;
  readonly now: Date;
  readonly by: string;
  readonly reason: string;
  readonly dueShards: number;
}): OutboxUpdate {
  const history = appendHistory({
    at: move.now.toISOString(),
    event: HistoryEvent.REQUEUED,
    from: TRANSITIONS.requeue.from[0],
    to: TRANSITIONS.requeue.to,
    by: move.by,
    reason: move.reason,
  });
  return {
    Key: { [OUTBOX_KEYS.partitionKey]: move.messageId },
    UpdateExpression: `SET #status = :to, #attempts = :zero, #resends = if_not_exists(#resends, :zero) + :one, #nextAttemptAt = :now, #dueShard = :shard, #updatedAt = :now, ${history.set} REMOVE #leaseOwner, #leaseUntil`,
    ConditionExpression: '#status = :from',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#attempts': 'attempts',
      '#resends': 'resends',
      '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
      '#dueShard': OUTBOX_KEYS.dueIndex.partitionKey,
      '#updatedAt': 'updatedAt',
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
      ...history.names,
    },
    ExpressionAttributeValues: {
      ':from': TRANSITIONS.requeue.from[0],
      ':to': TRANSITIONS.requeue.to,
      ':zero': 0,
      ':one': 1,
      ':now': move.now.toISOString(),
      ':shard': dueShardOf(move.messageId, move.dueShards),
      ...history.values,
    },
  };
}

function pageOf<T>(items: readonly T[], lastKey: Record<string, unknown> | undefined): Page<T> {
  return lastKey === undefined ? { items } : { items, nextKey: lastKey };
}

/**
 * Every item of one due-index shard or attention partition, with only `attributes`: what the backlog count reads.
 * A function of its own (not only a method of the admin store), so the sweeper's bundle carries just this query.
 * A delivery's `subscriber`, when asked for, comes from its key on the due index, which does not hold the attribute.
 */
export async function readOutboxPartition(
  { client, outboxTable }: OutboxReader,
  partition:
    | { readonly index: 'due'; readonly shard: string }
    | { readonly index: 'attention'; readonly partition: string },
  attributes: readonly string[],
): Promise<StoredMessage[]> {
  const [index, value] =
    partition.index === 'due'
      ? [OUTBOX_KEYS.dueIndex, partition.shard]
      : [OUTBOX_KEYS.attentionIndex, partition.partition];
  const byKey = partition.index === 'due';
  const projection = projectionOf(byKey ? dueIndexAttributes(attributes) : attributes);
  const items = await queryAll(client, {
    TableName: outboxTable,
    IndexName: index.name,
    KeyConditionExpression: '#pk = :pk',
    ProjectionExpression: projection.ProjectionExpression,
    ExpressionAttributeNames: { '#pk': index.partitionKey, ...projection.ExpressionAttributeNames },
    ExpressionAttributeValues: { ':pk': value },
  });
  return byKey ? withSubscriberOfKey(items, attributes) : items;
}

/** The attribute of a delivery row naming its subscriber. */
const SUBSCRIBER_ATTRIBUTE = 'subscriber';

/**
 * The attributes to read of the due index for `attributes`: it does not hold `subscriber` (an index's projection is
 * fixed when the table is created), so the key, which names a delivery's subscriber, is read in its place.
 */
function dueIndexAttributes(attributes: readonly string[], keyNeeded = false): string[] {
  return keyNeeded || attributes.includes(SUBSCRIBER_ATTRIBUTE)
    ? [...attributes.filter((name) => name !== SUBSCRIBER_ATTRIBUTE), OUTBOX_KEYS.partitionKey]
    : [...attributes];
}

/** Items of the due index with `subscriber` set from each delivery's key, when `attributes` asks for it. */
function withSubscriberOfKey(
  items: readonly Record<string, unknown>[],
  attributes: readonly string[],
): Record<string, unknown>[] {
  if (!attributes.includes(SUBSCRIBER_ATTRIBUTE)) return [...items];
  return items.map((item) => {
    const subscriber = subscriberOfKey(item[OUTBOX_KEYS.partitionKey]);
    return subscriber === undefined ? item : { ...item, [SUBSCRIBER_ATTRIBUTE]: subscriber };
  });
}

/**
 * The subscriber a delivery's key names (`<messageId>#<subscriber>`, made by `deliveryIdOf`); `undefined` for a
 * message's own id. A message id is a ULID, which holds no `#`.
 */
function subscriberOfKey(key: unknown): string | undefined {
  if (typeof key !== 'string') return undefined;
  const at = key.indexOf('#');
  if (at < 1) return undefined;
  const subscriber = key.slice(at + 1);
  return deliveryIdOf(key.slice(0, at), subscriber) === key ? subscriber : undefined;
}
