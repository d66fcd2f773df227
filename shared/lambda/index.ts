/**
 * `serverless-outbox/lambda`: the shipped functions as handler factories, so a relay, a sweeper, a consumer
 * or the admin API is a few lines, configured from the environment `TransactionalOutbox` sets.
 */

export type { LogSink } from '../observability/log-sink.ts';
export type { MetricsByTopic, TopicMetricValues } from '../observability/metric-names.ts';
export { consumeMetrics, sendMetrics } from '../observability/report-metrics.ts';
export { type ActorPolicy, adminActor, type CallerIdentity } from './admin-actor.ts';
export {
  type AdminHandlerOptions,
  type AdminRequestDeps,
  createAdminHandler,
  handleAdminRequest,
} from './admin-handler.ts';
export {
  type AdminCommand,
  DEFAULT_ADMIN_RATE_PER_SECOND,
  parseAdminRequest,
} from './admin-requests.ts';
export { archiverStore, createArchiverHandler } from './archiver-handler.ts';
export {
  type ConsumerClients,
  type ConsumerHandlerOptions,
  consumerParts,
  consumeSqsBatch,
  consumeSqsEvent,
  createConsumerHandler,
  type SqsConsumer,
} from './consumer-handler.ts';
export { createLogger } from './create-logger.ts';
export { createTracer } from './create-tracer.ts';
export { type EnvHandler, handlerFromEnv, isEnvHandler, type LambdaHandler } from './handler-from-env.ts';
export {
  createOutboxMetrics,
  type OutboxMetricsOptions,
  type OutboxMetricsPublisher,
} from './outbox-metrics-publisher.ts';
export { outboxWriterFromEnv } from './outbox-writer.ts';
export { applyReceiptEvent, createReceiptsHandler, type ReceiptBatchReport } from './receipts-handler.ts';
export { createRelayHandler, type RelayParts, relayDeps } from './relay-handler.ts';
export { type RelayedStreamBatch, relayStreamBatch, relayStreamEvent } from './relay-stream-batch.ts';
export type { ConflictKeys, ConsumedSqsBatch } from './sqs-batch-consumer.ts';
export { createSweeperHandler, sweeperDeps } from './sweeper-handler.ts';
