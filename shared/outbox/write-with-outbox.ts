import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { counterUpdate, readLastSeqs } from '../aws/sequence-table.ts';
import { transactWrite } from '../aws/transact-write.ts';
import { CLAIM_CHECK_HEADER, type ClaimCheckObject, checkIn } from '../claim-check/claim-check-reference.ts';
import type { ClaimCheckWriting } from '../claim-check/claim-check-store.ts';
import {
  ConfigError,
  InvalidMessageError,
  MessageTooLargeError,
  SequenceConflictError,
  TransactionConditionError,
} from '../errors.ts';
import { assertValidMessage, type Envelope } from '../message/envelope.ts';
import {
  type AggregateVersions,
  assignSeqs,
  type CounterAdvance,
  countedOrderKeys,
} from '../ordering/assign-seqs.ts';
import type { OrderingByTopic } from '../ordering/ordering.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../relay/wire-format.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import {
  assertWithinTransactionLimits,
  type TransactWriteAction,
} from '../transaction/transaction-limits.ts';
import { newOutboxItem, OUTBOX_KEYS } from './outbox-item.ts';

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
  /** @default () => new Date() */
  readonly clock?: () => Date;
}

/** How often a write retries when other writers took the next seq of one of its order keys first. */
export const SEQUENCE_ATTEMPTS = 10;

/** Business actions and the messages that must follow them, committed together or not at all. */
export interface OutboxWrite {
  /** Business actions in lib-dynamodb form (Put / Update / Delete / ConditionCheck). */
  readonly actions: readonly TransactWriteAction[];
  /** Envelopes to put in the outbox (see `createMessage`). At least one. */
  readonly messages: readonly Envelope[];
  /**
   * For ordered topics: the version each aggregate has after this write, by aggregate id, when the business
   * actions set it under a condition (`version = V - 1`). That aggregate's ordered messages in the write take the
   * seqs ending at V (one message: seq V; two: V - 1 and V) and no sequence counter is read or written, since the
   * version's condition already keeps two writers from numbering the same place. The version must grow by the
   * number of the aggregate's ordered messages in each write, or a consumer waits for a seq that never comes.
   * @default - none: ordered messages are numbered from the sequence table
   */
  readonly aggregateVersions?: AggregateVersions;
}

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
  const dueShards = OutboxSettings.dueShards.validate(
    options.dueShards ?? OutboxSettings.dueShards.defaultValue ?? 1,
  );
  const streamGraceMs = OutboxSettings.streamGraceMs.validate(
    options.streamGraceMs ?? OutboxSettings.streamGraceMs.defaultValue ?? 0,
  );
  const maximumBytes = options.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  const sequenced = assignSeqs(write.messages, {
    ordering: options.ordering,
    aggregateVersions: write.aggregateVersions,
    lastSeqs: options.lastSeqs,
  });
  const counterUpdates = counterUpdatesOf(sequenced.counters, options.sequenceTable);
  const messagePuts = sequenced.messages.map((message): TransactWriteAction => {
    assertValidMessage(message);
    const actualBytes = messageSizeBytes(message);
    if (actualBytes > maximumBytes)
      throw new MessageTooLargeError(message.messageId, { actualBytes, maximumBytes });
    return {
      Put: {
        TableName: options.outboxTable,
        Item: { ...newOutboxItem(message, { now: options.now, dueShards, streamGraceMs }) },
        // A reused message id (a client's idempotency key) must never overwrite a message.
        ConditionExpression: 'attribute_not_exists(#messageId)',
        ExpressionAttributeNames: { '#messageId': OUTBOX_KEYS.partitionKey },
      },
    };
  });
  return [...write.actions, ...messagePuts, ...counterUpdates];
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

/** A write whose large payloads were moved into claim-check objects. */
export interface ClaimCheckedWrite {
  /** The write to commit: every large message replaced by one that refers to its object. */
  readonly write: OutboxWrite;
  /** The objects to store before the transaction, one per large message. */
  readonly objects: readonly ClaimCheckObject[];
}

/**
 * Moves the payload of every message larger than the threshold on the wire (body and attributes, as SQS counts
 * them) into a claim-check object; a message at or below it is left as it is. Pure.
 */
export function claimCheckWrite(
  write: OutboxWrite,
  claimCheck: Omit<ClaimCheckWriting, 'store'>,
): ClaimCheckedWrite {
  const thresholdBytes = OutboxSettings.claimCheckThresholdBytes.validate(
    claimCheck.thresholdBytes ?? OutboxSettings.claimCheckThresholdBytes.defaultValue ?? 0,
  );
  const objects: ClaimCheckObject[] = [];
  const messages = write.messages.map((message) => {
    assertValidMessage(message);
    assertNoClaimCheckMarker(message);
    if (messageSizeBytes(message) <= thresholdBytes) return message;
    const checkedIn = checkIn(message, { bucket: claimCheck.bucket });
    objects.push(checkedIn.object);
    return checkedIn.message;
  });
  return { write: { ...write, messages }, objects };
}

/** The claim-check marker is the library's: a producer setting it would make a consumer misread the payload. */
function assertNoClaimCheckMarker(message: Envelope): void {
  if (message.headers[CLAIM_CHECK_HEADER] !== undefined) {
    throw new InvalidMessageError(
      `headers["${CLAIM_CHECK_HEADER}"]`,
      'is set by the claim check only; use another header name',
    );
  }
}

/**
 * Commits business items and outbox messages in ONE DynamoDB transaction: either the order and its
 * `order.created` message both exist, or neither does (and no stream record is produced). With `claimCheck`, the
 * payload of a message larger than the threshold is put in S3 first and the message carries a reference to it.
 * Messages of an ordered topic (`ordering`) are numbered per order key: from `aggregateVersions`, or from the
 * sequence table's counter, read before and moved in the same transaction — when another writer took the next seq
 * first, the write is numbered again and retried, up to {@link SEQUENCE_ATTEMPTS} times in all.
 * Throws, before anything is sent: InvalidMessageError (a payload that is not plain JSON, with the path of the
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
  if (write.messages.length === 0) throw new RangeError('writeWithOutbox needs at least one message');
  const now = (options.clock ?? (() => new Date()))();
  for (const message of write.messages) assertNoClaimCheckMarker(message);
  const checked =
    options.claimCheck === undefined ? { write, objects: [] } : claimCheckWrite(write, options.claimCheck);
  // Refused before any object is stored, so a write DynamoDB would refuse leaves nothing behind at all. Counters
  // taken as absent: the counters' values do not change what is checked (the number of actions, the sizes).
  assertWithinTransactionLimits(outboxTransaction(checked.write, { ...options, now }));
  // Objects first, then the transaction: a committed message always finds its object, and an object whose
  // transaction fails is never referenced and expires with the bucket's lifecycle rule on the prefix.
  const store = options.claimCheck?.store;
  if (store !== undefined) await Promise.all(checked.objects.map((object) => store.put(object)));
  const orderKeys = countedOrderKeys(checked.write.messages, {
    ordering: options.ordering,
    aggregateVersions: write.aggregateVersions,
  });
  const firstMessageId = write.messages[0]?.messageId ?? '';
  if (orderKeys.length === 0 || options.sequenceTable === undefined) {
    // The first message id as the idempotency token: if the SDK retries a write whose response was lost,
    // DynamoDB answers the retry with success instead of failing the order's own condition (a false 409).
    await transactWrite(
      options.client,
      outboxTransaction(checked.write, { ...options, now }),
      firstMessageId,
    );
    return;
  }
  const counters = { client: options.client, sequenceTable: options.sequenceTable, orderKeys };
  for (let attempt = 1; attempt <= SEQUENCE_ATTEMPTS; attempt += 1) {
    const lastSeqs = await readLastSeqs(counters);
    const actions = outboxTransaction(checked.write, { ...options, now, lastSeqs });
    try {
      // The token names the counters read, since the seqs (the content) follow from them: a retry of the same
      // attempt is recognised, and a new attempt is never mistaken for one already sent.
      await transactWrite(options.client, actions, `${firstMessageId}-${countersTag(orderKeys, lastSeqs)}`);
      return;
    } catch (error) {
      if (!lostTheSequenceRace(error, actions.length - orderKeys.length)) throw error;
    }
  }
  throw new SequenceConflictError({ orderKeys, attempts: SEQUENCE_ATTEMPTS });
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
