import { describeError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import { assertPlainJson } from '../message/plain-json.ts';
import { UNKNOWN_TOPIC } from '../observability/metric-names.ts';
import { deliveryRoundOf, messageIdOf, type OutboxItem, orderKeyOf } from '../outbox/outbox-item.ts';
import type { OutboxStore } from '../outbox/outbox-store.ts';
import type { RetryPolicy } from '../retry/retry-policy.ts';
import type { SendFailureDecision } from '../retry/send-failure-decision.ts';
import { decideAfterSendFailure } from '../retry/send-failure-decision.ts';
import { packRunsForSendMessageBatch } from './batch-entries.ts';
import type { MessagePublisher, PublishResult } from './message-publisher.ts';
import { countSend, type SendCountsByTopic, type SendProblem } from './send-counts.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from './wire-format.ts';

/** A message that can never be sent as stored; it fails alone, FAILED with the reason. */
export interface UnsendableMessage {
  readonly messageId: string;
  /** The attempts it had when read (the failure is recorded only if nobody counted one since). */
  readonly attempts: number;
  readonly reason: string;
  /** When the stored item still names them. */
  readonly topic?: string;
  readonly subscriber?: string;
  readonly aggregateId?: string;
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
  /**
   * The queue URL of a topic's messages, or of one subscriber's deliveries of it (`subscriber` set on a delivery
   * row); undefined when none is routed.
   */
  readonly queueFor: (topic: string, subscriber?: string) => string | undefined;
  /** The retry policy of a topic's messages, or of one subscriber's deliveries of it. */
  readonly retryPolicyFor: (topic: string, subscriber?: string) => RetryPolicy;
  readonly clock: () => Date;
  readonly random: () => number;
  /**
   * The lease owner of a sweeper that claimed these messages: each is marked SENT only under that claim. Absent
   * for the stream relay, whose marks hold only while no sweeper holds a live claim.
   */
  readonly claimedBy?: string;
}

/** What happened to a relayed batch. */
export interface RelayReport {
  readonly sent: number;
  /**
   * Not sent because the mark before the send found it no longer PENDING, or claimed: sent by someone else first (a
   * sweeper, or the relay on a retried stream record), confirmed, or cancelled by an operator.
   */
  readonly alreadyAdvanced: number;
  readonly retryScheduled: number;
  readonly failed: number;
  /**
   * Ordered messages not offered to SQS because an earlier message of their order key failed in this batch: left
   * PENDING, no attempt counted, for the sweeper to send after it.
   */
  readonly held: number;
  /**
   * Record ids whose outcome could not be written (e.g. DynamoDB unavailable after the send): the source
   * must retry them. The only records reported as batch item failures.
   */
  readonly unrecorded: readonly string[];
  /** What happened per topic (and per subscriber of each): SQS's answers and the outcomes recorded. */
  readonly topics: Readonly<SendCountsByTopic>;
  /** Each message whose send did not end SENT, with why. */
  readonly problems: readonly SendProblem[];
}

/** A message ready for the wire: its envelope and the bytes SQS counts. */
interface Prepared {
  readonly message: OutboxItem;
  readonly envelope: Envelope;
  readonly bytes: number;
}

/**
 * Forwards outbox messages to their topic queues: a conditional PENDING → SENT per message first (a message that is
 * no longer PENDING — cancelled, confirmed, sent by someone else — is not sent), then parallel SendMessageBatch
 * calls of up to 10 entries; a refused entry's mark is undone. An order key's messages go out in seq order, in one batch, or
 * in consecutive batches sent one after another when they do not fit one; after a failed entry its later messages
 * are held (left PENDING for the sweeper). A rejected entry is recorded on its message (attempts,
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

  const topics: SendCountsByTopic = {};
  const routed = prepared.filter((p) => deps.queueFor(p.message.topic, p.message.subscriber) !== undefined);
  const sends = await Promise.all(sendLanes(routed, deps).map((lane) => sendLane(lane, deps, topics)));
  const outcomes = await Promise.all([
    ...sends.map((send) => send.settled),
    Promise.all(
      prepared
        .filter((p) => deps.queueFor(p.message.topic, p.message.subscriber) === undefined)
        .map((p) =>
          recordRetry(p.message, { error: `no queue is routed for topic "${p.message.topic}"` }, deps),
        ),
    ),
    Promise.all(unsendable.map((message) => recordUnsendable(message, deps))),
  ]);

  const counts = { sent: 0, alreadyAdvanced: 0, retryScheduled: 0, failed: 0 };
  const unrecorded: string[] = [];
  const problems: SendProblem[] = [];
  for (const settled of outcomes.flat()) {
    const { subject } = settled;
    if (settled.kind === 'unrecorded') {
      unrecorded.push(...(recordIds.get(subject.messageId) ?? []));
      problems.push({ ...subject, outcome: 'UNRECORDED', error: describeError(settled.error) });
    } else if (settled.outcome === 'SENT') counts.sent += 1;
    else if (settled.outcome === 'ALREADY_ADVANCED') counts.alreadyAdvanced += 1;
    else if (settled.outcome === 'RETRY_SCHEDULED') {
      counts.retryScheduled += 1;
      countSend(topics, subject, 'retryScheduled');
      problems.push({ ...subject, outcome: 'RETRY_SCHEDULED', error: settled.error ?? '' });
    } else {
      counts.failed += 1;
      countSend(topics, subject, 'failed');
      problems.push({ ...subject, outcome: 'FAILED', error: settled.error ?? '' });
    }
  }
  const held = sends.flatMap((send) => send.held);
  for (const { message, behind } of held) {
    problems.push({
      ...subjectOf(message),
      ...orderOf(message),
      outcome: 'HELD',
      error: `held behind seq ${behind.seq} of ${behind.orderKey}, whose send failed; left PENDING for the sweeper`,
    });
  }
  return { ...counts, held: held.length, unrecorded, topics, problems };
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
        ...unsendableSubject(message),
        attempts,
        reason: `message is ${bytes} bytes on the wire; SQS accepts at most ${SQS_MAX_MESSAGE_BYTES}`,
      };
    }
    return { message, envelope, bytes };
  } catch (error) {
    return {
      ...unsendableSubject(message),
      attempts,
      reason: `cannot be sent as stored: ${describeError(error)}`,
    };
  }
}

/** What an unsendable message's failure names: its id, topic, subscriber (of a delivery) and aggregate. */
function unsendableSubject(
  message: OutboxItem,
): Pick<UnsendableMessage, 'messageId' | 'topic' | 'subscriber' | 'aggregateId'> {
  return {
    messageId: message.messageId,
    topic: message.topic,
    ...(message.subscriber === undefined ? {} : { subscriber: message.subscriber }),
    aggregateId: message.aggregateId,
  };
}

/** The message an outcome is about, as its log line names it. */
interface Subject {
  readonly messageId: string;
  readonly topic: string;
  /** The subscriber, for a delivery to one: its sends are counted for it too. */
  readonly subscriber?: string;
  readonly aggregateId?: string;
}

/** An outcome written on its message (with the send error, for a failure), or the error that kept it from it. */
type Settled =
  | {
      readonly kind: 'recorded';
      readonly subject: Subject;
      readonly outcome: string;
      readonly error?: string;
    }
  | { readonly kind: 'unrecorded'; readonly subject: Subject; readonly error: unknown };

function subjectOf(message: OutboxItem | UnsendableMessage): Subject {
  return {
    messageId: message.messageId,
    topic: message.topic ?? UNKNOWN_TOPIC,
    ...(message.subscriber === undefined ? {} : { subscriber: message.subscriber }),
    ...(message.aggregateId === undefined ? {} : { aggregateId: message.aggregateId }),
  };
}

async function settle(
  message: OutboxItem | UnsendableMessage,
  write: () => Promise<string>,
  error?: string,
): Promise<Settled> {
  const subject = subjectOf(message);
  try {
    return { kind: 'recorded', subject, outcome: await write(), ...(error === undefined ? {} : { error }) };
  } catch (cause) {
    return { kind: 'unrecorded', subject, error: cause };
  }
}

/**
 * A failed send that may succeed later: the next attempt is scheduled with backoff, or FAILED when none is left.
 * `markedAt`: the send was refused after this sender marked the message SENT (its `sentAt`); the record undoes it.
 */
function recordRetry(
  message: OutboxItem,
  failure: { readonly error: string; readonly markedAt?: string },
  deps: RelayDeps,
): Promise<Settled> {
  const { error, markedAt } = failure;
  return settle(
    message,
    () => {
      const now = deps.clock();
      // The attempts before the mark: the mark counted this one, and the decision counts it the same way.
      const seenAttempts = message.attempts ?? 0;
      const decision = decideAfterSendFailure({
        policy: deps.retryPolicyFor(message.topic, message.subscriber),
        seenAttempts,
        seenRefusals: message.refusals ?? 0,
        now,
        random: deps.random,
      });
      return deps.store.recordSendFailure({
        messageId: message.messageId,
        seenAttempts,
        decision,
        error,
        now,
        ...(markedAt === undefined ? {} : { markedAt }),
      });
    },
    error,
  );
}

/** A message that no retry can send: FAILED now, with the reason, for an operator to see. */
function recordUnsendable(message: UnsendableMessage, deps: RelayDeps): Promise<Settled> {
  const decision: SendFailureDecision = { kind: 'fail', attempts: message.attempts + 1 };
  return settle(
    message,
    () =>
      deps.store.recordSendFailure({
        messageId: message.messageId,
        seenAttempts: message.attempts,
        decision,
        error: message.reason,
        now: deps.clock(),
      }),
    message.reason,
  );
}

/** SendMessageBatch calls to one queue that go out one after another (one order key's long run). */
interface Lane {
  readonly queueUrl: string;
  readonly batches: readonly (readonly Prepared[])[];
}

/** A message not sent because an earlier message of its order key failed in this run. */
interface Held {
  readonly message: OutboxItem;
  /** The failed message it waits behind. */
  readonly behind: { readonly orderKey: string; readonly seq: number };
}

/** What a lane did: the outcomes being recorded, and the messages it held back. */
interface LaneSend {
  readonly settled: Promise<Settled[]>;
  readonly held: readonly Held[];
}

/** The order key and seq of an ordered message; undefined for an unordered one. */
function sequenceOf(message: OutboxItem): { readonly orderKey: string; readonly seq: number } | undefined {
  return message.orderKey === undefined || message.seq === undefined
    ? undefined
    : { orderKey: message.orderKey, seq: message.seq };
}

/** The order key and seq a problem line names, when the message has them. */
function orderOf(message: OutboxItem): { readonly orderKey?: string; readonly seq?: number } {
  return sequenceOf(message) ?? {};
}

/**
 * The queue's messages as lanes of SendMessageBatch calls: an order key's messages form one run in seq order
 * (whatever order the stream or the due index gave them in), every other message a run of its own.
 */
function sendLanes(messages: readonly Prepared[], deps: RelayDeps): Lane[] {
  const byQueue = new Map<string, Map<string, Prepared[]>>();
  for (const prepared of messages) {
    const queueUrl = deps.queueFor(prepared.message.topic, prepared.message.subscriber);
    if (queueUrl === undefined) continue;
    const runs = byQueue.get(queueUrl) ?? new Map<string, Prepared[]>();
    byQueue.set(queueUrl, runs);
    // The run key of an unordered message is its id (unique here): a run of one, in arrival order.
    const order = sequenceOf(prepared.message);
    const runKey = order === undefined ? `message:${prepared.message.messageId}` : `order:${order.orderKey}`;
    const run = runs.get(runKey) ?? [];
    run.push(prepared);
    runs.set(runKey, run);
  }
  return [...byQueue].flatMap(([queueUrl, runs]) => {
    const sorted = [...runs.values()].map((run) =>
      run.length > 1 ? [...run].sort((a, b) => (a.message.seq ?? 0) - (b.message.seq ?? 0)) : run,
    );
    return packRunsForSendMessageBatch(sorted, (p) => p.bytes).map((batches) => ({ queueUrl, batches }));
  });
}

/**
 * Sends a lane's batches in turn, each marked SENT just before its send. Once an entry of a batch failed, the lane's
 * later batches (the same order key's later messages) are held, unmarked: sending them would only make the consumer
 * wait for the failed one.
 */
async function sendLane(lane: Lane, deps: RelayDeps, topics: SendCountsByTopic): Promise<LaneSend> {
  const settling: Promise<Settled>[] = [];
  const held: Held[] = [];
  for (const [index, batch] of lane.batches.entries()) {
    const marks = await markBatch(batch, deps);
    settling.push(...marks.settled.map((settled) => Promise.resolve(settled)));
    if (marks.marked.length === 0) continue;
    const marked = marks.marked.map((m) => m.prepared);
    const result = await publishSafely(deps.publisher, lane.queueUrl, marked);
    settling.push(...settleBatch({ marks: marks.marked, result }, deps, topics));
    if (result.failed.length === 0) continue;
    const failed = new Set(result.failed.map((failure) => failure.messageId));
    const first = marked.find((p) => failed.has(p.envelope.messageId));
    const behind = first === undefined ? undefined : sequenceOf(first.message);
    if (behind === undefined) continue;
    for (const later of lane.batches.slice(index + 1).flat()) held.push({ message: later.message, behind });
    break;
  }
  return { settled: Promise.all(settling), held };
}

/** A message marked SENT for this send, with the mark's `sentAt`. */
interface Marked {
  readonly prepared: Prepared;
  readonly markedAt: string;
}

/**
 * Marks a batch's messages SENT, each conditionally: only those marked may be sent. One that is no longer PENDING
 * (cancelled, sent by someone else, confirmed) or claimed by another sender is settled as ALREADY_ADVANCED; one whose
 * mark could not be written is unrecorded (its source retries it), and neither is sent.
 */
async function markBatch(
  batch: readonly Prepared[],
  deps: RelayDeps,
): Promise<{ readonly marked: Marked[]; readonly settled: Settled[] }> {
  const marked: Marked[] = [];
  const settled: Settled[] = [];
  await Promise.all(
    batch.map(async (prepared) => {
      const { message } = prepared;
      const now = deps.clock();
      try {
        const outcome = await deps.store.markSent({
          messageId: message.messageId,
          now,
          resends: message.resends ?? 0,
          ...(deps.claimedBy === undefined ? {} : { claimedBy: deps.claimedBy }),
        });
        if (outcome === 'SENT') marked.push({ prepared, markedAt: now.toISOString() });
        else settled.push({ kind: 'recorded', subject: subjectOf(message), outcome });
      } catch (error) {
        settled.push({ kind: 'unrecorded', subject: subjectOf(message), error });
      }
    }),
  );
  // Marks settle in any order; the send keeps the batch's (seq) order.
  const order = new Map(batch.map((p, position) => [p.message.messageId, position]));
  marked.sort(
    (a, b) => (order.get(a.prepared.message.messageId) ?? 0) - (order.get(b.prepared.message.messageId) ?? 0),
  );
  return { marked, settled };
}

/** Records what SQS answered for each marked entry: SENT as marked, or the refused attempt (the mark undone). */
function settleBatch(
  { marks, result }: { readonly marks: readonly Marked[]; readonly result: PublishResult },
  deps: RelayDeps,
  topics: SendCountsByTopic,
): Promise<Settled>[] {
  // The publisher answers by the id on the wire: a lane's queue holds at most one delivery of each message.
  const byId = new Map(marks.map((m) => [m.prepared.envelope.messageId, m]));
  return [
    ...result.sent.flatMap((id) => {
      const mark = byId.get(id);
      if (mark === undefined) return [];
      const { message } = mark.prepared;
      countSend(topics, message, 'accepted');
      return [Promise.resolve<Settled>({ kind: 'recorded', subject: subjectOf(message), outcome: 'SENT' })];
    }),
    ...result.failed.flatMap(({ messageId, error }) => {
      const mark = byId.get(messageId);
      if (mark === undefined) return [];
      const { message } = mark.prepared;
      countSend(topics, message, 'sendFailures');
      return [recordRetry(message, { error, markedAt: mark.markedAt }, deps)];
    }),
  ];
}

/** A publisher that throws has failed every entry of this attempt; the failure is recorded, not raised. */
async function publishSafely(
  publisher: MessagePublisher,
  queueUrl: string,
  batch: readonly Prepared[],
): Promise<PublishResult> {
  const messages = batch.map((p) => p.envelope);
  // The round goes into a FIFO queue's deduplication id: a retry of this round reuses it, a resend gets a new one.
  const deliveryRounds = new Map(batch.map((p) => [p.envelope.messageId, deliveryRoundOf(p.message)]));
  try {
    return await publisher.publishBatch(queueUrl, messages, { deliveryRounds });
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
    messageId: messageIdOf(item),
    topic: item.topic,
    aggregateId: item.aggregateId,
    payload: item.payload,
    headers: item.headers ?? {},
    createdAt: item.createdAt,
    schemaVersion: item.schemaVersion,
    ...(item.orderKey === undefined ? {} : { orderKey: orderKeyOf(item) }),
    ...(item.seq === undefined ? {} : { seq: item.seq }),
  };
}
