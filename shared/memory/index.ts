/**
 * `serverless-outbox/testing`: in-memory DynamoDB (Document client), DynamoDB Streams, SQS and S3 (for
 * claim-checked payloads) that behave like the services for everything the outbox uses, so a service's own
 * tests can run its writer, relay, consumer and sweeper without an emulator.
 *
 * Exports marked "Tooling:" are library internals the repository's development tooling (the local runtime's
 * embedded backend, the drill, the bench) needs and takes from this entry, as it takes nothing from deeper
 * paths; they are not a stable API.
 */

/** Tooling: the audit table's keys, for an in-memory audit table's schema. */
export { AUDIT_KEYS } from '../aws/audit-table.ts';
/* The pipeline's parts the drill, the bench and the local runtime compose over the doubles above. */
export { cursorKeyOf, INBOX_KEYS, inboxDeliveryCheck } from '../aws/inbox-table.ts';
/**
 * Tooling: the producer's update of a delivery by its subscriber's receipt, on a clock of the caller's (the scale
 * drill's is simulated); `ReceiptConfirmer` below is the subscriber's half.
 */
export { DynamoDeliveryConfirmer } from '../aws/outbox-table/delivery-confirmer.ts';
export { OUTBOX_KEYS } from '../aws/outbox-table.ts';
export { SEQUENCE_KEYS } from '../aws/sequence-table.ts';
/** Tooling: what an outbox stream record announces to the relay: a message to send, or nothing. */
export { readStreamRecord } from '../aws/stream-records.ts';
export { APPLIED } from '../consumer/consume-message.ts';
export { DeadLetterCause, readDeadLetter } from '../consumer/dead-letter-cause.ts';
export { DEFAULT_VISIBILITY_BACKOFF } from '../consumer/failure-handling.ts';
export { OutboxMetricName, UNKNOWN_TOPIC } from '../observability/metric-names.ts';
export {
  OUTBOX_NAME_METADATA,
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_TOPICS_METADATA,
} from '../observability/resource-roles.ts';
export { DEFAULT_GAP_TIMEOUT_MS } from '../ordering/ordering.ts';
export { historyOf } from '../outbox/history.ts';
/** Tooling: a new PENDING outbox item for an envelope, as the writer puts it in the transaction. */
export { DEFAULT_DUE_SHARDS, dueShardOf, newOutboxItem } from '../outbox/outbox-item.ts';
export type { OutboxStore, SweepStore } from '../outbox/outbox-store.ts';
/** Tooling: a subscriber's confirmation by receipt, on a timer of the caller's (the scale drill's flushes at once). */
export { ReceiptConfirmer, type ReceiptQueue } from '../receipts/receipt-confirmer.ts';
export {
  MESSAGE_ATTRIBUTES,
  type MessagePublisher,
  type PublishOptions,
  type PublishResult,
} from '../relay/message-publisher.ts';
/** Tooling: the wire envelope the relay sends for an outbox item. */
export { type RelayDeps, toEnvelope } from '../relay/relay-messages.ts';
export { DEFAULT_RETRY_POLICY } from '../retry/retry-policy.ts';
export { DEFAULT_SWEEPER_SETTINGS, type SweeperSettings, type SweepReport, sweep } from '../sweeper/sweep.ts';
/** Tooling: DynamoDB's size of an item, as the writer checks its 400 KB limit. */
export { itemSizeBytes } from '../transaction/item-size.ts';
/** Tooling: DynamoDB numbers as the in-memory table keeps them (exact), and the error for an invalid one. */
export { canonicalNumber, exactNumber, InvalidNumberError, numberText } from './exact-numbers.ts';
/** Tooling: the in-memory table's item, and the error for an expression it does not evaluate. */
export { type Item, UnsupportedExpressionError } from './expressions.ts';
export {
  type MemoryChange,
  MemoryDocumentClient,
  type MemoryDocumentClientOptions,
  type MemoryIndexSchema,
  type MemoryTableSchema,
  type MemoryWriteOperation,
} from './memory-document-client.ts';
export {
  type MemoryLifecycleRule,
  MemoryObjectStore,
  MemoryObjectStoreError,
  type MemoryStoredObject,
} from './memory-object-store.ts';
/** Tooling: a queue's messages and FIFO bookkeeping, as the embedded backend's data dir keeps them. */
export type { MemoryQueueState } from './memory-queues.ts';
export {
  type MemoryMessageAttribute,
  type MemoryOutgoingMessage,
  type MemoryQueueCounts,
  MemoryQueueError,
  type MemoryQueueSettings,
  MemoryQueues,
  type MemoryReceivedMessage,
  type MemorySentMessage,
} from './memory-queues.ts';
/** Tooling: a stream's whole state, as the embedded backend's data dir keeps it. */
export type { MemoryStreamState } from './memory-streams.ts';
export {
  type MemoryShard,
  type MemoryStreamDescription,
  MemoryStreamError,
  type MemoryStreamRecord,
  MemoryStreams,
  type MemoryStreamsOptions,
  type ShardIteratorType,
  type StreamViewType,
} from './memory-streams.ts';
