/**
 * `serverless-outbox/admin` (to be published): operating the outbox — list, show, replay, cancel, redrive,
 * skip a gap, count and erase (`OutboxAdmin` and its actions), each per subscriber for a topic delivered to
 * subscribers, every action audited — and a subscriber's own stack (`SubscriberAdmin`: its dead letters and queue
 * depths). The root entry exports the same names today; the development tooling takes them from here.
 */

export { readAuditTrail } from '../aws/audit-table.ts';
export { type DynamoAdminDepsOptions, dynamoAdminDeps } from '../aws/dynamo-admin-deps.ts';
export { SqsAdminQueues } from '../aws/sqs-admin-queues.ts';
export { adminDeps } from '../lambda/admin-deps-from-env.ts';
export type { AdminDeps } from './admin-deps.ts';
export {
  AdminError,
  AdminErrorCode,
  type AdminHttpStatus,
  AggregateInFlightError,
  DeliveryNotFoundError,
  type DeliveryStatus,
  EarlierGapError,
  InvalidAdminRequestError,
  ListFilterRequiredError,
  MessageNotFoundError,
  MoveTaskUnavailableError,
  ReasonRequiredError,
  WrongStatusError,
} from './admin-errors.ts';
export {
  type AdminQueues,
  type MoveTask,
  type OutgoingQueueMessage,
  type QueueDepth,
  type QueueMessageAttribute,
  queueNameOf,
  type ReceivedQueueMessage,
} from './admin-queues.ts';
export {
  AuditAction,
  type AuditRow,
  auditSubject,
} from './audit-trail.ts';
export {
  type BulkReplayCandidate,
  type BulkReplayInput,
  type BulkReplayProgress,
  type BulkReplayReport,
  bulkReplay,
} from './bulk-replay.ts';
export { type DeadLetterRoute, deadLetterRoutes } from './dead-letter-routes.ts';
export { type EraseInput, type EraseResult, eraseAggregate } from './erase-aggregate.ts';
export {
  LIST_LIMITS,
  type ListMessagesInput,
  listMessages,
  type MessagePage,
} from './list-messages.ts';
export {
  cancelMessage,
  type DeliveryActionResult,
  type MessageActionInput,
  type MessageActionResult,
  replayMessage,
} from './message-actions.ts';
export { type MessageSummary, summarizeMessage } from './message-summary.ts';
export { type MoveTaskInput, type StartedMoveTask, startDeadLetterMoveTasks } from './move-task.ts';
export { OutboxAdmin } from './outbox-admin.ts';
export {
  type CountedStatus,
  countOutbox,
  type DeadLetterDepth,
  type OutboxCounts,
  type OutboxStats,
  type OutboxStatsInput,
  outboxStats,
  type SubscriberCounts,
  type TopicCounts,
} from './outbox-stats.ts';
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
} from './redrive-dead-letters.ts';
export { type DeliveryDetails, type MessageDetails, showMessage } from './show-message.ts';
export {
  type CursorSkip,
  type SkipOrderGapInput,
  type SkipOrderGapResult,
  type SuccessorResend,
  skipOrderGap,
} from './skip-order-gap.ts';
export { SubscriberAdmin, type SubscriberAdminDeps } from './subscriber-admin.ts';
export {
  type SubscriberInbox,
  type SubscriberQueueDepth,
  type SubscriberStats,
  subscriberStats,
} from './subscriber-stats.ts';
