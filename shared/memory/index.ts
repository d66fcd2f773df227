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
/** Tooling: what an outbox stream record announces to the relay: a message to send, or nothing. */
export { readStreamRecord } from '../aws/stream-records.ts';
/** Tooling: a new PENDING outbox item for an envelope, as the writer puts it in the transaction. */
export { newOutboxItem } from '../outbox/outbox-item.ts';
/** Tooling: the wire envelope the relay sends for an outbox item. */
export { toEnvelope } from '../relay/relay-messages.ts';
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
