/**
 * What the console works on: the producer's outbox through the admin core's own dependencies (the same `AdminDeps`
 * the CLI and the admin API build `OutboxAdmin` on), each subscriber's own stack it could reach, the audit tables,
 * and the operator it acts as.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import type { AuditRow } from '../../admin/audit-trail.ts';
import type { SubscriberAdminDeps } from '../../admin/subscriber-admin.ts';
import type { ClaimCheckStore } from '../../claim-check/claim-check-store.ts';
import type { OrderingByTopic } from '../../ordering/ordering.ts';
import type { Subscriptions } from '../../outbox/subscriptions.ts';

/**
 * A subscriber as the console reaches it: its own stack (its queue, dead letters and audit table), or why it cannot
 * (no stack found in this account and region, or one that could not be read).
 */
export interface SubscriberReach {
  readonly subscriber: string;
  /** The subscriber's stack, when one was found. */
  readonly stackName?: string;
  /** The operations on its stack; absent when it cannot be reached. */
  readonly deps?: SubscriberAdminDeps;
  /** Why it cannot be reached, in words, with what to do. */
  readonly problem?: string;
}

/** One page of an audit table's rows, in no particular order. */
export interface AuditPage {
  readonly rows: readonly AuditRow[];
  readonly nextKey?: Readonly<Record<string, unknown>>;
}

/** An audit table the console reads: the producer's, or a subscriber stack's (its redrives). */
export interface AuditSource {
  readonly stackName: string;
  scan(page: {
    readonly limit: number;
    readonly startKey?: Readonly<Record<string, unknown>>;
  }): Promise<AuditPage>;
}

/** Everything a console serves. */
export interface ConsoleContext {
  /** The producer's stack. */
  readonly stackName: string;
  /** The outbox's name, when its stack names it. */
  readonly outboxName?: string;
  /** The admin core's dependencies on the producer's outbox. */
  readonly deps: AdminDeps;
  /** The ordered topics: ordering gaps are looked for in their messages. */
  readonly orderedTopics: OrderingByTopic;
  /** Who receives which topic. */
  readonly subscriptions: Subscriptions;
  /** Every subscriber of the outbox, reached or not. */
  readonly subscribers: readonly SubscriberReach[];
  /** The audit tables: the producer's first. */
  readonly audit: readonly AuditSource[];
  /** Where claim-checked payloads are read from on demand; absent when the console cannot read them. */
  readonly claimChecks?: ClaimCheckStore;
  /** The operator, as the audit trail names them. */
  readonly actor: () => Promise<string>;
  /** What discovery had to assume, shown on the overview. */
  readonly notes: readonly string[];
}
