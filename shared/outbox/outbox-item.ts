import {
  deliveryIdOf,
  subscriberOfKey,
  subscriberOrderKeyOf,
  unscopedKeyOf,
} from '../message/delivery-id.ts';
import type { Envelope } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import type { HistoryEntry } from './history.ts';

/** Partitions of the due index, spread so that no single key is hot. */
export const DEFAULT_DUE_SHARDS = 8;

/** The most due-index partitions: the sweeper queries every one of them in each round. */
export const MAX_DUE_SHARDS = 64;

/** How long a fresh message waits for the stream relay before the sweeper treats it as due. */
export const DEFAULT_STREAM_GRACE_MS = 60_000;

/** A message as stored in the outbox table. */
export interface OutboxItem extends Envelope {
  /**
   * The subscriber this row delivers to, when the topic is delivered to declared subscribers: the row is then that
   * subscriber's delivery, keyed `<messageId>#<subscriber>` (and, on an ordered topic, sequenced under
   * `<orderKey>#<subscriber>`), with its own status, attempts, rounds and due time. Absent on a message routed to
   * one queue, which is its own only delivery.
   */
  readonly subscriber?: string;
  readonly status: MessageStatus;
  readonly attempts: number;
  /** When the sweeper should next look at the message (ISO-8601); the due index's sort key. */
  readonly nextAttemptAt?: string;
  /** The due index's partition key; present only while the message has work left. */
  readonly dueShard?: string;
  readonly lastError?: string;
  /** Delivery rounds started by reconciliation because no confirmation came. */
  readonly resends?: number;
  /**
   * Sends SQS refused since the message was written (or last replayed), over every delivery round: the policy's
   * `maxAttempts` of them make it FAILED however many rounds reconciliation starts (a sender that stops between
   * its SENT mark and its send leaves a round that must be reconciled, and that round must not refill the budget).
   */
  readonly refusals?: number;
  /** Operator replays of the message; never reset (a replay resets `resends`), see {@link deliveryRoundOf}. */
  readonly replays?: number;
  readonly updatedAt: string;
  readonly sentAt?: string;
  /**
   * While SENT: when the sweeper should ask the downstream whether it applied the message (ISO-8601). Messages
   * SENT by a version without it carry the deadline in `nextAttemptAt` instead.
   */
  readonly confirmBy?: string;
  readonly confirmedAt?: string;
  /**
   * What the consumer recorded when it applied the message (`APPLIED`, a business outcome); set on CONFIRMED,
   * and on a CANCELLED message whose copy in flight was applied after the cancel.
   */
  readonly outcome?: string;
  readonly cancelledAt?: string;
  readonly leaseOwner?: string;
  readonly leaseUntil?: string;
  readonly expiresAt?: number;
  /** The attention index's partition key (`FAILED#3`); present only while the message is FAILED or CANCELLED. */
  readonly attentionKey?: string;
  /** Every status change and operator action, oldest first. */
  readonly history?: readonly HistoryEntry[];
}

/** More than the most reconciliation resends a message can have (a retry policy allows at most 1,000 rounds). */
const ROUNDS_PER_REPLAY = 1_001;

/**
 * The delivery round of a message, which its FIFO deduplication id carries: unique per (operator replay,
 * reconciliation resend) pair, since a replay starts `resends` again from 0 and a plain sum would repeat a round
 * SQS may still remember. Retries of one send keep it; each resend and each replay moves it on.
 */
export function deliveryRoundOf(item: Pick<OutboxItem, 'resends' | 'replays'>): number {
  return (item.replays ?? 0) * ROUNDS_PER_REPLAY + (item.resends ?? 0);
}

/**
 * The due-index partition of a row: a stable spread of its key over `shards` partitions, `<n>`. A subscriber's
 * delivery (key `<messageId>#<subscriber>`) has partitions of its own, `<n>#<subscriber>`: the sweeper reads a page
 * of every partition in each round, so one subscriber's backlog (an outage's resends) takes its own pages and never
 * fills the ones another subscriber's due deliveries are read from.
 */
export function dueShardOf(messageId: string, shards: number = DEFAULT_DUE_SHARDS): string {
  const shard = shardNumberOf(messageId, shards);
  const subscriber = subscriberOfKey(messageId);
  return subscriber === undefined ? shard : `${shard}#${subscriber}`;
}

/**
 * The due-index partitions, as the index keys spell them: `0 … shards - 1` (messages routed to one queue), then the
 * same for each of `subscribers` (`<n>#<subscriber>`, their deliveries).
 */
export function dueShardKeys(
  shards: number = DEFAULT_DUE_SHARDS,
  subscribers: readonly string[] = [],
): string[] {
  assertShardCount(shards);
  const plain = Array.from({ length: shards }, (_, shard) => String(shard));
  return [...plain, ...subscribers.flatMap((subscriber) => plain.map((shard) => `${shard}#${subscriber}`))];
}

/** A stable spread of `key` over `shards`: its number, as a string. */
function shardNumberOf(key: string, shards: number): string {
  assertShardCount(shards);
  let hash = 0;
  for (const char of key) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return String(hash % shards);
}

function assertShardCount(shards: number): void {
  // 0 or NaN would file the message under "NaN", a shard no sweeper ever queries.
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_DUE_SHARDS) {
    throw new RangeError(`due shards must be an integer from 1 to ${MAX_DUE_SHARDS}, got ${shards}`);
  }
}

/** Statuses the attention index holds: the ones an operator must act on or may undo. */
export const ATTENTION_STATUSES = [MessageStatus.FAILED, MessageStatus.CANCELLED] as const;

/** One of the {@link ATTENTION_STATUSES}. */
export type AttentionStatus = (typeof ATTENTION_STATUSES)[number];

/**
 * The attention-index partition of a row in `status`: `<status>#<n>`, the row key's shard number (a delivery's too:
 * an operator reads this index, not the sweeper, so it needs no partitions per subscriber).
 */
export function attentionKeyOf(status: AttentionStatus, messageId: string, shards?: number): string {
  return `${status}#${shardNumberOf(messageId, shards ?? DEFAULT_DUE_SHARDS)}`;
}

/** Every attention-index partition of `status`, one per due shard. */
export function attentionPartitions(status: AttentionStatus, shards: number = DEFAULT_DUE_SHARDS): string[] {
  return dueShardKeys(shards).map((shard) => `${status}#${shard}`);
}

/** Options for turning an envelope into a fresh outbox item. */
export interface NewOutboxItemOptions {
  readonly now: Date;
  readonly dueShards?: number;
  readonly streamGraceMs?: number;
}

/** A new PENDING outbox item for `envelope`, already due for the sweeper after the stream grace period. */
export function newOutboxItem(envelope: Envelope, options: NewOutboxItemOptions): OutboxItem {
  const graceMs = options.streamGraceMs ?? DEFAULT_STREAM_GRACE_MS;
  return {
    ...envelope,
    status: MessageStatus.PENDING,
    attempts: 0,
    nextAttemptAt: new Date(options.now.getTime() + graceMs).toISOString(),
    dueShard: dueShardOf(envelope.messageId, options.dueShards),
    updatedAt: options.now.toISOString(),
  };
}

/**
 * The new PENDING rows of `envelope`: one delivery per subscriber when its topic is delivered to `subscribers`
 * (each filed under its own due shard, so every delivery is found and retried on its own), else the one message row.
 */
export function newDeliveryItems(
  envelope: Envelope,
  subscribers: readonly string[],
  options: NewOutboxItemOptions,
): OutboxItem[] {
  if (subscribers.length === 0) return [newOutboxItem(envelope, options)];
  return subscribers.map((subscriber) => ({
    ...newOutboxItem(
      {
        ...envelope,
        messageId: deliveryIdOf(envelope.messageId, subscriber),
        ...(envelope.orderKey === undefined
          ? {}
          : { orderKey: subscriberOrderKeyOf(envelope.orderKey, subscriber) }),
      },
      options,
    ),
    subscriber,
  }));
}

/** The id of the message a row delivers (its key without the subscriber of a delivery row). */
export function messageIdOf(item: Pick<OutboxItem, 'messageId' | 'subscriber'>): string {
  return unscopedKeyOf(item.messageId, item.subscriber);
}

/** The order key of the message a row delivers, as the writer assigned it; undefined on an unordered topic. */
export function orderKeyOf(item: Pick<OutboxItem, 'orderKey' | 'subscriber'>): string | undefined {
  return item.orderKey === undefined ? undefined : unscopedKeyOf(item.orderKey, item.subscriber);
}
