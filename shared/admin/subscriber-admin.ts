import { ConfigError } from '../errors.ts';
import type { AuditLog } from './admin-ports.ts';
import type { AdminQueues } from './admin-queues.ts';
import { type MoveTaskInput, type StartedMoveTask, startDeadLetterMoveTasks } from './move-task.ts';
import {
  canUseMoveTask,
  type RedriveInput,
  type RedriveReport,
  redriveDeadLetters,
} from './redrive-dead-letters.ts';
import { type SubscriberStats, subscriberStats } from './subscriber-stats.ts';

/**
 * What the operations on a subscriber's own stack work on: its queues and their dead-letter queues, its inboxes and
 * the audit table of its stack. A subscriber's stack holds no outbox: its deliveries' statuses, and their replay,
 * are the producer's.
 */
export interface SubscriberAdminDeps {
  /** The subscriber's name, as the producer declares it. */
  readonly subscriber: string;
  readonly queues: AdminQueues;
  /** Topic → URL of the subscriber's queue that receives it. */
  readonly topicQueues: Readonly<Record<string, string>>;
  /** Topic → URL of the dead-letter queue of that queue. */
  readonly deadLetterQueues: Readonly<Record<string, string>>;
  /** Topic → the subscriber's inbox table. */
  readonly inboxTables: Readonly<Record<string, string>>;
  /**
   * The audit table of the subscriber's stack: the redrive journal, and a REDRIVE row per dead-letter queue moved.
   * @default - none: a redrive that moves messages is refused (a dry run still lists them)
   */
  readonly audit?: AuditLog;
  readonly clock: () => Date;
  /** A new time-ordered id (a ULID) for each audit row. */
  readonly newId: () => string;
  /** Waits between paced steps (redrive). */
  readonly sleep: (ms: number) => Promise<void>;
}

/**
 * The operations on a subscriber's own stack, for the `outbox` CLI: its queue and dead-letter depths, and the
 * redrive of its dead letters back to its queue, journalled in its stack's audit table exactly as a producer's are.
 * @example
 * const admin = new SubscriberAdmin(deps);
 * await admin.redriveDeadLetters({ topic: 'order.created', ratePerSecond: 10, dryRun: false, actor, reason });
 */
export class SubscriberAdmin {
  readonly #deps: SubscriberAdminDeps;

  constructor(deps: SubscriberAdminDeps) {
    this.#deps = deps;
  }

  /** The subscriber's name. */
  get subscriber(): string {
    return this.#deps.subscriber;
  }

  /** The depths of its queues and dead-letter queues, and its inboxes (see `subscriberStats`). */
  stats(): Promise<SubscriberStats> {
    return subscriberStats(this.#deps);
  }

  /**
   * Moves its dead letters back to its queue, filtered and journalled (see `redriveDeadLetters`). Throws a
   * `ConfigError` for a redrive that would move messages when the stack has no audit table to journal them in.
   */
  async redriveDeadLetters(input: RedriveInput): Promise<RedriveReport> {
    return redriveDeadLetters({ ...this.#deps, audit: this.#journal(input.dryRun) }, input);
  }

  /** Whether SQS's message move task can do this redrive instead (no filter, no limit, no dry run). */
  canUseMoveTask(input: RedriveInput): boolean {
    return canUseMoveTask(input);
  }

  /** Starts SQS message move tasks from its dead-letter queues (AWS only; see `startDeadLetterMoveTasks`). */
  async startMoveTasks(input: MoveTaskInput): Promise<StartedMoveTask[]> {
    return startDeadLetterMoveTasks({ ...this.#deps, audit: this.#journal(false) }, input);
  }

  /** The audit table, or — for a dry run, which writes nothing — one that refuses every write. */
  #journal(dryRun: boolean): AuditLog {
    const { audit, subscriber } = this.#deps;
    if (audit !== undefined) return audit;
    if (!dryRun) {
      throw new ConfigError(
        `subscriber ${subscriber}'s stack has no audit table (a resource with the audit-table role): a redrive ` +
          'journals each message it moves there, so that a run interrupted and started again never moves one twice; ' +
          '--dry-run lists what would move',
      );
    }
    const refuse = (): never => {
      throw new ConfigError(`subscriber ${subscriber}'s stack has no audit table to write to`);
    };
    return {
      put: async () => refuse(),
      putAction: refuse,
      trail: async () => [],
      readJournal: async () => undefined,
      writeJournal: async () => refuse(),
      markJournal: async () => refuse(),
    };
  }
}
