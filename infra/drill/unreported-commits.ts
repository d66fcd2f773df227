import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { APPLIED } from 'serverless-outbox';

/** An inbox row a delivery committed: its message, topic and whether it applied the effect or recorded a rejection. */
interface Commit {
  readonly topic: string;
  readonly applied: boolean;
}

/** Inbox rows committed by deliveries that then failed, per topic: no metric counts them. */
export type UnreportedCommitCounts = Readonly<
  Record<string, { readonly applied: number; readonly rejected: number }>
>;

/**
 * Finds the inbox rows no consumer metric counts. A delivery reports its counts only when its invocation returns;
 * one that commits its inbox row and then fails at the confirm (the only step after the commit) is retried, and
 * its redelivery counts a duplicate. Each consumer invocation runs in its own async context, so that a commit and
 * a failed confirm are matched within one delivery (an invocation handles its records one after another).
 * @example
 * const response = await commits.invocation(() => consumeSqsEvent(event, context, consumer));
 */
export class UnreportedCommits {
  readonly #context = new AsyncLocalStorage<Map<string, Commit>>();
  readonly #counts: Record<string, { applied: number; rejected: number }> = {};

  /** Runs one consumer invocation; its commits are told apart from concurrent invocations'. */
  invocation<T>(run: () => Promise<T>): Promise<T> {
    return this.#context.run(new Map(), run);
  }

  /** Notes the inbox row a successful transaction of this invocation committed, if it holds one. */
  committed(command: unknown, inboxTable: string): void {
    if (!(command instanceof TransactWriteCommand)) return;
    for (const action of command.input.TransactItems ?? []) {
      const item = action.Put?.TableName === inboxTable ? action.Put.Item : undefined;
      if (typeof item?.messageId !== 'string') continue;
      this.#context.getStore()?.set(item.messageId, {
        topic: String(item.topic),
        applied: item.outcome === APPLIED,
      });
    }
  }

  /**
   * Called as a delivery confirms `messageId`: returns a callback to run if the confirm fails, which counts the
   * row this delivery committed (nothing when the delivery was a duplicate).
   */
  confirming(messageId: string): () => void {
    const commits = this.#context.getStore();
    const commit = commits?.get(messageId);
    commits?.delete(messageId);
    return () => {
      if (commit === undefined) return;
      const counts = this.#counts[commit.topic] ?? { applied: 0, rejected: 0 };
      this.#counts[commit.topic] = counts;
      if (commit.applied) counts.applied += 1;
      else counts.rejected += 1;
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
}
