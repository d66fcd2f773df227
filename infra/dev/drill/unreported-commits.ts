import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { deliveryKey } from './drill-subscribers.ts';
import { isAppliedOutcome } from './inbox-outcomes.ts';

/** An inbox row a delivery committed: its topic and whether it applied the effect or recorded a rejection. */
interface Commit {
  readonly topic: string;
  readonly applied: boolean;
}

/** What the consumer logs for a parked message its predecessor's delivery applied. */
const DRAINED_LOG_LINE = 'consumed parked message';

/** What one invocation wrote that its counts have not reported yet, by inbox key. */
interface Unreported {
  readonly commits: Map<string, Commit>;
  /**
   * Whether the invocation has returned. A record it handed back at its wrap-up point may still be in a call that
   * then commits: its counts were published without it, so it is counted at once.
   */
  ended: boolean;
}

/** Inbox rows written by deliveries that then failed, per topic: no metric counts them. */
export type UnreportedCommitCounts = Readonly<
  Record<string, { readonly applied: number; readonly rejected: number }>
>;

/** One line the consumer logged: its level, its message and what it names. */
export interface ConsumerLogLine {
  readonly level: 'info' | 'warn';
  readonly message: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/**
 * Finds the inbox rows no consumer metric counts. A delivery reports its counts only when its record is consumed
 * (`consumed message`, or `consumed parked message` for a successor it applied from its parked row, each line
 * saying what was counted: applied or rejected); one that commits its inbox row and then fails (at its receipt, or
 * at the drain of its parked successors after it) is retried, and its redelivery counts a duplicate. Each consumer
 * invocation runs in its own async context, so that a commit is matched with its own delivery; whatever an
 * invocation wrote and did not report when it returns is counted. A subscriber's consumer keys its inbox rows
 * `<messageId>#<subscriber>` and logs the message's own id: give `subscriber` to match the two.
 * @example
 * const response = await commits.invocation(() => consumeSqsEvent(event, context, consumer));
 */
export class UnreportedCommits {
  readonly #context = new AsyncLocalStorage<Unreported>();
  readonly #counts: Record<string, { applied: number; rejected: number }> = {};
  readonly #subscriber: string | undefined;

  constructor(options: { readonly subscriber?: string } = {}) {
    this.#subscriber = options.subscriber;
  }

  /** Runs one consumer invocation; what it wrote and did not report is counted when it ends. */
  async invocation<T>(run: () => Promise<T>): Promise<T> {
    const unreported: Unreported = { commits: new Map(), ended: false };
    try {
      return await this.#context.run(unreported, run);
    } finally {
      unreported.ended = true;
      for (const commit of unreported.commits.values()) this.#countCommit(commit);
      unreported.commits.clear();
    }
  }

  /** Notes the inbox row a successful transaction of this invocation committed, if it holds one. */
  committed(command: unknown, inboxTable: string): void {
    if (!(command instanceof TransactWriteCommand)) return;
    for (const action of command.input.TransactItems ?? []) {
      const item = action.Put?.TableName === inboxTable ? action.Put.Item : undefined;
      // A parked row (`parked#…`) is no inbox row: its message's row is written when it is applied.
      if (typeof item?.messageId !== 'string' || typeof item.outcome !== 'string') continue;
      const commit = { topic: String(item.topic), applied: isAppliedOutcome(item.outcome) };
      const unreported = this.#context.getStore();
      if (unreported?.ended) this.#countCommit(commit);
      else unreported?.commits.set(item.messageId, commit);
    }
  }

  /**
   * Notes what this invocation's counts include of `messageId` (the message's own id, as the consumer logs it): its
   * inbox row, when the line says it was applied or rejected now.
   */
  reported(messageId: string, logged: { readonly kind?: unknown }): void {
    const unreported = this.#context.getStore();
    // After its invocation returned nothing more is published: what it wrote then stays counted as unreported.
    if (unreported?.ended) return;
    if (logged.kind !== 'APPLIED' && logged.kind !== 'REJECTED') return;
    unreported?.commits.delete(
      this.#subscriber === undefined ? messageId : deliveryKey(messageId, this.#subscriber),
    );
  }

  /**
   * A consumer log sink that reports what the consumer logs as consumed, and calls `each` for every line but a
   * drained successor's (so once per record handled, whatever became of it).
   */
  logger(each: (line: ConsumerLogLine) => void): {
    info(message: string, attributes: Record<string, unknown>): void;
    warn(message: string, attributes: Record<string, unknown>): void;
  } {
    return {
      info: (message, attributes) => {
        // A parked successor applied by a drain was not handed over as a record of its own.
        if (message !== DRAINED_LOG_LINE) each({ level: 'info', message, attributes });
        if (typeof attributes.messageId === 'string') this.reported(attributes.messageId, attributes);
      },
      warn: (message, attributes) => each({ level: 'warn', message, attributes }),
    };
  }

  /** The rows counted so far, by topic (a copy). */
  counts(): UnreportedCommitCounts {
    return Object.fromEntries(Object.entries(this.#counts).map(([topic, counts]) => [topic, { ...counts }]));
  }

  /** Every row counted so far. */
  total(): number {
    return Object.values(this.#counts).reduce((sum, { applied, rejected }) => sum + applied + rejected, 0);
  }

  #countCommit(commit: Commit): void {
    let counts = this.#counts[commit.topic];
    if (counts === undefined) {
      counts = { applied: 0, rejected: 0 };
      this.#counts[commit.topic] = counts;
    }
    if (commit.applied) counts.applied += 1;
    else counts.rejected += 1;
  }
}
