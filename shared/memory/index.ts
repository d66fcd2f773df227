/**
 * `serverless-outbox/testing`: in-memory DynamoDB (Document client), DynamoDB Streams, SQS and S3 (for
 * claim-checked payloads) that behave like the services for everything the outbox uses, so a service's own
 * tests can run its writer, relay, consumer and sweeper without an emulator.
 */
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
