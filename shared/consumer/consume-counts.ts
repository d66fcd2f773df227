/** What a consumer did per topic: the figures its function publishes as metrics. */

/** The consumer's outcomes for one topic. */
export interface TopicConsumeCounts {
  /** Messages whose effect committed now (with their inbox row). */
  applied: number;
  /** Copies of messages already in the inbox, skipped. */
  duplicates: number;
  /** Messages whose business condition failed or that the plan declined, recorded as their outcome. */
  rejected: number;
  /** Messages the consumer sent to the dead-letter queue itself (poison, or on their last receive). */
  deadLettered: number;
  /**
   * Messages put back on the queue as fresh copies, their receive count starting again: they lost every try to
   * concurrent transactions, or the invocation reached its wrap-up point before they finished.
   */
  requeued: number;
  /** Ordered topics: messages held until their predecessor is applied (applied later, when it is). */
  parked: number;
  /** For each message this delivery confirmed: milliseconds from the envelope's `createdAt` to the confirmation. */
  confirmLatenciesMs: number[];
}

/** {@link TopicConsumeCounts} by topic. */
export type ConsumeCountsByTopic = Record<string, TopicConsumeCounts>;

/** The counts of `topic` in `counts`, created at zero when the topic has none yet. */
export function consumeCountsOf(counts: ConsumeCountsByTopic, topic: string): TopicConsumeCounts {
  // Own entries only: a topic comes from the message, and `counts['__proto__']` would be Object.prototype.
  const existing = Object.hasOwn(counts, topic) ? counts[topic] : undefined;
  if (existing !== undefined) return existing;
  const created = {
    applied: 0,
    duplicates: 0,
    rejected: 0,
    deadLettered: 0,
    requeued: 0,
    parked: 0,
    confirmLatenciesMs: [],
  };
  Object.defineProperty(counts, topic, {
    value: created,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return created;
}
