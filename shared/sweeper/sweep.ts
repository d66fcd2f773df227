import { MessageStatus } from '../message/message-status.ts';
import { UNKNOWN_TOPIC } from '../observability/metric-names.ts';
import { DEFAULT_GAP_TIMEOUT_MS, type OrderedTopic } from '../ordering/ordering.ts';
import { DEFAULT_DUE_SHARDS, dueShardKeys, type OutboxItem } from '../outbox/outbox-item.ts';
import {
  type DueEntry,
  type DueMessage,
  MAX_SEQUENCE_LOOKUP,
  type SequencedMessage,
  type SweepStore,
} from '../outbox/outbox-store.ts';
import { type RelayDeps, relayMessages } from '../relay/relay-messages.ts';
import { addSendCounts, countSend, type SendCountsByTopic, type SendProblem } from '../relay/send-counts.ts';
import { hasAttemptsLeft } from '../retry/retry-policy.ts';

/** Asks a topic's downstream whether it applied a message (reconciliation). */
export type DeliveryCheck = (message: OutboxItem) => Promise<DeliveryVerdict>;

/** What the downstream says of a message: applied (with the outcome it recorded, when it keeps one), or not. */
export type DeliveryVerdict =
  | { readonly verdict: 'DELIVERED'; readonly outcome?: string }
  | { readonly verdict: 'MISSING' }
  | ParkedVerdict;

/**
 * Ordered topics: the consumer holds the message until its predecessor arrives (`lastSeq` is the last seq it
 * applied for the message's order key; `parkedAt` when it began to wait).
 */
export interface ParkedVerdict {
  readonly verdict: 'PARKED';
  readonly parkedAt: string;
  readonly lastSeq: number;
}

/** How a sweeper run paces itself. */
export interface SweeperSettings {
  /** Partitions of the due index (must match the writer's). */
  readonly dueShards: number;
  /**
   * The subscribers of the outbox's topics: each one's deliveries have due partitions of their own, read beside the
   * plain ones with a page each per round, so one subscriber's backlog never delays another's due deliveries. A
   * subscriber not listed here has its deliveries never found.
   * @default [] - every topic goes to one queue
   */
  readonly subscribers?: readonly string[];
  /**
   * Whether a topic goes to a queue of the outbox's own (`TOPIC_QUEUES`), whose messages are in the plain
   * partitions. An outbox whose every topic goes to subscribers has none there: its sweeper skips them, a third of
   * its reads with two subscribers. (A message stuck there still shows in the counts and gauges, which read all.)
   * @default true
   */
  readonly plainShards?: boolean;
  /** How long a claim lasts; a crashed claimant's messages fall due again after it. */
  readonly leaseMs: number;
  /** Due messages read per shard and round. */
  readonly pageSize: number;
  /** Bounded work: messages claimed per run at most. */
  readonly maxMessagesPerRun: number;
  /**
   * Bounded load: messages claimed per second at most, averaged over the run. Each costs a claim, a send share and
   * a SENT update, so this bounds the run's DynamoDB writes and SQS requests while it drains a backlog.
   */
  readonly maxMessagesPerSecond: number;
  /** Pause between rounds that found nothing due while something falls due before the run ends. */
  readonly idleWaitMs: number;
  /** Stop starting rounds when less than this remains of the run. */
  readonly stopBeforeMs: number;
  /** When the downstream could not be asked, ask again after this long. */
  readonly recheckAfterMs: number;
}

/** The default bound of a sweeper run's rate: a million due messages drained in under half an hour. */
export const DEFAULT_SWEEPER_MAX_MESSAGES_PER_SECOND = 600;

/** The most a sweeper run may be allowed per second (each message costs a claim, a send share and an update). */
export const MAX_SWEEPER_MESSAGES_PER_SECOND = 10_000;

/**
 * Defaults: a one-minute run that leaves 5 s to spare and keeps draining while work remains, at up to 600
 * messages a second (a million due messages in under half an hour); claims outlive a send-and-mark comfortably.
 */
export const DEFAULT_SWEEPER_SETTINGS: SweeperSettings = {
  dueShards: DEFAULT_DUE_SHARDS,
  leaseMs: 60_000,
  pageSize: 25,
  maxMessagesPerRun: 60_000,
  maxMessagesPerSecond: DEFAULT_SWEEPER_MAX_MESSAGES_PER_SECOND,
  idleWaitMs: 1_000,
  stopBeforeMs: 5_000,
  recheckAfterMs: 60_000,
};

/** What a sweeper needs: the relay's pieces, a claimable store, per-topic checks and a time budget. */
export interface SweeperDeps extends Omit<RelayDeps, 'store'> {
  readonly store: SweepStore;
  /** Unique per run (the Lambda request id): the lease owner. */
  readonly owner: string;
  /** The downstream check of a topic; without one, an unconfirmed message is resent (consumers dedupe). */
  readonly deliveryCheckFor: (topic: string) => DeliveryCheck | undefined;
  /** Milliseconds left in this run (Lambda's `getRemainingTimeInMillis`). */
  readonly remainingMs: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly settings: SweeperSettings;
  /**
   * The ordering of a topic, for its gap timeout: how long a consumer may hold a message whose predecessor has
   * not arrived before the sweeper treats it as a gap. @default every topic waits `DEFAULT_GAP_TIMEOUT_MS`
   */
  readonly orderingFor?: (topic: string) => OrderedTopic | undefined;
}

/** Why a sweeper run ended. */
export type SweepEnd =
  /** Nothing was due and nothing falls due before the run's time is up: the run ended at once. */
  | 'IDLE'
  /** The run's time budget was spent. */
  | 'TIME'
  /** The run claimed `maxMessagesPerRun` messages. */
  | 'LIMIT';

/** What one sweeper run did. */
export interface SweepReport {
  rounds: number;
  claimed: number;
  lostClaims: number;
  sent: number;
  retryScheduled: number;
  failed: number;
  reconciledConfirmed: number;
  /** SENT messages found due before their confirmation deadline, filed under it. */
  postponed: number;
  requeued: number;
  /**
   * Ordered messages not sent this run because their predecessor must go first (in backoff, FAILED, or its send
   * failed in this run); due again when the predecessor is.
   */
  held: number;
  /** Per topic: messages a consumer held past the gap timeout waiting for a predecessor. */
  orderingGaps: Record<string, number>;
  unrecorded: number;
  /** Store or downstream calls that failed; their messages fall due again when the lease ends. */
  errors: number;
  /** Sends and FAILED transitions per topic and subscriber, which the sweeper function publishes as metrics. */
  topics: SendCountsByTopic;
  /** Each message whose send did not end SENT, or that became FAILED, with why. */
  problems: SendProblem[];
  ended?: SweepEnd;
}

/**
 * One sweeper run: while work remains and until its time budget is nearly spent (at a bounded rate), finds due
 * work in the sparse due index (never a scan), claims each message conditionally, and then
 * - PENDING (a retry that fell due, a stream record that was never processed, an expired claim): sends it
 *   and marks it SENT, or records the failure (FAILED once attempts are exhausted);
 * - SENT: before its confirmation deadline (`confirmBy`), filed under it (one write, no claim); past it, asks the
 *   downstream: CONFIRMED if it has the message, otherwise back to PENDING and resent.
 * Ordered messages (an `orderKey` and `seq`) go out in seq order, and wait while their predecessor has still to go
 * out (in backoff, claimed elsewhere, FAILED). One the consumer parked for its predecessor is never resent: past the
 * topic's gap timeout the gap is counted (`orderingGaps`), the predecessors the consumer lacks are resent when SENT,
 * and reported when FAILED or CANCELLED.
 * A run that finds nothing due, with nothing falling due before it would end, ends at once.
 * Safe to run concurrently (claims) and to crash at any line (leases expire, consumers dedupe).
 */
export async function sweep(deps: SweeperDeps): Promise<SweepReport> {
  const report: SweepReport = {
    rounds: 0,
    claimed: 0,
    lostClaims: 0,
    sent: 0,
    retryScheduled: 0,
    failed: 0,
    reconciledConfirmed: 0,
    postponed: 0,
    requeued: 0,
    held: 0,
    orderingGaps: {},
    unrecorded: 0,
    errors: 0,
    topics: {},
    problems: [],
  };
  const { settings } = deps;
  let startRemainingMs: number | undefined;
  for (;;) {
    const remainingMs = deps.remainingMs();
    startRemainingMs ??= remainingMs;
    if (remainingMs <= settings.stopBeforeMs) {
      report.ended = 'TIME';
      break;
    }
    if (report.claimed >= settings.maxMessagesPerRun) {
      report.ended = 'LIMIT';
      break;
    }
    report.rounds += 1;
    const due = await findDue(deps, report, deps.clock());
    const handledBefore = report.claimed + report.postponed;
    if (due.length > 0)
      await sweepRound(due.slice(0, settings.maxMessagesPerRun - report.claimed), deps, report);
    if (report.claimed + report.postponed > handledBefore) {
      // Bounded load: no faster on average than maxMessagesPerSecond since the run started (a postponement is one
      // write, a claimed message several: both count).
      const elapsedMs = startRemainingMs - deps.remainingMs();
      const earliestMs = ((report.claimed + report.postponed) / settings.maxMessagesPerSecond) * 1_000;
      if (earliestMs > elapsedMs) await deps.sleep(Math.min(earliestMs - elapsedMs, available(deps)));
      continue;
    }
    // Nothing claimed: end the run at once unless something falls due before it would end anyway (a retry's
    // backoff, a fresh message's grace), so an idle outbox costs one short run per schedule.
    if (due.length === 0 && !(await fallsDueSoon(deps, report))) {
      report.ended = 'IDLE';
      break;
    }
    await deps.sleep(Math.min(settings.idleWaitMs, available(deps)));
  }
  return report;
}

/** The due partitions a round reads: the plain ones unless no topic goes there, and each subscriber's. */
function duePartitions(settings: SweeperSettings): string[] {
  const all = dueShardKeys(settings.dueShards, settings.subscribers);
  return settings.plainShards === false ? all.slice(settings.dueShards) : all;
}

/** Milliseconds the run may still spend before it must stop starting rounds. */
function available(deps: SweeperDeps): number {
  return Math.max(0, deps.remainingMs() - deps.settings.stopBeforeMs);
}

/** Whether any shard holds a message that falls due before the run has to stop (one entry read per shard). */
async function fallsDueSoon(deps: SweeperDeps, report: SweepReport): Promise<boolean> {
  const horizon = new Date(deps.clock().getTime() + available(deps));
  const shards = duePartitions(deps.settings);
  const peeks = await Promise.all(
    shards.map((shard) => guarded(report, () => deps.store.findDue(shard, horizon, 1))),
  );
  // A shard that could not be read may hold work: keep going rather than leave it for the next run.
  return peeks.some((page) => page === undefined || page.length > 0);
}

async function findDue(deps: SweeperDeps, report: SweepReport, now: Date): Promise<DueEntry[]> {
  const shards = duePartitions(deps.settings);
  // One unreadable shard (throttled, say) must not stop the others from being swept.
  const pages = await Promise.all(
    shards.map(
      async (shard) =>
        (await guarded(report, () => deps.store.findDue(shard, now, deps.settings.pageSize))) ?? [],
    ),
  );
  return pages.flat();
}

/** Runs one step; a failure is counted and left to the lease, never allowed to stop the run. */
async function guarded<T>(report: SweepReport, step: () => Promise<T>): Promise<T | undefined> {
  try {
    return await step();
  } catch {
    report.errors += 1;
    return undefined;
  }
}

async function sweepRound(
  entries: readonly DueEntry[],
  deps: SweeperDeps,
  report: SweepReport,
): Promise<void> {
  // A SENT message still within its confirmation deadline is not late: filed under its deadline in one write.
  const nowMs = deps.clock().getTime();
  const early = (entry: DueEntry) =>
    entry.status === MessageStatus.SENT &&
    entry.confirmBy !== undefined &&
    Date.parse(entry.confirmBy) > nowMs;
  await Promise.all(
    entries.filter(early).map(async (entry) => {
      const postponed = await guarded(report, () =>
        deps.store.postpone({
          messageId: entry.messageId,
          confirmBy: entry.confirmBy as string,
          now: deps.clock(),
        }),
      );
      if (postponed === true) report.postponed += 1;
    }),
  );
  const due = entries.filter((entry) => !early(entry));
  const claimed = await Promise.all(
    due.map(async (entry) => {
      const result = await guarded(report, () =>
        deps.store.claim({
          messageId: entry.messageId,
          ...(entry.status === undefined ? {} : { status: entry.status }),
          owner: deps.owner,
          now: deps.clock(),
          leaseMs: deps.settings.leaseMs,
        }),
      );
      return result?.outcome === 'CLAIMED' ? result.message : undefined;
    }),
  );
  const claimedEntries = claimed.filter((entry): entry is DueMessage => entry !== undefined);
  report.claimed += claimedEntries.length;
  report.lostClaims += due.length - claimedEntries.length;
  // An item that cannot be read can never be sent: it fails alone, with the reason, and the round goes on.
  await Promise.all(
    claimedEntries.flatMap((entry) =>
      'unreadable' in entry
        ? [
            guarded(report, async () => {
              const failed = await deps.store.failUnreadable({
                messageId: entry.messageId,
                owner: deps.owner,
                now: deps.clock(),
                reason: `unreadable outbox item: ${entry.unreadable}`,
              });
              if (failed) {
                const reason = `unreadable outbox item: ${entry.unreadable}`;
                countFailed(report, { messageId: entry.messageId, topic: UNKNOWN_TOPIC }, reason);
              }
            }),
          ]
        : [],
    ),
  );
  const mine = claimedEntries.flatMap((entry) => ('item' in entry ? [entry.item] : []));

  const reconciled = await Promise.all(
    mine
      .filter((m) => m.status === MessageStatus.SENT)
      .map(async (message) => (await guarded(report, () => reconcile(message, deps, report))) ?? []),
  );
  // A predecessor resent for a gap may also be due itself in this round: sent once.
  const toSend = new Map<string, OutboxItem>();
  for (const message of [...mine.filter((m) => m.status === MessageStatus.PENDING), ...reconciled.flat()]) {
    toSend.set(message.messageId, message);
  }
  await send([...toSend.values()], deps, report);
}

/**
 * Settles a SENT message past its deadline; returns what must be resent (now PENDING): the message itself, or for
 * a message a consumer parked past the gap timeout, the predecessors it never got.
 */
async function reconcile(message: OutboxItem, deps: SweeperDeps, report: SweepReport): Promise<OutboxItem[]> {
  const now = deps.clock();
  if (message.confirmBy !== undefined && Date.parse(message.confirmBy) > now.getTime()) {
    // Due by its earlier nextAttemptAt but still within its confirmation deadline: not late yet.
    if (
      await deps.store.release({
        messageId: message.messageId,
        owner: deps.owner,
        now,
        nextAttemptAt: new Date(message.confirmBy),
      })
    ) {
      report.postponed += 1;
    }
    return [];
  }
  const check = deliveryCheckOf(message, deps);
  let answer: DeliveryVerdict;
  try {
    answer = check ? await check(message) : { verdict: 'MISSING' };
  } catch {
    // The downstream could not be asked: keep the message SENT and ask again later.
    await deps.store.release({
      messageId: message.messageId,
      owner: deps.owner,
      now,
      nextAttemptAt: new Date(now.getTime() + deps.settings.recheckAfterMs),
    });
    return [];
  }
  if (answer.verdict === 'DELIVERED') {
    const outcome = await deps.store.confirm(message.messageId, deps.clock(), answer.outcome);
    if (outcome === 'CONFIRMED') report.reconciledConfirmed += 1;
    return [];
  }
  if (answer.verdict === 'PARKED') return resolveParked({ message, parked: answer }, deps, report);
  const resent = await requeueForResend(message, deps, report);
  return resent === undefined ? [] : [resent];
}

/**
 * A claimed SENT message the downstream never got, back to PENDING for a new delivery round; undefined when it
 * changed meanwhile, or was resent as often as its policy allows (then FAILED, for an operator to look at).
 */
/**
 * How to ask whether `message` arrived: the topic's check; none for a subscriber's delivery, whose subscriber
 * answers with receipts (its tables are its own), so an unconfirmed delivery is resent and its inbox dedupes.
 */
function deliveryCheckOf(message: OutboxItem, deps: SweeperDeps): DeliveryCheck | undefined {
  return message.subscriber === undefined ? deps.deliveryCheckFor(message.topic) : undefined;
}

async function requeueForResend(
  message: OutboxItem,
  deps: SweeperDeps,
  report: SweepReport,
): Promise<OutboxItem | undefined> {
  const resends = message.resends ?? 0;
  if (!(await deps.store.requeue(message.messageId, deps.owner, deps.clock()))) return undefined;
  report.requeued += 1;
  if (resends >= deps.retryPolicyFor(message.topic, message.subscriber).maxAttempts) {
    // Resent as often as the policy allows and never confirmed: stop, keep it, and let an operator look.
    const error = `not confirmed by the downstream after ${resends + 1} delivery rounds`;
    const outcome = await deps.store.recordSendFailure({
      messageId: message.messageId,
      seenAttempts: 0,
      decision: { kind: 'fail', attempts: 0 },
      error,
      now: deps.clock(),
    });
    if (outcome === 'FAILED') countFailed(report, message, error);
    return undefined;
  }
  return { ...message, status: MessageStatus.PENDING, attempts: 0, resends: resends + 1 };
}

/** How long a consumer may hold a message of `topic` waiting for its predecessor. */
function gapTimeoutMs(deps: SweeperDeps, topic: string): number {
  return deps.orderingFor?.(topic)?.gapTimeoutMs ?? DEFAULT_GAP_TIMEOUT_MS;
}

/** The order key and seq of an ordered message; undefined for an unordered one. */
function sequenceOf(message: OutboxItem): { readonly orderKey: string; readonly seq: number } | undefined {
  return message.orderKey === undefined || message.seq === undefined
    ? undefined
    : { orderKey: message.orderKey, seq: message.seq };
}

/**
 * A SENT ordered message the consumer holds until its predecessor arrives. Never resent itself (the consumer has
 * it). Within the gap timeout it waits until the timeout; past it, the gap is counted and the predecessors the
 * consumer lacks are looked at: a SENT one it never got is resent now, a PENDING one is left to its schedule, a
 * FAILED or CANCELLED one is reported for an operator to replay or skip. Then it waits one more gap timeout.
 */
async function resolveParked(
  { message, parked }: { readonly message: OutboxItem; readonly parked: ParkedVerdict },
  deps: SweeperDeps,
  report: SweepReport,
): Promise<OutboxItem[]> {
  const now = deps.clock();
  const timeoutMs = gapTimeoutMs(deps, message.topic);
  const parkedAtMs = Date.parse(parked.parkedAt);
  const gapAtMs = (Number.isNaN(parkedAtMs) ? now.getTime() : parkedAtMs) + timeoutMs;
  const release = (until: number) =>
    deps.store.release({
      messageId: message.messageId,
      owner: deps.owner,
      now,
      nextAttemptAt: new Date(until),
    });
  if (now.getTime() < gapAtMs) {
    if (await release(gapAtMs)) report.postponed += 1;
    return [];
  }
  countGap(report, message.topic);
  const order = sequenceOf(message);
  if (order !== undefined && parked.lastSeq >= order.seq - 1) {
    // Nothing is missing: its predecessor was applied, but whatever should have drained it never did (a copy
    // requeued by the drain was lost). Sent again, it is the consumer's next message and applies at once.
    const resent = await requeueForResend(message, deps, report);
    return resent === undefined ? [] : [resent];
  }
  const missing =
    order === undefined
      ? []
      : await deps.store.findInSequence({
          orderKey: order.orderKey,
          fromSeq: parked.lastSeq + 1,
          toSeq: order.seq - 1,
        });
  if (order !== undefined) reportGone({ message, order, lastSeq: parked.lastSeq, found: missing }, report);
  const resent = await Promise.all(
    missing.map((predecessor) => guarded(report, () => resolveMissing(predecessor, deps, report))),
  );
  await release(now.getTime() + timeoutMs);
  return resent.filter((item): item is OutboxItem => item !== undefined);
}

/**
 * Names each seq a parked message waits for that the outbox no longer holds (its cancelled message expired, or it
 * was erased): nothing can send it, so only an operator's skip by order key and seq closes the gap.
 */
function reportGone(
  gap: {
    readonly message: OutboxItem;
    readonly order: { readonly orderKey: string; readonly seq: number };
    readonly lastSeq: number;
    readonly found: readonly SequencedMessage[];
  },
  report: SweepReport,
): void {
  const { message, order } = gap;
  const present = new Set(gap.found.map((predecessor) => predecessor.seq));
  // At most the lookup's bound: a longer gap is named from its start, the rest once that is closed.
  const last = Math.min(order.seq - 1, gap.lastSeq + MAX_SEQUENCE_LOOKUP);
  for (let seq = gap.lastSeq + 1; seq <= last; seq += 1) {
    if (present.has(seq)) continue;
    report.problems.push({
      messageId: message.messageId,
      topic: message.topic,
      aggregateId: message.aggregateId,
      orderKey: order.orderKey,
      seq,
      outcome: 'GAP',
      error:
        `seq ${seq} of ${order.orderKey} is no longer in the outbox (expired after its cancel, or erased) and seq ` +
        `${order.seq} (${message.messageId}) waits for it: skip it (outbox skip --order-key ${order.orderKey} --seq ${seq})`,
    });
  }
}

/**
 * A predecessor a consumer waits for: resent now when it is SENT and the consumer never got it, reported when only
 * an operator can release it; otherwise left alone (PENDING: its schedule sends it; the consumer parked it too).
 */
async function resolveMissing(
  predecessor: SequencedMessage,
  deps: SweeperDeps,
  report: SweepReport,
): Promise<OutboxItem | undefined> {
  if (predecessor.status === MessageStatus.FAILED || predecessor.status === MessageStatus.CANCELLED) {
    report.problems.push({
      messageId: predecessor.messageId,
      topic: predecessor.topic ?? UNKNOWN_TOPIC,
      ...(predecessor.aggregateId === undefined ? {} : { aggregateId: predecessor.aggregateId }),
      orderKey: predecessor.orderKey,
      seq: predecessor.seq,
      outcome: 'GAP',
      error: `seq ${predecessor.seq} of ${predecessor.orderKey} is ${predecessor.status} and its successors wait for it: replay or skip it`,
    });
    return undefined;
  }
  if (predecessor.status !== MessageStatus.SENT) return undefined;
  const now = deps.clock();
  const claim = await deps.store.claim({
    messageId: predecessor.messageId,
    status: MessageStatus.SENT,
    owner: deps.owner,
    now,
    leaseMs: deps.settings.leaseMs,
    // Its confirmation deadline may be far off; the consumer waits for it now.
    early: true,
  });
  if (claim.outcome !== 'CLAIMED' || !('item' in claim.message)) return undefined;
  report.claimed += 1;
  const item = claim.message.item;
  const check = deliveryCheckOf(item, deps);
  const answer = await (check ? check(item) : Promise.resolve<DeliveryVerdict>({ verdict: 'MISSING' })).catch(
    () => undefined,
  );
  if (answer?.verdict === 'MISSING') return requeueForResend(item, deps, report);
  if (answer?.verdict === 'DELIVERED') {
    const outcome = await deps.store.confirm(item.messageId, deps.clock(), answer.outcome);
    if (outcome === 'CONFIRMED') report.reconciledConfirmed += 1;
    return undefined;
  }
  // Parked by the consumer too, or it could not be asked: back to when it was due, to be reconciled then.
  const dueAt =
    predecessor.nextAttemptAt ?? new Date(now.getTime() + deps.settings.recheckAfterMs).toISOString();
  await deps.store.release({
    messageId: item.messageId,
    owner: deps.owner,
    now,
    nextAttemptAt: new Date(dueAt),
  });
  return undefined;
}

/** One more gap of `topic`. */
function countGap(report: SweepReport, topic: string): void {
  // Own entries only: a topic comes from a stored message, and `gaps['__proto__']` would be Object.prototype.
  const count = Object.hasOwn(report.orderingGaps, topic) ? (report.orderingGaps[topic] ?? 0) : 0;
  Object.defineProperty(report.orderingGaps, topic, {
    value: count + 1,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

async function send(messages: readonly OutboxItem[], deps: SweeperDeps, report: SweepReport): Promise<void> {
  // Out of attempts in this round, or refused as often as the policy allows over all rounds.
  const left = (m: OutboxItem) =>
    hasAttemptsLeft(deps.retryPolicyFor(m.topic, m.subscriber), m.attempts) &&
    hasAttemptsLeft(deps.retryPolicyFor(m.topic, m.subscriber), m.refusals ?? 0);
  const exhausted = messages.filter((m) => !left(m));
  const sendable = messages.filter(left);
  await Promise.all(
    exhausted.map(async (message) => {
      const error = message.lastError ?? `no confirmation after ${message.attempts} attempts`;
      const outcome = await guarded(report, () =>
        deps.store.recordSendFailure({
          messageId: message.messageId,
          seenAttempts: message.attempts,
          decision: { kind: 'fail', attempts: message.attempts },
          error,
          now: deps.clock(),
        }),
      );
      if (outcome === 'FAILED') countFailed(report, message, error);
    }),
  );
  const ready = await holdBehindPredecessors(sendable, deps, report);
  if (ready.length === 0) return;
  // Each is marked SENT under this run's claim just before its send: a cancel that dropped the claim stops it.
  const relayed = await relayMessages(
    ready.map((message) => ({ recordId: message.messageId, message })),
    { ...deps, store: deps.store, claimedBy: deps.owner },
  );
  report.sent += relayed.sent;
  // Held behind a failed send of this round: due again when the claim ends, by when the predecessor is retried.
  report.held += relayed.held;
  report.retryScheduled += relayed.retryScheduled;
  report.failed += relayed.failed;
  // Outcomes that could not be written are left to the lease: the message falls due again.
  report.unrecorded += relayed.unrecorded.length;
  addSendCounts(report.topics, relayed.topics);
  report.problems.push(...relayed.problems);
}

/** How long to wait for a predecessor that is due now but not claimed by this run: the next round sends it. */
const DUE_PREDECESSOR_WAIT_MS = 5_000;

/** Why an ordered message waits, and until when. */
interface Hold {
  readonly until: Date;
  /** For an operator: only they can release it. */
  readonly problem?: string;
}

/**
 * Whether an ordered message must wait for its predecessor (`undefined`: send it). It must while the predecessor
 * still has to go out: PENDING (in backoff, claimed by another sweeper, or due but not claimed by this run) or
 * FAILED. A predecessor SENT, CONFIRMED or CANCELLED, or gone (expired, never written), lets it go.
 */
function predecessorHold(
  predecessor: SequencedMessage | undefined,
  context: { readonly now: Date; readonly gapTimeoutMs: number },
): Hold | undefined {
  const nowMs = context.now.getTime();
  if (predecessor?.status === MessageStatus.PENDING) {
    const dueMs =
      predecessor.nextAttemptAt === undefined ? Number.NaN : Date.parse(predecessor.nextAttemptAt);
    return { until: new Date(dueMs > nowMs ? dueMs : nowMs + DUE_PREDECESSOR_WAIT_MS) };
  }
  if (predecessor?.status === MessageStatus.FAILED) {
    return {
      until: new Date(nowMs + context.gapTimeoutMs),
      problem: `held: seq ${predecessor.seq} of ${predecessor.orderKey} is FAILED; replay or skip it`,
    };
  }
  return undefined;
}

/**
 * The messages that may be sent now, in the relay's terms: an order key's claimed messages in seq order, each
 * checked against its predecessor unless that one is sent in the same batch. From the first that must wait, the
 * key's messages are released until the predecessor is due; the rest go out.
 */
async function holdBehindPredecessors(
  messages: readonly OutboxItem[],
  deps: SweeperDeps,
  report: SweepReport,
): Promise<OutboxItem[]> {
  const ready: OutboxItem[] = [];
  const byOrderKey = new Map<string, OutboxItem[]>();
  for (const message of messages) {
    const order = sequenceOf(message);
    if (order === undefined) {
      ready.push(message);
      continue;
    }
    const group = byOrderKey.get(order.orderKey) ?? [];
    group.push(message);
    byOrderKey.set(order.orderKey, group);
  }
  const groups = await Promise.all(
    [...byOrderKey].map(async ([orderKey, unsorted]) => {
      const group = [...unsorted].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
      const seqs = new Set(group.map((m) => m.seq));
      for (const [index, message] of group.entries()) {
        const seq = message.seq ?? 1;
        if (seq <= 1 || seqs.has(seq - 1)) continue;
        const now = deps.clock();
        const found = await guarded(report, () =>
          deps.store.findInSequence({ orderKey, fromSeq: seq - 1, toSeq: seq - 1 }),
        );
        // The predecessor could not be read: the claim lapses and the message is looked at again.
        if (found === undefined) return group.slice(0, index);
        const hold = predecessorHold(found[0], { now, gapTimeoutMs: gapTimeoutMs(deps, message.topic) });
        if (hold === undefined) continue;
        await holdFrom({ waiting: group.slice(index), hold }, deps, report);
        return group.slice(0, index);
      }
      return group;
    }),
  );
  return [...ready, ...groups.flat()];
}

/** Gives back the claims of messages that wait for a predecessor, due again at `hold.until`. */
async function holdFrom(
  { waiting, hold }: { readonly waiting: readonly OutboxItem[]; readonly hold: Hold },
  deps: SweeperDeps,
  report: SweepReport,
): Promise<void> {
  await Promise.all(
    waiting.map(async (message) => {
      const released = await guarded(report, () =>
        deps.store.release({
          messageId: message.messageId,
          owner: deps.owner,
          now: deps.clock(),
          nextAttemptAt: hold.until,
        }),
      );
      if (released !== true) return;
      report.held += 1;
      if (hold.problem === undefined) return;
      report.problems.push({
        messageId: message.messageId,
        topic: message.topic,
        ...(message.subscriber === undefined ? {} : { subscriber: message.subscriber }),
        aggregateId: message.aggregateId,
        ...(message.orderKey === undefined ? {} : { orderKey: message.orderKey }),
        ...(message.seq === undefined ? {} : { seq: message.seq }),
        outcome: 'HELD',
        error: hold.problem,
      });
    }),
  );
}

/** A message this run moved to FAILED itself (not through a send). */
function countFailed(
  report: SweepReport,
  message: {
    readonly messageId: string;
    readonly topic: string;
    readonly subscriber?: string;
    readonly aggregateId?: string;
  },
  error: string,
): void {
  report.failed += 1;
  countSend(report.topics, message, 'failed');
  const { messageId, topic, subscriber, aggregateId } = message;
  report.problems.push({
    messageId,
    topic,
    ...(subscriber === undefined ? {} : { subscriber }),
    ...(aggregateId === undefined ? {} : { aggregateId }),
    outcome: 'FAILED',
    error,
  });
}
