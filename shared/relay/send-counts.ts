/**
 * What the relay and the sweeper did per topic, and per subscriber of each topic: the figures their functions
 * publish as metrics.
 */

/** Sends and their recorded outcomes, of one topic or of one subscriber's deliveries of it. */
export interface SendFigures {
  /** Entries SQS accepted (a message resent later counts again). */
  accepted: number;
  /** Entries SQS refused, or that a SendMessageBatch call which failed as a whole carried. */
  sendFailures: number;
  /** Failed attempts recorded on their message with another attempt scheduled. */
  retryScheduled: number;
  /** Messages this run moved to FAILED. */
  failed: number;
}

/** Sends and their recorded outcomes, for one topic (every delivery of it counted). */
export interface TopicSendCounts extends SendFigures {
  /** The same figures of each subscriber's deliveries; absent while none of the topic's sends was a delivery. */
  subscribers?: Record<string, SendFigures>;
}

/** {@link TopicSendCounts} by topic. */
export type SendCountsByTopic = Record<string, TopicSendCounts>;

/** A message whose send did not end SENT, for a log line that names it. */
export interface SendProblem {
  readonly messageId: string;
  readonly topic: string;
  /** The subscriber, for a delivery to one. */
  readonly subscriber?: string;
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
  return ownEntry(counts, topic, noFigures);
}

/** What a send is counted under: its topic and, for a delivery to a subscriber, that subscriber. */
export interface CountedDelivery {
  readonly topic: string;
  readonly subscriber?: string | undefined;
}

/** One more `figure` for `delivery`'s topic and, when it is a delivery to a subscriber, for that subscriber. */
export function countSend(
  counts: SendCountsByTopic,
  delivery: CountedDelivery,
  figure: keyof SendFigures,
): void {
  const topic = topicCounts(counts, delivery.topic);
  topic[figure] += 1;
  if (delivery.subscriber === undefined) return;
  topic.subscribers ??= {};
  ownEntry(topic.subscribers, delivery.subscriber, noFigures)[figure] += 1;
}

/** Adds every figure of `from` to `into`, each subscriber's included. */
export function addSendCounts(into: SendCountsByTopic, from: Readonly<SendCountsByTopic>): void {
  for (const [topic, figures] of Object.entries(from)) {
    const target = topicCounts(into, topic);
    addFigures(target, figures);
    for (const [subscriber, delivered] of Object.entries(figures.subscribers ?? {})) {
      target.subscribers ??= {};
      addFigures(ownEntry(target.subscribers, subscriber, noFigures), delivered);
    }
  }
}

function addFigures(into: SendFigures, from: Readonly<SendFigures>): void {
  into.accepted += from.accepted;
  into.sendFailures += from.sendFailures;
  into.retryScheduled += from.retryScheduled;
  into.failed += from.failed;
}

function noFigures(): SendFigures {
  return { accepted: 0, sendFailures: 0, retryScheduled: 0, failed: 0 };
}

/** The entry under `key`, created with `zero` when there is none yet. */
function ownEntry<T>(record: Record<string, T>, key: string, zero: () => T): T {
  // Own entries only: a topic or subscriber comes from a stored message, and `record['__proto__']` would be
  // Object.prototype.
  const existing = Object.hasOwn(record, key) ? record[key] : undefined;
  if (existing !== undefined) return existing;
  const created = zero();
  Object.defineProperty(record, key, {
    value: created,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return created;
}
