import { describeError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import type { OutboxItem } from '../outbox/outbox-item.ts';
import type { OutboxStore } from '../outbox/outbox-store.ts';
import type { RetryPolicy } from '../retry/retry-policy.ts';
import { decideAfterSendFailure } from '../retry/send-failure-decision.ts';
import { chunkForSendMessageBatch } from './batch-entries.ts';
import type { MessagePublisher, PublishResult } from './message-publisher.ts';
import { messageSizeBytes } from './wire-format.ts';

/** One message to forward, with the identifier its source uses to retry it (a stream sequence number). */
export interface RelayInput {
  readonly recordId: string;
  readonly message: OutboxItem;
}

/** What the relay needs; every piece is an interface so tests and drills can swap it. */
export interface RelayDeps {
  readonly publisher: MessagePublisher;
  readonly store: OutboxStore;
  /** The queue URL for a topic, or undefined when none is routed. */
  readonly queueFor: (topic: string) => string | undefined;
  readonly retryPolicyFor: (topic: string) => RetryPolicy;
  readonly clock: () => Date;
  readonly random: () => number;
}

/** What happened to a relayed batch. */
export interface RelayReport {
  readonly sent: number;
  /** SENT by someone else first (a sweeper, or a confirmation that overtook us). */
  readonly alreadyAdvanced: number;
  readonly retryScheduled: number;
  readonly failed: number;
  /**
   * Record ids whose outcome could not be written (e.g. DynamoDB unavailable after the send): the source
   * must retry them. The only records reported as batch item failures.
   */
  readonly unrecorded: readonly string[];
}

/**
 * Forwards outbox messages to their topic queues: parallel SendMessageBatch calls of up to 10 entries, then
 * a conditional PENDING → SENT per accepted entry. A rejected entry is recorded on its message (attempts,
 * nextAttemptAt, lastError) instead of failing the batch, so one bad message never blocks the others.
 * @example
 * const report = await relayMessages(records.map(toRelayInput), deps);
 * return { batchItemFailures: report.unrecorded.map((itemIdentifier) => ({ itemIdentifier })) };
 */
export async function relayMessages(inputs: readonly RelayInput[], deps: RelayDeps): Promise<RelayReport> {
  // A message may appear twice in one stream batch (retried records): send it once.
  const recordIds = new Map<string, string[]>();
  const messages: OutboxItem[] = [];
  for (const { recordId, message } of inputs) {
    const ids = recordIds.get(message.messageId);
    if (ids) ids.push(recordId);
    else {
      recordIds.set(message.messageId, [recordId]);
      messages.push(message);
    }
  }

  const outcomes = await Promise.all([
    ...sendByQueue(messages, deps).map(async (send) => {
      const result = await send.publish;
      const byId = new Map(send.messages.map((m) => [m.messageId, m]));
      return Promise.all([
        ...result.sent.map((id) =>
          settle(id, () => deps.store.markSent(id, deps.clock(), byId.get(id)?.resends ?? 0)),
        ),
        ...result.failed.map(({ messageId, error }) => {
          const message = byId.get(messageId);
          return message ? recordFailure(message, error, deps) : Promise.resolve(undefined);
        }),
      ]);
    }),
    Promise.all(
      messages
        .filter((m) => deps.queueFor(m.topic) === undefined)
        .map((m) => recordFailure(m, `no queue is routed for topic "${m.topic}"`, deps)),
    ),
  ]);

  const counts = { sent: 0, alreadyAdvanced: 0, retryScheduled: 0, failed: 0 };
  const unrecorded: string[] = [];
  for (const outcome of outcomes.flat()) {
    if (outcome === undefined) continue;
    if (outcome.kind === 'unrecorded') unrecorded.push(...(recordIds.get(outcome.messageId) ?? []));
    else if (outcome.outcome === 'SENT') counts.sent += 1;
    else if (outcome.outcome === 'ALREADY_ADVANCED') counts.alreadyAdvanced += 1;
    else if (outcome.outcome === 'RETRY_SCHEDULED') counts.retryScheduled += 1;
    else counts.failed += 1;
  }
  return { ...counts, unrecorded };
}

type Settled =
  | { readonly kind: 'recorded'; readonly messageId: string; readonly outcome: string }
  | { readonly kind: 'unrecorded'; readonly messageId: string; readonly error: unknown };

async function settle(messageId: string, write: () => Promise<string>): Promise<Settled> {
  try {
    return { kind: 'recorded', messageId, outcome: await write() };
  } catch (error) {
    return { kind: 'unrecorded', messageId, error };
  }
}

function recordFailure(message: OutboxItem, error: string, deps: RelayDeps): Promise<Settled> {
  return settle(message.messageId, () => {
    const now = deps.clock();
    const seenAttempts = message.attempts;
    const decision = decideAfterSendFailure({
      policy: deps.retryPolicyFor(message.topic),
      seenAttempts,
      now,
      random: deps.random,
    });
    return deps.store.recordSendFailure({ messageId: message.messageId, seenAttempts, decision, error, now });
  });
}

/** One SendMessageBatch call in flight, with the outbox items it carries. */
interface QueuedSend {
  readonly messages: readonly OutboxItem[];
  readonly publish: Promise<PublishResult>;
}

function sendByQueue(messages: readonly OutboxItem[], deps: RelayDeps): QueuedSend[] {
  const byQueue = new Map<string, OutboxItem[]>();
  for (const message of messages) {
    const queueUrl = deps.queueFor(message.topic);
    if (queueUrl === undefined) continue;
    const queued = byQueue.get(queueUrl) ?? [];
    queued.push(message);
    byQueue.set(queueUrl, queued);
  }
  return [...byQueue].flatMap(([queueUrl, queued]) =>
    chunkForSendMessageBatch(queued, (m) => messageSizeBytes(toEnvelope(m))).map((chunk) => ({
      messages: chunk,
      publish: publishSafely(deps.publisher, queueUrl, chunk.map(toEnvelope)),
    })),
  );
}

/** A publisher that throws has failed every entry of this attempt; the failure is recorded, not raised. */
async function publishSafely(
  publisher: MessagePublisher,
  queueUrl: string,
  messages: readonly Envelope[],
): Promise<PublishResult> {
  try {
    return await publisher.publishBatch(queueUrl, messages);
  } catch (error) {
    return {
      sent: [],
      failed: messages.map((m) => ({ messageId: m.messageId, error: describeError(error) })),
    };
  }
}

/** The wire envelope of an outbox item: the bookkeeping fields stay in the outbox. */
export function toEnvelope(item: OutboxItem): Envelope {
  return {
    messageId: item.messageId,
    topic: item.topic,
    aggregateId: item.aggregateId,
    payload: item.payload,
    headers: item.headers,
    createdAt: item.createdAt,
    schemaVersion: item.schemaVersion,
  };
}
