/**
 * `serverless-outbox/testing`: in-memory DynamoDB (Document client) and SQS that behave like the services for
 * everything the outbox uses, so a service's own tests can run its writer, relay, consumer and sweeper
 * without an emulator.
 */
export { type MemoryChange, MemoryDocumentClient, type MemoryTableSchema } from './memory-document-client.ts';
export { type MemoryQueueSettings, MemoryQueues } from './memory-queues.ts';
