import type { MessageStatus } from '../message/message-status.ts';
import type { CancelMove, OperatorMove } from '../outbox/outbox-changes.ts';
import type { OutboxItem } from '../outbox/outbox-item.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type { AuditRow } from './audit-trail.ts';

/**
 * The ports of the admin core: what it reads and writes of the outbox, the audit trail and the consumers' inboxes.
 * Only the adapters (`shared/aws/outbox-table.ts`, `audit-table.ts`, `inbox-table.ts`) know the tables' keys,
 * indexes and calls; the core decides what to read, what to change and in which transaction.
 */

/**
 * A stored outbox row as read: its attributes by name (the whole item, or the attributes asked for). A row of a
 * message delivered to subscribers is one subscriber's delivery: its key `<messageId>#<subscriber>`, its
 * `subscriber` attribute — which every read of the store returns when asked for it, whatever an index holds.
 */
export type StoredMessage = Readonly<Record<string, unknown>>;

/** Where a page of an index stopped: handed back as it came to read the next page. */
export type PageKey = Readonly<Record<string, unknown>>;

/** One page of a read, and where it stopped when more may follow. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextKey?: PageKey;
}

/**
 * One index partition a listing reads: a due-index shard (PENDING and SENT, narrowed to `status` when given), an
 * attention-index partition (`<status>#<shard>`), or an aggregate's messages (keys only: their ids).
 */
export type ListSource =
  | { readonly index: 'due'; readonly shard: string; readonly status?: MessageStatus }
  | { readonly index: 'attention'; readonly partition: string }
  | { readonly index: 'aggregate'; readonly aggregateId: string; readonly status?: MessageStatus };

/** What a listing filters a partition by, besides its source. */
export interface ListFilters {
  readonly topic?: string;
  /** Only the deliveries to this subscriber. */
  readonly subscriber?: string;
  /** Created at or after this instant (ISO-8601). */
  readonly since?: string;
}

/** One page of a listing's source. */
export interface ListPageQuery {
  readonly source: Exclude<ListSource, { readonly index: 'aggregate' }>;
  readonly filters: ListFilters;
  /** The attributes of each message to read. */
  readonly attributes: readonly string[];
  readonly limit: number;
  readonly startKey?: PageKey;
}

/** An attention-index partition's messages of one topic, created within a range (bounds inclusive). */
export interface AttentionRange {
  readonly partition: string;
  readonly topic: string;
  /** Only the deliveries to this subscriber. */
  readonly subscriber?: string;
  readonly from?: string;
  readonly to?: string;
}

/** The outbox as the admin reads and changes it. */
export interface OutboxAdminStore {
  /** One page of a due or attention partition, filtered, only `attributes` of each message. */
  listPage(query: ListPageQuery): Promise<Page<StoredMessage>>;
  /** One page of an aggregate's message ids (the byAggregate index holds keys only). */
  aggregatePage(query: {
    readonly aggregateId: string;
    readonly limit: number;
    readonly startKey?: PageKey;
  }): Promise<Page<string>>;
  /** Every message of a due shard or attention partition (every page), only `attributes` of each. */
  readPartition(
    partition:
      | { readonly index: 'due'; readonly shard: string }
      | { readonly index: 'attention'; readonly partition: string },
    attributes: readonly string[],
  ): Promise<StoredMessage[]>;
  /** Every message of an attention range (every page): its id, status, createdAt and subscriber. */
  readAttentionRange(range: AttentionRange): Promise<StoredMessage[]>;
  /** The whole stored message, read strongly consistently; `undefined` when there is none. */
  read(messageId: string): Promise<StoredMessage | undefined>;
  /** The messages `messageIds` name, in that order, only `attributes` of each; missing ones left out. */
  readMany(messageIds: readonly string[], attributes: readonly string[]): Promise<StoredMessage[]>;
  /** Every message of an aggregate (ids from its index, then each read by key), only `attributes` of each. */
  readAggregate(aggregateId: string, attributes: readonly string[]): Promise<StoredMessage[]>;
  /**
   * The message at `seq` of `orderKey` (`after`: the first one after `seq`), found in the order index and read
   * strongly consistently; `undefined` when there is none.
   */
  readInSequence(at: {
    readonly orderKey: string;
    readonly seq: number;
    readonly after?: boolean;
  }): Promise<{ readonly messageId: string; readonly item: StoredMessage } | undefined>;
  /**
   * Deletes the message unless it is PENDING or SENT: its stored item, `IN_FLIGHT` when it is PENDING or SENT, or
   * `undefined` when it is gone already.
   */
  deleteFinished(messageId: string): Promise<StoredMessage | 'IN_FLIGHT' | undefined>;
  /**
   * When a skip marked the stored message skipped (it must never be replayed), from a message {@link read}
   * returned; `undefined` when it was never skipped.
   */
  skippedAtOf(message: StoredMessage): string | undefined;
  /** FAILED or CANCELLED → PENDING from `move.from` (a fresh start, due now), as an action of a transaction. */
  replayAction(move: OperatorMove): TransactWriteAction;
  /** PENDING or FAILED → CANCELLED from `move.from` (a skip's cancel marks it skipped), as an action of a transaction. */
  cancelAction(move: CancelMove): TransactWriteAction;
  /** An already CANCELLED message marked skipped, conditional on it still being CANCELLED. */
  markSkippedAction(at: { readonly messageId: string; readonly now: Date }): TransactWriteAction;
  /** A PENDING message made due now, conditional on it still being PENDING and unclaimed. */
  dueNowAction(at: { readonly messageId: string; readonly now: Date }): TransactWriteAction;
  /**
   * The put of a new row (a control message's delivery to one subscriber), as an action of a transaction;
   * conditional on its key being free, so it never overwrites a message.
   */
  insertAction(item: OutboxItem): TransactWriteAction;
  /** SENT → PENDING in a new delivery round, due now, with its history entry; conditional on it still being SENT. */
  resendAction(move: {
    readonly messageId: string;
    readonly now: Date;
    readonly by: string;
    readonly reason: string;
    readonly dueShards: number;
  }): TransactWriteAction;
}

/** A redrive journal row: the audit row of one DLQ message's move, with where the move stands. */
export interface RedriveJournalRow extends AuditRow {
  readonly state: string;
}

/** The audit table: the operators' audit trail and the redrive journal. */
export interface AuditLog {
  /** Writes an audit row on its own (never over another). */
  put(row: AuditRow): Promise<void>;
  /** The put of an audit row as an action of the transaction of the change it records. */
  putAction(row: AuditRow): TransactWriteAction;
  /** Every audit row of `subject`, oldest first. */
  trail(subject: string): Promise<AuditRow[]>;
  /** A journal row, read strongly consistently; `undefined` when there is none. */
  readJournal(key: {
    readonly subject: string;
    readonly actionId: string;
  }): Promise<{ readonly state?: unknown } | undefined>;
  /** Writes a journal row. */
  writeJournal(row: RedriveJournalRow): Promise<void>;
  /** Sets a journal row's state to `state`, recording when. */
  markJournal(
    key: { readonly subject: string; readonly actionId: string },
    state: string,
    at: string,
  ): Promise<void>;
}

/** The consumers' inboxes as the admin changes them: parked rows (erase) and ordered topics' cursors (skip). */
export interface InboxAdminStore {
  /** Deletes the parked row at `orderKey`/`seq` of `inboxTable` if it holds `messageId`: true when one was there. */
  deleteParked(parked: {
    readonly inboxTable: string;
    readonly messageId: string;
    readonly orderKey: string;
    readonly seq: number;
  }): Promise<boolean>;
  /** The cursor's last seq, read strongly consistently; `null` when the consumer has none yet. */
  cursorOf(at: { readonly inboxTable: string; readonly orderKey: string }): Promise<number | null>;
  /** The cursor moved from `lastSeq` to `seq`, conditional on it still being at `lastSeq` (absent for `null`). */
  cursorSkipAction(move: {
    readonly inboxTable: string;
    readonly orderKey: string;
    readonly seq: number;
    readonly lastSeq: number | null;
    readonly now: Date;
  }): TransactWriteAction;
}

/**
 * Writes actions of several tables in one transaction, all or nothing; a failed condition is a
 * `TransactionConditionError`, a lost race a `TransactionConflictError`.
 */
export interface AdminTransactions {
  write(actions: readonly TransactWriteAction[], idempotencyToken?: string): Promise<void>;
}
