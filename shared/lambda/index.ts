/**
 * `serverless-outbox/lambda`: the shipped functions as handler factories, so a relay, a sweeper or a
 * consumer is a few lines, configured from the environment `TransactionalOutbox` sets.
 */
export { consumeSqsBatch, type SqsConsumer } from '../consumer/sqs-consumer.ts';
export { relayStreamBatch } from '../relay/relay-stream-batch.ts';
export { archiverStore, createArchiverHandler } from './archiver-handler.ts';
export { type ConsumerHandlerOptions, consumerParts, createConsumerHandler } from './consumer-handler.ts';
export { createLogger } from './create-logger.ts';
export { type EnvHandler, handlerFromEnv, isEnvHandler, type LambdaHandler } from './handler-from-env.ts';
export type { LogSink } from './log-sink.ts';
export { outboxWriterFromEnv } from './outbox-writer.ts';
export { createRelayHandler, type RelayParts, relayDeps } from './relay-handler.ts';
export { createSweeperHandler, sweeperDeps } from './sweeper-handler.ts';
