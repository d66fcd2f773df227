/**
 * `serverless-outbox`: what a service writes and consumes with. Write business items and the messages that must
 * follow them in one DynamoDB transaction (payloads too large for SQS through an S3 claim check), read an
 * aggregate's messages back (each once, with its deliveries to subscribers), and consume messages exactly once in
 * effect — with the errors each step names.
 *
 * The other entries: handler factories in `serverless-outbox/lambda`, the CDK construct in `serverless-outbox/cdk`,
 * the operator APIs (list, show, replay, cancel, skip, redrive, stats, erase, audit) in `serverless-outbox/admin`,
 * and in-memory DynamoDB, streams, SQS and S3 for tests in `serverless-outbox/testing`.
 */
export { type AwsClientConfig, awsClientConfig, createDocumentClient } from './aws/clients.ts';
export { DynamoOutboxStore, readAggregateMessages } from './aws/outbox-table.ts';
export {
  type OutboxTransactionOptions,
  type OutboxWriterOptions,
  outboxTransaction,
  writeWithOutbox,
} from './aws/outbox-writer.ts';
export { S3ClaimCheckStore } from './aws/s3-claim-check-store.ts';
export { ClaimCheckIntegrityError, ClaimCheckObjectMissingError } from './claim-check/claim-check-errors.ts';
export type {
  ClaimCheckReading,
  ClaimCheckStore,
  ClaimCheckWriting,
} from './claim-check/claim-check-store.ts';
export { resolveClaimCheck } from './claim-check/resolve-claim-check.ts';
export type { ConsumeResult, EffectPlan, PlanEffect } from './consumer/consume-message.ts';
export {
  ConfigError,
  describeError,
  InvalidMessageError,
  MessageTooLargeError,
  OutboxError,
  OutboxErrorCode,
  OutOfTimeError,
  PoisonMessageError,
  SequenceConflictError,
  TransactionConditionError,
  TransactionConflictError,
  TransactionLimitError,
} from './errors.ts';
export { type ConsumeDeps, consumeMessage } from './lambda/inbox-consumer.ts';
export { createMessage, type Envelope, type NewMessage, parseEnvelope } from './message/envelope.ts';
export { MessageStatus } from './message/message-status.ts';
export { loggableError } from './observability/loggable-error.ts';
export { xrayTraceHeader } from './observability/xray-trace-header.ts';
export { type OrderedTopic, type OrderingByTopic, orderedTopic, orderKeyOf } from './ordering/ordering.ts';
export { gatherDeliveries } from './outbox/gather-deliveries.ts';
export { type HistoryEntry, HistoryEvent } from './outbox/history.ts';
export type { OutboxItem } from './outbox/outbox-item.ts';
export { type ClaimCheckedWrite, claimCheckWrite, type OutboxWrite } from './outbox/outbox-write.ts';
export { OutboxSettings } from './settings/outbox-settings.ts';
export { type Env, readSetting, requireEnv } from './settings/setting.ts';
export {
  type ConflictRetry,
  type RetryClock,
  retryConflicts,
} from './transaction/retry-conflicts.ts';
export { TRANSACTION_LIMITS, type TransactWriteAction } from './transaction/transaction-limits.ts';
