/**
 * `serverless-outbox`: the transactional outbox core. Write business items and the messages that must follow
 * them in one DynamoDB transaction (payloads too large for SQS through an S3 claim check), relay and sweep them
 * to SQS, and consume them exactly once in effect; and
 * operate it: list, show, replay, cancel, redrive, count and erase (`OutboxAdmin`), every action audited.
 * Handler factories are in `serverless-outbox/lambda`, the CDK construct in `serverless-outbox/cdk`, and
 * in-memory DynamoDB and SQS for tests in `serverless-outbox/testing`.
 */
export type { AdminDeps } from './admin/admin-deps.ts';
export {
  AdminError,
  AdminErrorCode,
  type AdminHttpStatus,
  AggregateInFlightError,
  EarlierGapError,
  InvalidAdminRequestError,
  ListFilterRequiredError,
  MessageNotFoundError,
  MoveTaskUnavailableError,
  ReasonRequiredError,
  WrongStatusError,
} from './admin/admin-errors.ts';
export type {
  AdminTransactions,
  AuditLog,
  InboxAdminStore,
  OutboxAdminStore,
  Page,
  PageKey,
  StoredMessage,
} from './admin/admin-ports.ts';
export {
  type AdminQueues,
  type MoveTask,
  type OutgoingQueueMessage,
  type QueueDepth,
  type QueueMessageAttribute,
  queueNameOf,
  type ReceivedQueueMessage,
} from './admin/admin-queues.ts';
export { AuditAction, type AuditRow, auditSubject } from './admin/audit-trail.ts';
export {
  type BulkReplayCandidate,
  type BulkReplayInput,
  type BulkReplayProgress,
  type BulkReplayReport,
  bulkReplay,
} from './admin/bulk-replay.ts';
export { type DeadLetterRoute, deadLetterRoutes } from './admin/dead-letter-routes.ts';
export { type EraseInput, type EraseResult, eraseAggregate } from './admin/erase-aggregate.ts';
export {
  LIST_LIMITS,
  type ListMessagesInput,
  listMessages,
  type MessagePage,
} from './admin/list-messages.ts';
export {
  cancelMessage,
  type MessageActionInput,
  type MessageActionResult,
  replayMessage,
} from './admin/message-actions.ts';
export { type MessageSummary, summarizeMessage } from './admin/message-summary.ts';
export { type MoveTaskInput, type StartedMoveTask, startDeadLetterMoveTasks } from './admin/move-task.ts';
export { OutboxAdmin } from './admin/outbox-admin.ts';
export {
  type CountedStatus,
  countOutbox,
  type DeadLetterDepth,
  type OutboxCounts,
  type OutboxStats,
  outboxStats,
  type TopicCounts,
} from './admin/outbox-stats.ts';
export {
  canUseMoveTask,
  type DeadLetterInfo,
  type RedriveCounts,
  type RedriveInput,
  type RedriveProgress,
  type RedriveQueueReport,
  type RedriveReport,
  RedriveState,
  redriveDeadLetters,
} from './admin/redrive-dead-letters.ts';
export { type MessageDetails, showMessage } from './admin/show-message.ts';
export {
  type CursorSkip,
  type SkipOrderGapInput,
  type SkipOrderGapResult,
  type SuccessorResend,
  skipOrderGap,
} from './admin/skip-order-gap.ts';
export { adminDeps } from './lambda/admin-deps-from-env.ts';
export { AUDIT_KEYS, DynamoAuditLog, readAuditTrail } from './aws/audit-table.ts';
export {
  type AwsClientConfig,
  awsClientConfig,
  createDocumentClient,
  createS3Client,
  createSqsClient,
} from './aws/clients.ts';
export {
  type AdminTablePorts,
  type DynamoAdminDepsOptions,
  type DynamoAdminTables,
  dynamoAdminDeps,
} from './aws/dynamo-admin-deps.ts';
export { DynamoOutboxStore, type DynamoOutboxStoreOptions } from './aws/dynamo-outbox-store.ts';
export {
  type CursorRow,
  cursorKeyOf,
  DynamoInboxAdminStore,
  INBOX_KEYS,
  type InboxRow,
  inboxDeliveryCheck,
  type ParkedRow,
  parkedKeyOf,
} from './aws/inbox-table.ts';
export {
  type AggregateMessagesOptions,
  aggregateMessageIds,
  DEFAULT_READ_CONCURRENCY,
  DynamoOutboxAdminStore,
  type DynamoOutboxAdminStoreOptions,
  type MessagesByIdOptions,
  type OutboxReader,
  readAggregateMessages,
  readMessagesById,
} from './aws/outbox-table.ts';
export {
  type OutboxTransactionOptions,
  type OutboxWriterOptions,
  outboxTransaction,
  SEQUENCE_ATTEMPTS,
  writeWithOutbox,
} from './aws/outbox-writer.ts';
export { S3ClaimCheckStore } from './aws/s3-claim-check-store.ts';
export { type CounterRead, counterUpdate, readLastSeqs, SEQUENCE_KEYS } from './aws/sequence-table.ts';
export { SqsAdminQueues } from './aws/sqs-admin-queues.ts';
export { SqsPublisher } from './aws/sqs-publisher.ts';
export { SqsQueueOperations } from './aws/sqs-queue-operations.ts';
export { transactWrite } from './aws/transact-write.ts';
export {
  ClaimCheckIntegrityError,
  ClaimCheckObjectMissingError,
  type MissingObjectReason,
} from './claim-check/claim-check-errors.ts';
export {
  CLAIM_CHECK_HEADER,
  CLAIM_CHECK_PREFIX,
  type ClaimCheckObject,
  type ClaimCheckPayload,
  type ClaimCheckReference,
  DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
} from './claim-check/claim-check-reference.ts';
export type {
  ClaimCheckReading,
  ClaimCheckStore,
  ClaimCheckWriting,
} from './claim-check/claim-check-store.ts';
export { resolveClaimCheck } from './claim-check/resolve-claim-check.ts';
export type { HealthCheck, HealthCheckContext, HealthResult } from './cli/health-check.ts';
export {
  APPLIED,
  type ConsumeResult,
  type DrainedMessage,
  type DrainFailure,
  type EffectPlan,
  type PlanEffect,
} from './consumer/consume-message.ts';
export {
  DEAD_LETTER_ATTRIBUTES,
  DeadLetterCause,
  type DeadLetterReading,
  type DeadLetterSeen,
  readDeadLetter,
} from './consumer/dead-letter-cause.ts';
export {
  DEFAULT_VISIBILITY_BACKOFF,
  type DeadLetterReason,
  type FailureHandling,
  type QueueOperations,
  type VisibilityBackoff,
} from './consumer/failure-handling.ts';
export { DEFAULT_INBOX_RETENTION_DAYS } from './consumer/inbox-record.ts';
export {
  DEFAULT_WRAP_UP_RESERVE,
  type InvocationBudget,
  type InvocationClock,
  invocationBudget,
  type WrapUpReserve,
} from './consumer/invocation-budget.ts';
export { PARKED } from './consumer/ordered-consume.ts';
export type { OrderedEnvelope } from './consumer/ordered-envelope.ts';
export {
  type CancelledAction,
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
  TransactionLimit,
  type TransactionLimitBreach,
  TransactionLimitError,
} from './errors.ts';
export { type ConsumeDeps, consumeMessage } from './lambda/inbox-consumer.ts';
export {
  createMessage,
  type Envelope,
  envelopeSchema,
  messageIdTime,
  type NewMessage,
  parseEnvelope,
  topicSchema,
} from './message/envelope.ts';
export { MessageStatus } from './message/message-status.ts';
export { type LoggableError, loggableError } from './observability/loggable-error.ts';
export {
  DEFAULT_METRICS_NAMESPACE,
  OUTBOX_METRIC_DIMENSIONS,
  OutboxMetricName,
  UNKNOWN_TOPIC,
} from './observability/metric-names.ts';
export {
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_TOPICS_METADATA,
  OutboxResourceRole,
} from './observability/resource-roles.ts';
export { xrayTraceHeader } from './observability/xray-trace-header.ts';
export {
  type AggregateVersions,
  assignSeqs,
  type CounterAdvance,
  countedOrderKeys,
  type SequencedMessages,
  type SequenceSources,
} from './ordering/assign-seqs.ts';
export {
  DEFAULT_GAP_TIMEOUT_MS,
  MAX_GAP_TIMEOUT_MS,
  MAX_ORDER_KEY_LENGTH,
  ORDER_KEY_SEPARATOR,
  type OrderedTopic,
  type OrderingByTopic,
  orderedTopic,
  orderKeyOf,
  SequenceSource,
  scopeSchema,
  type TopicOrdering,
} from './ordering/ordering.ts';
export { type HistoryEntry, HistoryEvent, historyOf } from './outbox/history.ts';
export {
  ATTENTION_STATUSES,
  type AttentionStatus,
  attentionKeyOf,
  attentionPartitions,
  DEFAULT_DUE_SHARDS,
  DEFAULT_STREAM_GRACE_MS,
  deliveryRoundOf,
  dueShardKeys,
  dueShardOf,
  OUTBOX_KEYS,
  type OutboxIndexProjection,
  type OutboxItem,
} from './outbox/outbox-item.ts';
export {
  type ClaimOutcome,
  type ClaimResult,
  type ConfirmOutcome,
  confirmDeadlineAfter,
  DEFAULT_CONFIRM_DEADLINE_MS,
  type DueEntry,
  type DueMessage,
  type MarkSentOutcome,
  type OutboxStore,
  type RecordFailureOutcome,
  type SequencedMessage,
  type SequenceRange,
  type SweepStore,
} from './outbox/outbox-store.ts';
export { type ClaimCheckedWrite, claimCheckWrite, type OutboxWrite } from './outbox/outbox-write.ts';
export { type RedeliveryLimits, redeliveryHorizonMs } from './outbox/redelivery-horizon.ts';
export {
  TERMINAL_STATUSES,
  TRANSITIONS,
  type Transition,
  type TransitionName,
} from './outbox/state-machine.ts';
export { DEFAULT_RETENTION_DAYS } from './outbox/transition-updates.ts';
export {
  MESSAGE_ATTRIBUTES,
  type MessagePublisher,
  type PublishOptions,
  type PublishResult,
} from './relay/message-publisher.ts';
export { type RelayDeps, type RelayInput, type RelayReport, relayMessages } from './relay/relay-messages.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry/retry-policy.ts';
export {
  ADMIN_SETTINGS,
  ARCHIVER_SETTINGS,
  CONSUMER_SETTINGS,
  OutboxSettings,
  RELAY_SETTINGS,
  SWEEPER_SETTINGS,
  WRITER_SETTINGS,
} from './settings/outbox-settings.ts';
export { type Env, readOptionalSetting, readSetting, requireEnv, type Setting } from './settings/setting.ts';
export {
  DEFAULT_SWEEPER_SETTINGS,
  type DeliveryCheck,
  type DeliveryVerdict,
  type ParkedVerdict,
  type SweeperDeps,
  type SweeperSettings,
  type SweepReport,
  sweep,
} from './sweeper/sweep.ts';
export {
  type ConflictRetry,
  DEFAULT_CONFLICT_RETRY,
  type RetryClock,
  retryConflicts,
} from './transaction/retry-conflicts.ts';
export { TRANSACTION_LIMITS, type TransactWriteAction } from './transaction/transaction-limits.ts';
