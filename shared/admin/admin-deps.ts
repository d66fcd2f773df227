import type { ClaimCheckReading } from '../claim-check/claim-check-store.ts';
import type { OrderingByTopic } from '../ordering/ordering.ts';
import type { Subscriptions } from '../outbox/subscriptions.ts';
import type { AdminTransactions, AuditLog, InboxAdminStore, OutboxAdminStore } from './admin-ports.ts';
import type { AdminQueues } from './admin-queues.ts';

/**
 * What the admin core works on: the outbox, the audit trail and the consumers' inboxes through its ports, each
 * topic's queue, dead-letter queue and delivery inbox, and the clock, ids and pauses it runs with. Built from the
 * environment by `adminDeps(env)`, over DynamoDB by `dynamoAdminDeps(options)`; tests build it over the in-memory
 * adapters.
 */
export interface AdminDeps {
  readonly outbox: OutboxAdminStore;
  /** Audit trail of operators' actions, and the redrive journal. */
  readonly audit: AuditLog;
  /** The consumers' inboxes: parked rows an erase deletes, cursors a skip moves. */
  readonly inboxes: InboxAdminStore;
  /** One transaction over the tables above (replay, cancel, skip with their audit rows). */
  readonly transactions: AdminTransactions;
  readonly queues: AdminQueues;
  /** Topic → URL of the queue it is sent to. */
  readonly topicQueues: Readonly<Record<string, string>>;
  /** Topic → URL of the dead-letter queue of its queue. */
  readonly deadLetterQueues: Readonly<Record<string, string>>;
  /** Topic → the consumer's inbox table (erase deletes the inbox rows there). */
  readonly deliveryInboxes: Readonly<Record<string, string>>;
  /**
   * The ordered topics (`ORDERED_TOPICS`): a skip moves the cursors in the inboxes of every topic of the skipped
   * message's scope.
   * @default - none: a skip moves the cursor in the inbox of the message's own topic only
   */
  readonly orderedTopics?: OrderingByTopic;
  /**
   * Who receives which topic (`SUBSCRIPTIONS`): `show`, `replay` and `cancel` find a message's delivery to each
   * subscriber (no index does), and `stats` lists each subscriber of a topic.
   * @default - none: every message is one row
   */
  readonly subscriptions?: Subscriptions;
  /** Partitions of the due index, which the attention index shares; must equal the writers' and the relay's. */
  readonly dueShards: number;
  /** Days a CANCELLED message is kept before TTL removes it. */
  readonly retentionDays: number;
  readonly clock: () => Date;
  /** A new time-ordered id (a ULID) for each audit row. */
  readonly newId: () => string;
  /**
   * The claim-check bucket, so an erase deletes the payloads stored there with their messages.
   * @default - none: an erase refuses an aggregate with claim-checked payloads rather than leave them behind
   */
  readonly claimCheck?: ClaimCheckReading;
  /** Waits between paced steps (bulk replay, redrive). */
  readonly sleep: (ms: number) => Promise<void>;
}
