import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClaimCheckObject } from '../claim-check/claim-check-reference.ts';
import type { ClaimCheckStore, ClaimCheckWriting } from '../claim-check/claim-check-store.ts';
import {
  ConfigError,
  MessageTooLargeError,
  SequenceConflictError,
  TransactionConditionError,
} from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import { messageSizeBytes } from '../message/message-size.ts';
import { assignSeqs, type CounterAdvance } from '../ordering/assign-seqs.ts';
import type { OrderingByTopic } from '../ordering/ordering.ts';
import { OUTBOX_WRITER_DEFAULTS, OUTBOX_WRITER_RANGES } from '../outbox/outbox-defaults.ts';
import { newDeliveryItems } from '../outbox/outbox-item.ts';
import {
  assertNoClaimCheckMarker,
  assertValidMessages,
  checkInLargePayloads,
  integerOption,
  type OutboxWrite,
  thresholdOf,
} from '../outbox/outbox-write.ts';
import {
  type CheckedTransaction,
  type TransactWriteAction,
  withinTransactionLimits,
} from '../transaction/transaction-limits.ts';
import { OUTBOX_KEYS } from './outbox-table/outbox-keys.ts';
import { type CounterRead, counterUpdate, readLastSeqs } from './sequence-table.ts';
import { sendTransaction } from './transact-write.ts';

/** Where and how the writer stores messages. */
export interface OutboxWriterOptions {
  readonly client: DynamoDBDocumentClient;
  readonly outboxTable: string;
  /**
   * Partitions of the due index; must equal the sweeper's (`TransactionalOutbox` sets both).
   * @default 8
   */
  readonly dueShards?: number;
  /**
   * How long a new message waits for the stream relay before the sweeper may send it, in ms.
   * @default 60000
   */
  readonly streamGraceMs?: number;
  /**
   * The largest message (body and attributes) the topic queues accept, in bytes; a larger one is refused here
   * rather than failing every send.
   * @default 262144 (SQS's 256 KiB)
   */
  readonly maxMessageBytes?: number;
  /**
   * Where payloads of messages larger than `thresholdBytes` on the wire go: each is put in S3 (under
   * `claim-check/<messageId>/`) before the transaction, and the message carries a reference instead.
   * @default - no claim check: a message larger than the queue accepts is refused
   */
  readonly claimCheck?: ClaimCheckWriting;
  /**
   * Which topics are ordered per aggregate (ORDERED_TOPICS): their messages get an `orderKey`
   * (`<scope>#<aggregateId>`) and a `seq` (1, 2, 3… per order key), which the consumers apply in order.
   * @default - no topic is ordered
   */
  readonly ordering?: OrderingByTopic;
  /**
   * The sequence table (SEQUENCE_TABLE): each order key's last seq, for ordered messages of an aggregate whose
   * version the write does not give (see `OutboxWrite.aggregateVersions`).
   * @default - none: an ordered message needs its aggregate's version
   */
  readonly sequenceTable?: string;
  /**
   * Per topic, the subscribers its messages are delivered to (SUBSCRIPTIONS): a message of such a topic is stored
   * as one delivery row per subscriber (`<messageId>#<subscriber>`), in the same transaction, each with its own
   * status, retries and confirmation. A topic not listed is stored as one row and sent to its one queue.
   * @default - no topic has subscribers
   */
  readonly subscribers?: Readonly<Record<string, readonly string[]>>;
  /** @default () => new Date() */
  readonly clock?: () => Date;
}

/** How often a write retries when other writers took the next seq of one of its order keys first. */
export const SEQUENCE_ATTEMPTS = 10;

/** What {@link outboxTransaction} needs besides the write: the writer's options, the time, the counters read. */
export type OutboxTransactionOptions = Omit<OutboxWriterOptions, 'client'> & {
  readonly now: Date;
  /**
   * The last seq of each counted order key as read from the sequence table; an order key not listed is taken
   * to have no counter yet (and the counter's condition insists on it).
   */
  readonly lastSeqs?: ReadonlyMap<string, number>;
};

/**
 * Builds the single TransactWriteItems list: the business actions first, then one Put per message, then one
 * Update per sequence counter the write moves (after the Puts, so business action indexes in a
 * TransactionConditionError stay as given). Each message is checked first: plain JSON payload, valid envelope, a
 * wire size the queue accepts, and no `orderKey` or `seq` of its own; messages of ordered topics get theirs here.
 */
export function outboxTransaction(
  write: OutboxWrite,
  options: OutboxTransactionOptions,
): TransactWriteAction[] {
  const storage = storageOf(options, options.now);
  assertValidMessages(write, storage.ordering);
  return transactionActions(write, storage, options.lastSeqs);
}

/**
 * Commits business items and outbox messages in ONE DynamoDB transaction: either the order and its
 * `order.created` message both exist, or neither does (and no stream record is produced). With `claimCheck`, the
 * payload of a message larger than the threshold is put in S3 first and the message carries a reference to it.
 * Messages of an ordered topic (`ordering`) are numbered per order key: from `aggregateVersions`, or from the
 * sequence table's counter, read before and moved in the same transaction — when another writer took the next seq
 * first, the write is numbered again and retried, up to {@link SEQUENCE_ATTEMPTS} times in all.
 * Throws, before anything is written (an ordered write numbered from counters reads them first, so that the
 * transaction checked is the one sent): InvalidMessageError (a payload that is not plain JSON, with the path of the
 * offending value; an `orderKey` or `seq` set by the caller), MessageTooLargeError (larger than the queue accepts),
 * TransactionLimitError (a DynamoDB limit), ConfigError (an ordered message to number without SEQUENCE_TABLE);
 * TransactionConditionError (each action's reason, business actions first) when a condition fails; and
 * SequenceConflictError when other writers kept taking the next seq first (nothing is written).
 * @example
 * await writeWithOutbox(options, {
 *   actions: [{ Put: { TableName: ordersTable, Item: order, ConditionExpression: 'attribute_not_exists(orderId)' } }],
 *   messages: [createMessage({ topic: 'order.created', aggregateId: order.orderId, payload: order })],
 * });
 */
export async function writeWithOutbox(options: OutboxWriterOptions, write: OutboxWrite): Promise<void> {
  const prepared = preparedWrite(options, write);
  for (let attempt = 1; attempt <= SEQUENCE_ATTEMPTS; attempt += 1) {
    const lastSeqs = prepared.counters === undefined ? undefined : await readLastSeqs(prepared.counters);
    const transaction = checkedTransaction(prepared, lastSeqs);
    // Objects after the checks, so a write DynamoDB would refuse leaves nothing behind at all; and before the
    // transaction, so a committed message always finds its object (one whose transaction fails is never referenced
    // and expires with the bucket's lifecycle rule on the prefix).
    if (attempt === 1) await storeObjects(options.claimCheck?.store, prepared.objects);
    try {
      await sendTransaction(options.client, transaction.actions, transaction.token);
      return;
    } catch (error) {
      // Only a write numbered from counters can lose a race for a seq; any other failure is the caller's.
      if (!lostTheSequenceRace(error, transaction.firstCounter)) throw error;
    }
  }
  throw new SequenceConflictError({
    orderKeys: prepared.counters?.orderKeys ?? [],
    attempts: SEQUENCE_ATTEMPTS,
  });
}

/** The options a message is stored with: each default taken, each number checked. */
interface MessageStorage {
  readonly outboxTable: string;
  readonly now: Date;
  readonly dueShards: number;
  readonly streamGraceMs: number;
  readonly maxMessageBytes: number;
  readonly ordering: OrderingByTopic | undefined;
  readonly sequenceTable: string | undefined;
  readonly subscribers: Readonly<Record<string, readonly string[]>>;
}

/** A write past every check that needs no counter: ready to number, build and send. */
interface PreparedWrite {
  /** The write to commit: valid messages, large payloads replaced by references to their objects. */
  readonly write: OutboxWrite;
  /** The claim-check objects to store before the transaction. */
  readonly objects: readonly ClaimCheckObject[];
  readonly storage: MessageStorage;
  /** The sequence counters to read before each attempt; `undefined`: the write moves none. */
  readonly counters: CounterRead | undefined;
  /** The first message id: the idempotency token, or its start. */
  readonly firstMessageId: string;
}

/** One attempt's transaction, checked against DynamoDB's limits, with its idempotency token. */
interface AttemptTransaction {
  readonly actions: CheckedTransaction;
  readonly token: string;
  /** The index of the first counter update (the list's length when there is none). */
  readonly firstCounter: number;
}

/**
 * The checks that come before anything is read or written, in order: at least one message, no claim-check marker
 * set by the producer, the options, no `orderKey` or `seq` set by the producer, valid envelopes; then the claim
 * check (pure: the objects are stored later).
 */
function preparedWrite(options: OutboxWriterOptions, write: OutboxWrite): PreparedWrite {
  if (write.messages.length === 0) throw new RangeError('writeWithOutbox needs at least one message');
  const now = (options.clock ?? (() => new Date()))();
  for (const message of write.messages) assertNoClaimCheckMarker(message);
  const claimCheck =
    options.claimCheck === undefined
      ? undefined
      : { bucket: options.claimCheck.bucket, thresholdBytes: thresholdOf(options.claimCheck) };
  const storage = storageOf(options, now);
  const orderKeys = assertValidMessages(write, storage.ordering);
  const checked = claimCheck === undefined ? { write, objects: [] } : checkInLargePayloads(write, claimCheck);
  return {
    ...checked,
    storage,
    // Without a sequence table, the build refuses the write with a ConfigError before anything is read.
    counters:
      orderKeys.length === 0 || storage.sequenceTable === undefined
        ? undefined
        : { client: options.client, sequenceTable: storage.sequenceTable, orderKeys },
    firstMessageId: write.messages[0]?.messageId ?? '',
  };
}

/** The attempt's transaction for the counters as read (`undefined`: none), built once and checked once. */
function checkedTransaction(
  prepared: PreparedWrite,
  lastSeqs: ReadonlyMap<string, number> | undefined,
): AttemptTransaction {
  const actions = withinTransactionLimits(transactionActions(prepared.write, prepared.storage, lastSeqs));
  const counters = prepared.counters;
  return {
    actions,
    // The first message id as the idempotency token: if the SDK retries a write whose response was lost,
    // DynamoDB answers the retry with success instead of failing the order's own condition (a false 409). With
    // counters, the token also names the values read, since the seqs (the content) follow from them: a retry of
    // the same attempt is recognised, and a new attempt is never mistaken for one already sent.
    token:
      counters === undefined
        ? prepared.firstMessageId
        : `${prepared.firstMessageId}-${countersTag(counters.orderKeys, lastSeqs ?? new Map())}`,
    firstCounter: actions.length - (counters?.orderKeys.length ?? 0),
  };
}

/** The options with their defaults, each number refused as its setting would refuse it. */
function storageOf(options: Omit<OutboxWriterOptions, 'client'>, now: Date): MessageStorage {
  return {
    outboxTable: options.outboxTable,
    now,
    dueShards: integerOption(
      OUTBOX_WRITER_RANGES.dueShards,
      options.dueShards ?? OUTBOX_WRITER_DEFAULTS.dueShards,
    ),
    streamGraceMs: integerOption(
      OUTBOX_WRITER_RANGES.streamGraceMs,
      options.streamGraceMs ?? OUTBOX_WRITER_DEFAULTS.streamGraceMs,
    ),
    maxMessageBytes: options.maxMessageBytes ?? OUTBOX_WRITER_DEFAULTS.maxMessageBytes,
    ordering: options.ordering,
    sequenceTable: options.sequenceTable,
    subscribers: options.subscribers ?? {},
  };
}

/**
 * The transaction's actions for checked messages: business actions, one Put per message numbered from `lastSeqs`,
 * one Update per counter moved. A ConfigError when there are counters but no sequence table, a
 * MessageTooLargeError for a message larger on the wire than the queue accepts.
 */
function transactionActions(
  write: OutboxWrite,
  storage: MessageStorage,
  lastSeqs: ReadonlyMap<string, number> | undefined,
): TransactWriteAction[] {
  const sequenced = assignSeqs(write.messages, {
    ordering: storage.ordering,
    aggregateVersions: write.aggregateVersions,
    lastSeqs,
  });
  const counterUpdates = counterUpdatesOf(sequenced.counters, storage.sequenceTable);
  const puts = sequenced.messages.flatMap((message) => messagePuts(message, storage));
  return [...write.actions, ...puts, ...counterUpdates];
}

/**
 * The message's Puts into the outbox: one per subscriber of its topic, else one; a MessageTooLargeError when the
 * queue would refuse it.
 */
function messagePuts(message: Envelope, storage: MessageStorage): TransactWriteAction[] {
  const actualBytes = messageSizeBytes(message);
  if (actualBytes > storage.maxMessageBytes) {
    throw new MessageTooLargeError(message.messageId, { actualBytes, maximumBytes: storage.maxMessageBytes });
  }
  const subscribers = Object.hasOwn(storage.subscribers, message.topic)
    ? storage.subscribers[message.topic]
    : [];
  return newDeliveryItems(message, subscribers ?? [], storage).map((item) => ({
    Put: {
      TableName: storage.outboxTable,
      Item: { ...item },
      // A reused message id (a client's idempotency key) must never overwrite a message.
      ConditionExpression: 'attribute_not_exists(#messageId)',
      ExpressionAttributeNames: { '#messageId': OUTBOX_KEYS.partitionKey },
    },
  }));
}

/** The counters' updates; a ConfigError naming SEQUENCE_TABLE when there are counters but no table. */
function counterUpdatesOf(
  counters: readonly CounterAdvance[],
  sequenceTable: string | undefined,
): TransactWriteAction[] {
  if (counters.length === 0) return [];
  if (sequenceTable === undefined) {
    throw new ConfigError(
      `SEQUENCE_TABLE is not set, and ${counters.map((counter) => counter.orderKey).join(', ')} of an ordered topic ` +
        "must be numbered from it: set it, or give the aggregate's version in the write's aggregateVersions",
    );
  }
  return counters.map((counter) => counterUpdate(sequenceTable, counter));
}

/** Puts every claim-check object (none without a store: there are objects only with a claim check). */
async function storeObjects(
  store: ClaimCheckStore | undefined,
  objects: readonly ClaimCheckObject[],
): Promise<void> {
  if (store !== undefined) await Promise.all(objects.map((object) => store.put(object)));
}

/**
 * Whether only counter conditions failed (the actions from `firstCounter` on): another writer took a seq the
 * write read as free. A business action's or a message's failed condition is the caller's to see, as it is.
 */
function lostTheSequenceRace(error: unknown, firstCounter: number): boolean {
  if (!(error instanceof TransactionConditionError)) return false;
  const failed = error.failedActions;
  return failed.length > 0 && failed.every((index) => index >= firstCounter);
}

/**
 * A short tag of the counters' values read: 32-bit FNV-1a in base 36, at most 7 characters, so the token
 * (`<messageId>-<tag>`, at most 34) stays within DynamoDB's 36.
 */
function countersTag(orderKeys: readonly string[], lastSeqs: ReadonlyMap<string, number>): string {
  let hash = 0x811c9dc5;
  for (const char of orderKeys.map((orderKey) => `${orderKey}=${lastSeqs.get(orderKey) ?? 0};`).join('')) {
    hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  }
  return hash.toString(36);
}
