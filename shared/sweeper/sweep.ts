import { MessageStatus } from '../message/message-status.ts';
import { UNKNOWN_TOPIC } from '../observability/metric-names.ts';
import { DEFAULT_DUE_SHARDS, dueShardKeys, type OutboxItem } from '../outbox/outbox-item.ts';
import type { DueEntry, DueMessage, SweepStore } from '../outbox/outbox-store.ts';
import { type RelayDeps, relayMessages } from '../relay/relay-messages.ts';
import {
  addSendCounts,
  type SendCountsByTopic,
  type SendProblem,
  topicCounts,
} from '../relay/send-counts.ts';
import { hasAttemptsLeft } from '../retry/retry-policy.ts';

/** Asks a topic's downstream whether it applied a message (reconciliation). */
export type DeliveryCheck = (message: OutboxItem) => Promise<DeliveryVerdict>;

/** What the downstream says of a message: applied (with the outcome it recorded, when it keeps one), or not. */
export type DeliveryVerdict =
  | { readonly verdict: 'DELIVERED'; readonly outcome?: string }
  | { readonly verdict: 'MISSING' }
  /**
   * Ordered topics: the consumer holds the message until its predecessor arrives (`lastSeq` is the last seq it
   * applied for the message's order key; `parkedAt` when it began to wait).
   */
  | { readonly verdict: 'PARKED'; readonly parkedAt: string; readonly lastSeq: number };

/** How a sweeper run paces itself. */
export interface SweeperSettings {
  /** Partitions of the due index (must match the writer's). */
  readonly dueShards: number;
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
  unrecorded: number;
  /** Store or downstream calls that failed; their messages fall due again when the lease ends. */
  errors: number;
  /** Sends and FAILED transitions per topic, which the sweeper function publishes as metrics. */
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

/** Milliseconds the run may still spend before it must stop starting rounds. */
function available(deps: SweeperDeps): number {
  return Math.max(0, deps.remainingMs() - deps.settings.stopBeforeMs);
}

/** Whether any shard holds a message that falls due before the run has to stop (one entry read per shard). */
async function fallsDueSoon(deps: SweeperDeps, report: SweepReport): Promise<boolean> {
  const horizon = new Date(deps.clock().getTime() + available(deps));
  const shards = dueShardKeys(deps.settings.dueShards);
  const peeks = await Promise.all(
    shards.map((shard) => guarded(report, () => deps.store.findDue(shard, horizon, 1))),
  );
  // A shard that could not be read may hold work: keep going rather than leave it for the next run.
  return peeks.some((page) => page === undefined || page.length > 0);
}

async function findDue(deps: SweeperDeps, report: SweepReport, now: Date): Promise<DueEntry[]> {
  const shards = dueShardKeys(deps.settings.dueShards);
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
      .map((message) => guarded(report, () => reconcile(message, deps, report))),
  );
  const toSend = [
    ...mine.filter((m) => m.status === MessageStatus.PENDING),
    ...reconciled.filter((message): message is OutboxItem => message !== undefined),
  ];
  await send(toSend, deps, report);
}

/** Settles a SENT message past its deadline; returns it (now PENDING) when it must be resent. */
async function reconcile(
  message: OutboxItem,
  deps: SweeperDeps,
  report: SweepReport,
): Promise<OutboxItem | undefined> {
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
    return undefined;
  }
  const check = deps.deliveryCheckFor(message.topic);
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
    return undefined;
  }
  if (answer.verdict === 'DELIVERED') {
    const outcome = await deps.store.confirm(message.messageId, deps.clock(), answer.outcome);
    if (outcome === 'CONFIRMED') report.reconciledConfirmed += 1;
    return undefined;
  }
  const resends = message.resends ?? 0;
  if (!(await deps.store.requeue(message.messageId, deps.owner, deps.clock()))) return undefined;
  report.requeued += 1;
  if (resends >= deps.retryPolicyFor(message.topic).maxAttempts) {
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

async function send(messages: readonly OutboxItem[], deps: SweeperDeps, report: SweepReport): Promise<void> {
  const exhausted = messages.filter((m) => !hasAttemptsLeft(deps.retryPolicyFor(m.topic), m.attempts));
  const sendable = messages.filter((m) => hasAttemptsLeft(deps.retryPolicyFor(m.topic), m.attempts));
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
  if (sendable.length === 0) return;
  const relayed = await relayMessages(
    sendable.map((message) => ({ recordId: message.messageId, message })),
    { ...deps, store: deps.store },
  );
  report.sent += relayed.sent;
  report.retryScheduled += relayed.retryScheduled;
  report.failed += relayed.failed;
  // Outcomes that could not be written are left to the lease: the message falls due again.
  report.unrecorded += relayed.unrecorded.length;
  addSendCounts(report.topics, relayed.topics);
  report.problems.push(...relayed.problems);
}

/** A message this run moved to FAILED itself (not through a send). */
function countFailed(
  report: SweepReport,
  message: { readonly messageId: string; readonly topic: string; readonly aggregateId?: string },
  error: string,
): void {
  report.failed += 1;
  topicCounts(report.topics, message.topic).failed += 1;
  const { messageId, topic, aggregateId } = message;
  report.problems.push({
    messageId,
    topic,
    ...(aggregateId === undefined ? {} : { aggregateId }),
    outcome: 'FAILED',
    error,
  });
}
