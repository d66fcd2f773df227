import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import { createMessage, MessageStatus } from '../../../shared/index.ts';
import { dueShardOf } from '../../../shared/memory/index.ts';
import { deliveryKey } from './drill-subscribers.ts';

/** How a rogue message is broken. */
export type RogueKind = 'bigint' | 'set' | 'oversized' | 'unreadable-number';

/** What the drill expects of a rogue message: FAILED, with a lastError that matches `reason`. */
export interface RogueMessage {
  readonly kind: RogueKind;
  readonly reason: RegExp;
}

/**
 * A rogue message to write: its id, what it must fail with, and its delivery rows (one per subscriber, keyed
 * `<messageId>#<subscriber>`, as the writer stores a message of a subscribed topic) as a Document client takes them.
 */
export interface RogueItem {
  readonly messageId: string;
  readonly expected: RogueMessage;
  readonly items: readonly Record<string, unknown>[];
}

/** Where and when the rogue messages are written. */
export interface RogueOptions {
  readonly now: Date;
  /** The due shards the sweepers query (each row is filed in one of them, due at once). */
  readonly dueShards: number;
  /** The subscribers the order topics are delivered to: each gets a delivery row. */
  readonly subscribers: readonly string[];
}

/** 2^64: DynamoDB stores it, JavaScript cannot read it back exactly (and JSON cannot write a bigint). */
const HUGE = 2n ** 64n;

/** Over SQS's 256 KiB per message, under DynamoDB's 400 KB per item. */
const OVERSIZED_NOTE_BYTES = 300 * 1024;

/**
 * The payloads an older version or another writer could have stored, which the writer now refuses: none can be
 * delivered unchanged, so each must end FAILED with the reason, alone, without holding up the rest.
 */
const ROGUE_PAYLOADS: readonly (RogueMessage & { readonly payload: Record<string, unknown> })[] = [
  {
    kind: 'bigint',
    payload: { total: HUGE },
    reason: new RegExp(
      `payload\\.total: (a bigint is not JSON|the stored number ${HUGE} cannot be read back)`,
    ),
  },
  {
    kind: 'set',
    payload: { tags: new Set(['gift', 'fragile']) },
    reason: /payload\.tags: a Set is not plain JSON/,
  },
  {
    kind: 'oversized',
    payload: { note: 'x'.repeat(OVERSIZED_NOTE_BYTES) },
    reason: /is \d+ bytes on the wire; SQS accepts at most 262144/,
  },
];

/** The rogue outbox items every drill writes straight into the outbox table, behind the writer's back. */
export function rogueOutboxItems(options: RogueOptions): RogueItem[] {
  return ROGUE_PAYLOADS.map(({ payload, ...expected }) => rogueItem(expected, payload, options));
}

/**
 * Rogue delivery rows only a low-level PutItem can write: a number JavaScript cannot read back (`1e20`), which the
 * Document client's default reader would throw on for the whole response it came in.
 */
export function rogueUnreadableNumberItem(options: RogueOptions): {
  readonly messageId: string;
  readonly expected: RogueMessage;
  readonly attributes: readonly Record<string, AttributeValue>[];
} {
  const { messageId, expected, items } = rogueItem(
    { kind: 'unreadable-number', reason: /payload\.amount: the stored number \S+ cannot be read back/ },
    { amount: 0 },
    options,
  );
  return {
    messageId,
    expected,
    attributes: items.map((item) => ({
      ...(marshall(item) as Record<string, AttributeValue>),
      payload: { M: { amount: { N: '1e20' } } },
    })),
  };
}

/** PENDING delivery rows of one message, due now, with `payload` as stored (never checked: that is the point). */
function rogueItem(
  expected: RogueMessage,
  payload: Record<string, unknown>,
  { now, dueShards, subscribers }: RogueOptions,
): RogueItem {
  const envelope = createMessage(
    { topic: ORDER_CREATED, aggregateId: `rogue-${expected.kind}`, payload: {} },
    now,
  );
  return {
    messageId: envelope.messageId,
    expected,
    items: subscribers.map((subscriber) => {
      const key = deliveryKey(envelope.messageId, subscriber);
      return {
        ...envelope,
        messageId: key,
        subscriber,
        payload,
        status: MessageStatus.PENDING,
        attempts: 0,
        resends: 0,
        nextAttemptAt: now.toISOString(),
        dueShard: dueShardOf(key, dueShards),
        updatedAt: now.toISOString(),
      };
    }),
  };
}
