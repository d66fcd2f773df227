import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { UNKNOWN_TOPIC } from '../../../shared/memory/index.ts';
import { isAppliedOutcome } from './metric-invariants.ts';

/** An inbox row a delivery committed: its topic and whether it applied the effect or recorded a rejection. */
interface Commit {
  readonly topic: string;
  readonly applied: boolean;
}

/** What the consumer logs for a parked message its predecessor's delivery applied. */
const DRAINED_LOG_LINE = 'consumed parked message';

/** What one invocation wrote that its counts have not reported yet, by message id. */
interface Unreported {
  readonly commits: Map<string, Commit>;
  /** Messages this invocation moved to CONFIRMED. */
  readonly confirmations: Set<string>;
  /**
   * Whether the invocation has returned. A record it handed back at its wrap-up point may still be in a call that
   * then commits: its counts were published without it, so it is counted at once.
   */
  ended: boolean;
}

/**
 * Inbox rows (and the consumer's confirmations) written by deliveries that then failed, per topic: no metric counts
 * them.
 */
export type UnreportedCommitCounts = Readonly<
  Record<string, { readonly applied: number; readonly rejected: number; readonly confirmed?: number }>
>;

/**
 * Finds the inbox rows and confirmations no consumer metric counts. A delivery reports its counts only when its
 * record is consumed (`consumed message`, or `consumed parked message` for a successor it applied from its parked
 * row, each line saying what was counted: applied or rejected, confirmed); one that commits its inbox row and then fails (at the confirm, or at the drain of its parked successors
 * after the confirm) is retried, and its redelivery counts a duplicate. Each consumer invocation runs in its own
 * async context, so that a commit is matched with its own delivery; whatever an invocation wrote and did not
 * report when it returns is counted.
 * @example
 * const response = await commits.invocation(() => consumeSqsEvent(event, context, consumer));
 */
export class UnreportedCommits {
  readonly #context = new AsyncLocalStorage<Unreported>();
  readonly #counts: Record<string, { applied: number; rejected: number; confirmed: number }> = {};
  /** The topic of every message whose inbox row was seen committed, for a confirmation by a later copy. */
  readonly #topicOf = new Map<string, string>();

  /** Runs one consumer invocation; what it wrote and did not report is counted when it ends. */
  async invocation<T>(run: () => Promise<T>): Promise<T> {
    const unreported: Unreported = { commits: new Map(), confirmations: new Set(), ended: false };
    try {
      return await this.#context.run(unreported, run);
    } finally {
      unreported.ended = true;
      for (const commit of unreported.commits.values()) this.#countCommit(commit);
      for (const messageId of unreported.confirmations) this.#countConfirmation(messageId);
      unreported.commits.clear();
      unreported.confirmations.clear();
    }
  }

  /** Notes the inbox row a successful transaction of this invocation committed, if it holds one. */
  committed(command: unknown, inboxTable: string): void {
    if (!(command instanceof TransactWriteCommand)) return;
    for (const action of command.input.TransactItems ?? []) {
      const item = action.Put?.TableName === inboxTable ? action.Put.Item : undefined;
      // A parked row (`parked#…`) is no inbox row: its message's row is written when it is applied.
      if (typeof item?.messageId !== 'string' || typeof item.outcome !== 'string') continue;
      this.#topicOf.set(item.messageId, String(item.topic));
      const commit = { topic: String(item.topic), applied: isAppliedOutcome(item.outcome) };
      const unreported = this.#context.getStore();
      if (unreported?.ended) this.#countCommit(commit);
      else unreported?.commits.set(item.messageId, commit);
    }
  }

  /** Notes that this invocation moved `messageId` to CONFIRMED. */
  confirmed(messageId: string): void {
    const unreported = this.#context.getStore();
    if (unreported?.ended) this.#countConfirmation(messageId);
    else unreported?.confirmations.add(messageId);
  }

  /**
   * Notes what this invocation's counts include of `messageId`, as the consumer logged it: its inbox row when the
   * line says it was applied or rejected now, its confirmation when the line says it confirmed it.
   */
  reported(messageId: string, logged: { readonly kind?: unknown; readonly confirmation?: unknown }): void {
    const unreported = this.#context.getStore();
    // After its invocation returned nothing more is published: what it wrote then stays counted as unreported.
    if (unreported?.ended) return;
    if (logged.kind === 'APPLIED' || logged.kind === 'REJECTED') unreported?.commits.delete(messageId);
    if (logged.confirmation === 'CONFIRMED') unreported?.confirmations.delete(messageId);
  }

  /**
   * A consumer log sink that reports what the consumer logs as consumed, and calls `each` for every line (one per
   * record handled, whatever became of it).
   */
  logger(each: () => void): {
    info(message: string, attributes: Record<string, unknown>): void;
    warn(message: string, attributes: Record<string, unknown>): void;
  } {
    return {
      info: (message, attributes) => {
        // A parked successor applied by a drain was not handed over as a record of its own.
        if (message !== DRAINED_LOG_LINE) each();
        if (typeof attributes.messageId === 'string') this.reported(attributes.messageId, attributes);
      },
      warn: () => each(),
    };
  }

  /** The rows and confirmations counted so far, by topic (a copy). */
  counts(): UnreportedCommitCounts {
    return Object.fromEntries(Object.entries(this.#counts).map(([topic, counts]) => [topic, { ...counts }]));
  }

  /** Every row counted so far. */
  total(): number {
    return Object.values(this.#counts).reduce((sum, { applied, rejected }) => sum + applied + rejected, 0);
  }

  #countCommit(commit: Commit): void {
    if (commit.applied) this.#of(commit.topic).applied += 1;
    else this.#of(commit.topic).rejected += 1;
  }

  #countConfirmation(messageId: string): void {
    this.#of(this.#topicOf.get(messageId) ?? UNKNOWN_TOPIC).confirmed += 1;
  }

  #of(topic: string): { applied: number; rejected: number; confirmed: number } {
    let counts = this.#counts[topic];
    if (counts === undefined) {
      counts = { applied: 0, rejected: 0, confirmed: 0 };
      this.#counts[topic] = counts;
    }
    return counts;
  }
}
