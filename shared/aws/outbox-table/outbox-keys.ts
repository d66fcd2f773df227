/** Which attributes an outbox index holds besides the keys (its projection in the table's definition). */
export interface OutboxIndexProjection {
  readonly type: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  /** With `INCLUDE`: the attributes copied besides the keys. */
  readonly nonKeyAttributes?: readonly string[];
}

const ALL_ATTRIBUTES: OutboxIndexProjection = { type: 'ALL' };

/** Key and index names of the outbox table; the CDK construct and the adapters both read these. */
export const OUTBOX_KEYS = {
  partitionKey: 'messageId',
  /**
   * Sparse GSI of messages the sweeper must look at: the index keys exist only while there is work
   * (PENDING, SENT awaiting confirmation, claimed) — the DynamoDB form of a relational outbox's index on
   * `(status, next_retry_time)`, which holds finished messages too.
   */
  dueIndex: {
    name: 'due',
    partitionKey: 'dueShard',
    sortKey: 'nextAttemptAt',
    // What the sweeper's claims, the backlog gauges and an operator's listing read — never the payload, headers or
    // history, so an entry stays one write unit however large the message. The sweeper gets the whole message
    // back from its claim.
    projection: {
      type: 'INCLUDE',
      nonKeyAttributes: [
        'status',
        'topic',
        'aggregateId',
        'createdAt',
        'updatedAt',
        'sentAt',
        'confirmBy',
        'attempts',
        'resends',
        'lastError',
        'outcome',
      ],
    },
  },
  /**
   * GSI to list an aggregate's messages (an order's page, GDPR erase). Keys only: its keys never change, so a
   * message costs this index one write (its insert) instead of one per status change; readers take the ids
   * from it and read each message by key.
   */
  aggregateIndex: {
    name: 'byAggregate',
    partitionKey: 'aggregateId',
    sortKey: 'messageId',
    projection: { type: 'KEYS_ONLY' },
  },
  /**
   * Sparse GSI of messages an operator must look at: the key `<status>#<shard>` exists only while the message
   * is FAILED or CANCELLED, spread over the due shards so that a mass failure has no hot key. Projection ALL.
   */
  attentionIndex: {
    name: 'attention',
    partitionKey: 'attentionKey',
    sortKey: 'createdAt',
    projection: ALL_ATTRIBUTES,
  },
  /**
   * Sparse GSI of ordered messages by their place in their aggregate's sequence: only messages of ordered topics
   * carry `orderKey` and `seq`. Keys only, written once per message (its keys never change); the sweeper finds a
   * message's predecessor here, and an operator the message at a gap.
   */
  orderIndex: {
    name: 'byOrderKey',
    partitionKey: 'orderKey',
    sortKey: 'seq',
    projection: { type: 'KEYS_ONLY' },
  },
  /** TTL attribute (epoch seconds), set when a message reaches a terminal state. */
  ttlAttribute: 'expiresAt',
} as const;
