import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { OUTBOX_KEYS } from './outbox-item.ts';

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
  const ids: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await reader.client.send(
      new QueryCommand({
        TableName: reader.outboxTable,
        IndexName: aggregateIndex.name,
        KeyConditionExpression: '#aggregateId = :aggregateId',
        ExpressionAttributeNames: { '#aggregateId': aggregateIndex.partitionKey },
        ExpressionAttributeValues: { ':aggregateId': aggregateId },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    for (const item of page.Items ?? []) ids.push(String(item[OUTBOX_KEYS.partitionKey]));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return ids;
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

/** A ProjectionExpression of `attributes` (each once), every name a placeholder: `status` is a reserved word. */
function projectionOf(attributes: readonly string[]): {
  readonly ProjectionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
} {
  const names = Object.fromEntries([...new Set(attributes)].map((name, n) => [`#a${n}`, name]));
  return { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names };
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
