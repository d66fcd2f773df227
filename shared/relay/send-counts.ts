/** What the relay and the sweeper did per topic: the figures their functions publish as metrics. */

/** Sends and their recorded outcomes, for one topic. */
export interface TopicSendCounts {
  /** Entries SQS accepted (a message resent later counts again). */
  accepted: number;
  /** Entries SQS refused, or that a SendMessageBatch call which failed as a whole carried. */
  sendFailures: number;
  /** Failed attempts recorded on their message with another attempt scheduled. */
  retryScheduled: number;
  /** Messages this run moved to FAILED. */
  failed: number;
}

/** {@link TopicSendCounts} by topic. */
export type SendCountsByTopic = Record<string, TopicSendCounts>;

/** A message whose send did not end SENT, for a log line that names it. */
export interface SendProblem {
  readonly messageId: string;
  readonly topic: string;
  readonly aggregateId?: string;
  /** An ordered message's place in its sequence. */
  readonly orderKey?: string;
  readonly seq?: number;
  /**
   * RETRY_SCHEDULED or FAILED: recorded on the message; UNRECORDED: the outcome could not be written; HELD: an
   * ordered message kept back behind its predecessor; GAP: a consumer waits for this message, which cannot be
   * sent as it stands (FAILED or CANCELLED) until an operator replays or skips it.
   */
  readonly outcome: 'RETRY_SCHEDULED' | 'FAILED' | 'UNRECORDED' | 'HELD' | 'GAP';
  readonly error: string;
}

/** The counts of `topic` in `counts`, created at zero when the topic has none yet. */
export function topicCounts(counts: SendCountsByTopic, topic: string): TopicSendCounts {
  // Own entries only: a topic comes from a stored message, and `counts['__proto__']` would be Object.prototype.
  const existing = Object.hasOwn(counts, topic) ? counts[topic] : undefined;
  if (existing !== undefined) return existing;
  const created = { accepted: 0, sendFailures: 0, retryScheduled: 0, failed: 0 };
  Object.defineProperty(counts, topic, {
    value: created,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return created;
}

/** Adds every figure of `from` to `into`. */
export function addSendCounts(into: SendCountsByTopic, from: Readonly<SendCountsByTopic>): void {
  for (const [topic, figures] of Object.entries(from)) {
    const target = topicCounts(into, topic);
    target.accepted += figures.accepted;
    target.sendFailures += figures.sendFailures;
    target.retryScheduled += figures.retryScheduled;
    target.failed += figures.failed;
  }
}
