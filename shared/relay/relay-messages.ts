import { describeError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import { assertPlainJson } from '../message/plain-json.ts';
import type { OutboxItem } from '../outbox/outbox-item.ts';
import type { OutboxStore } from '../outbox/outbox-store.ts';
import type { SendFailureDecision } from '../outbox/transition-updates.ts';
import type { RetryPolicy } from '../retry/retry-policy.ts';
import { decideAfterSendFailure } from '../retry/send-failure-decision.ts';
import { chunkForSendMessageBatch } from './batch-entries.ts';
import type { MessagePublisher, PublishResult } from './message-publisher.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from './wire-format.ts';

/** A message that can never be sent as stored; it fails alone, FAILED with the reason. */
export interface UnsendableMessage {
  readonly messageId: string;
  /** The attempts it had when read (the failure is recorded only if nobody counted one since). */
  readonly attempts: number;
  readonly reason: string;
}

/**
 * One message to forward, with the identifier its source uses to retry it (a stream sequence number), or a
 * message already known to be unsendable (its stored image could not be read).
 */
export type RelayInput =
  | { readonly recordId: string; readonly message: OutboxItem }
  | { readonly recordId: string; readonly unsendable: UnsendableMessage };

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

/** A message ready for the wire: its envelope and the bytes SQS counts. */
interface Prepared {
  readonly message: OutboxItem;
  readonly envelope: Envelope;
  readonly bytes: number;
}

/**
 * Forwards outbox messages to their topic queues: parallel SendMessageBatch calls of up to 10 entries, then
 * a conditional PENDING → SENT per accepted entry. A rejected entry is recorded on its message (attempts,
 * nextAttemptAt, lastError) instead of failing the batch, and a message that can never be sent as stored (a
 * payload that is not plain JSON, larger than SQS accepts, unreadable) is recorded FAILED with the reason: one
 * bad message never blocks the others.
 * @example
 * const report = await relayMessages(records.map(toRelayInput), deps);
 * return { batchItemFailures: report.unrecorded.map((itemIdentifier) => ({ itemIdentifier })) };
 */
export async function relayMessages(inputs: readonly RelayInput[], deps: RelayDeps): Promise<RelayReport> {
  // A message may appear twice in one stream batch (retried records): handle it once.
  const recordIds = new Map<string, string[]>();
  const prepared: Prepared[] = [];
  const unsendable: UnsendableMessage[] = [];
  for (const input of inputs) {
    const messageId = 'message' in input ? input.message.messageId : input.unsendable.messageId;
    const ids = recordIds.get(messageId);
    if (ids) {
      ids.push(input.recordId);
      continue;
    }
    recordIds.set(messageId, [input.recordId]);
    const ready = 'message' in input ? prepare(input.message) : input.unsendable;
    if ('envelope' in ready) prepared.push(ready);
    else unsendable.push(ready);
  }

  const routed = prepared.filter((p) => deps.queueFor(p.message.topic) !== undefined);
  const outcomes = await Promise.all([
    ...sendByQueue(routed, deps).map(async (send) => {
      const result = await send.publish;
      const byId = new Map(send.messages.map((m) => [m.messageId, m]));
      return Promise.all([
        ...result.sent.map((id) =>
          settle(id, () => deps.store.markSent(id, deps.clock(), byId.get(id)?.resends ?? 0)),
        ),
        ...result.failed.map(({ messageId, error }) => {
          const message = byId.get(messageId);
          return message ? recordRetry(message, error, deps) : Promise.resolve(undefined);
        }),
      ]);
    }),
    Promise.all(
      prepared
        .filter((p) => deps.queueFor(p.message.topic) === undefined)
        .map((p) => recordRetry(p.message, `no queue is routed for topic "${p.message.topic}"`, deps)),
    ),
    Promise.all(unsendable.map((message) => recordUnsendable(message, deps))),
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

/** The message on the wire, or why it can never get there. */
function prepare(message: OutboxItem): Prepared | UnsendableMessage {
  const attempts = message.attempts ?? 0;
  try {
    const envelope = toEnvelope(message);
    // Stored by an older version or another writer: a BigInt, a Set or an unreadable number would fail to
    // serialize, or be sent changed.
    assertPlainJson(envelope.payload, 'payload');
    assertPlainJson(envelope.headers, 'headers');
    const bytes = messageSizeBytes(envelope);
    if (bytes > SQS_MAX_MESSAGE_BYTES) {
      return {
        messageId: message.messageId,
        attempts,
        reason: `message is ${bytes} bytes on the wire; SQS accepts at most ${SQS_MAX_MESSAGE_BYTES}`,
      };
    }
    return { message, envelope, bytes };
  } catch (error) {
    return {
      messageId: message.messageId,
      attempts,
      reason: `cannot be sent as stored: ${describeError(error)}`,
    };
  }
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

/** A failed send that may succeed later: the next attempt is scheduled with backoff, or FAILED when none is left. */
function recordRetry(message: OutboxItem, error: string, deps: RelayDeps): Promise<Settled> {
  return settle(message.messageId, () => {
    const now = deps.clock();
    const seenAttempts = message.attempts ?? 0;
    const decision = decideAfterSendFailure({
      policy: deps.retryPolicyFor(message.topic),
      seenAttempts,
      now,
      random: deps.random,
    });
    return deps.store.recordSendFailure({ messageId: message.messageId, seenAttempts, decision, error, now });
  });
}

/** A message that no retry can send: FAILED now, with the reason, for an operator to see. */
function recordUnsendable(message: UnsendableMessage, deps: RelayDeps): Promise<Settled> {
  const decision: SendFailureDecision = { kind: 'fail', attempts: message.attempts + 1 };
  return settle(message.messageId, () =>
    deps.store.recordSendFailure({
      messageId: message.messageId,
      seenAttempts: message.attempts,
      decision,
      error: message.reason,
      now: deps.clock(),
    }),
  );
}

/** One SendMessageBatch call in flight, with the outbox items it carries. */
interface QueuedSend {
  readonly messages: readonly OutboxItem[];
  readonly publish: Promise<PublishResult>;
}

function sendByQueue(messages: readonly Prepared[], deps: RelayDeps): QueuedSend[] {
  const byQueue = new Map<string, Prepared[]>();
  for (const prepared of messages) {
    const queueUrl = deps.queueFor(prepared.message.topic);
    if (queueUrl === undefined) continue;
    const queued = byQueue.get(queueUrl) ?? [];
    queued.push(prepared);
    byQueue.set(queueUrl, queued);
  }
  return [...byQueue].flatMap(([queueUrl, queued]) =>
    chunkForSendMessageBatch(queued, (p) => p.bytes).map((chunk) => ({
      messages: chunk.map((p) => p.message),
      publish: publishSafely(
        deps.publisher,
        queueUrl,
        chunk.map((p) => p.envelope),
      ),
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
    headers: item.headers ?? {},
    createdAt: item.createdAt,
    schemaVersion: item.schemaVersion,
  };
}
