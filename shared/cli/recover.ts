import { InvalidAdminRequestError, MessageNotFoundError } from '../admin/admin-errors.ts';
import type { BulkReplayProgress, BulkReplayReport } from '../admin/bulk-replay.ts';
import type { OutboxAdmin } from '../admin/outbox-admin.ts';
import type { DeadLetterDepth } from '../admin/outbox-stats.ts';
import type { RedriveProgress, RedriveReport } from '../admin/redrive-dead-letters.ts';
import { describeError } from '../errors.ts';
import { MessageStatus } from '../message/message-status.ts';
import type { HealthCheck, HealthCheckContext } from './health-check.ts';

/** What `recover` works on and how. */
export interface RecoverInput {
  readonly topic: string;
  /**
   * One subscriber of the topic: only its FAILED deliveries are replayed and waited for, and no dead letter here is
   * moved (the topic's own queue is not the subscriber's). Its dead letters are in its own stack
   * (`outbox redrive --stack <its stack>`), which the report names.
   * @default - every subscriber, and the topic's own queue
   */
  readonly subscriber?: string;
  readonly reason: string;
  readonly actor: string;
  /** Replays and dead-letter moves per second at most. */
  readonly ratePerSecond: number;
  /** How long to wait for the replayed and redriven messages to be CONFIRMED. */
  readonly waitSeconds: number;
  /** Pause between two looks at the messages waited for. @default 2000 */
  readonly pollIntervalMs?: number;
}

/** What `recover` needs: the operations core, the topic's health hook (if any), and time. */
export interface RecoverDeps {
  readonly admin: Pick<OutboxAdmin, 'bulkReplay' | 'redriveDeadLetters' | 'showMessage' | 'stats'>;
  readonly health?: { readonly check: HealthCheck; readonly context: HealthCheckContext };
  readonly clock: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  readonly onReplayProgress?: (progress: BulkReplayProgress) => void;
  readonly onRedriveProgress?: (progress: RedriveProgress) => void;
  /** Told of each step as it starts (a line on stderr). */
  readonly onStep?: (line: string) => void;
}

/** How a recovery ended. */
export const RecoverOutcome = {
  /** Nothing remains: every replayed and redriven message CONFIRMED, no FAILED message, empty DLQs. */
  RESOLVED: 'RESOLVED',
  /** Something remains; the report lists it. */
  UNRESOLVED: 'UNRESOLVED',
  /** The downstream is not healthy: nothing was replayed or moved. */
  UNHEALTHY: 'UNHEALTHY',
} as const;

/** One of the {@link RecoverOutcome} values. */
export type RecoverOutcome = (typeof RecoverOutcome)[keyof typeof RecoverOutcome];

/** A message that recover put back on its way and that is not CONFIRMED. */
export interface UnresolvedMessage {
  readonly messageId: string;
  readonly status: string;
  /** Which step put it back: the replay, or the dead-letter redrive. */
  readonly step: 'replay' | 'redrive';
}

/** What `recover` did and what remains. */
export interface RecoverReport {
  readonly topic: string;
  /** The subscriber recovered, when one was named. */
  readonly subscriber?: string;
  /**
   * The topic's subscribers, whose dead letters are in their own stacks (the producer's redrive cannot reach them):
   * what an operator redrives there.
   */
  readonly subscribersElsewhere?: readonly string[];
  readonly outcome: RecoverOutcome;
  readonly health: { readonly checked: boolean; readonly healthy: boolean; readonly detail: string };
  /** Absent when there was nothing FAILED to replay (or the downstream was unhealthy). */
  readonly replay?: BulkReplayReport;
  /** Absent when the topic's DLQ held nothing to move (or the downstream was unhealthy). */
  readonly redrive?: RedriveReport;
  readonly wait: {
    readonly tracked: number;
    readonly confirmed: number;
    readonly waitedSeconds: number;
    readonly timedOut: boolean;
  };
  readonly unresolved: {
    readonly messages: readonly UnresolvedMessage[];
    /** FAILED messages of the topic at the end (replayed ones that failed again, or new ones). */
    readonly failed: number;
    /** The topic's dead-letter queues at the end. */
    readonly deadLetterQueues: readonly DeadLetterDepth[];
  };
}

const DEFAULT_POLL_INTERVAL_MS = 2_000;

/** Messages looked up at once while waiting. */
const LOOKUP_CONCURRENCY = 10;

/**
 * The recovery runbook for one topic, in order: (1) ask the topic's health hook whether the downstream is
 * healthy, and stop when it is not; (2) replay the topic's FAILED messages, paced; (3) move the topic's dead
 * letters back to its queue, paced; (4) wait until the messages of steps 2 and 3 are CONFIRMED (the sweeper
 * sends the replayed ones on its next run) or the wait ends; (5) report what remains: messages not CONFIRMED,
 * FAILED messages of the topic, dead letters. Steps 2 and 3 first list what they will act on (a dry run), so
 * that step 4 knows which messages to wait for; a message that fails between the listing and the action is
 * left for the next run, and step 5 counts it.
 * @example
 * const report = await recoverTopic(deps, { topic: 'order.created', reason, actor, ratePerSecond: 10, waitSeconds: 300 });
 */
export async function recoverTopic(deps: RecoverDeps, input: RecoverInput): Promise<RecoverReport> {
  const { admin } = deps;
  const { topic } = input;
  const step = deps.onStep ?? (() => {});
  const noWait = { tracked: 0, confirmed: 0, waitedSeconds: 0, timedOut: false };

  step(`checking the downstream of ${topic}`);
  const health = await checkHealth(deps, topic);
  if (health.checked && !health.healthy) {
    return {
      topic,
      ...(input.subscriber === undefined ? {} : { subscriber: input.subscriber }),
      subscribersElsewhere: [],
      outcome: RecoverOutcome.UNHEALTHY,
      health,
      wait: noWait,
      unresolved: { messages: [], failed: 0, deadLetterQueues: [] },
    };
  }

  const common = {
    reason: input.reason,
    actor: input.actor,
    ratePerSecond: input.ratePerSecond,
    ...(input.subscriber === undefined ? {} : { subscriber: input.subscriber }),
  };
  step(`replaying the FAILED messages of ${topic}`);
  const candidates = await admin.bulkReplay({ topic, ...common, dryRun: true });
  let replay: BulkReplayReport | undefined;
  let replayed: string[] = [];
  if (candidates.total > 0) {
    replay = await admin.bulkReplay({
      topic,
      ...common,
      dryRun: false,
      ...(deps.onReplayProgress === undefined ? {} : { onProgress: deps.onReplayProgress }),
    });
    const notReplayed = new Set(replay.problems.map((problem) => problem.messageId));
    replayed = (candidates.wouldReplay ?? [])
      .map((candidate) => candidate.messageId)
      .filter((messageId) => !notReplayed.has(messageId));
  }

  const redriveCommon = { reason: input.reason, actor: input.actor, ratePerSecond: input.ratePerSecond };
  // A topic delivered only to subscribers has no dead-letter queue here: theirs are in their own stacks. A named
  // subscriber's dead letters are in its stack alone, so the topic's own queue here is left to a recover without one.
  if (input.subscriber === undefined) step(`moving the dead letters of ${topic} back to its queue`);
  const deadLetters =
    input.subscriber !== undefined
      ? { queues: [] }
      : await admin.redriveDeadLetters({ topic, ...redriveCommon, dryRun: true }).catch((error: unknown) => {
          if (error instanceof InvalidAdminRequestError && error.field === 'topic') return { queues: [] };
          throw error;
        });
  const redrivable = [
    ...new Set(
      deadLetters.queues.flatMap((queue) =>
        (queue.wouldMove ?? []).flatMap((info) => (info.messageId === undefined ? [] : [info.messageId])),
      ),
    ),
  ];
  let redrive: RedriveReport | undefined;
  if (redrivable.length > 0) {
    redrive = await admin.redriveDeadLetters({
      topic,
      messageIds: redrivable,
      ...redriveCommon,
      dryRun: false,
      ...(deps.onRedriveProgress === undefined ? {} : { onProgress: deps.onRedriveProgress }),
    });
  }

  const tracked = new Map<string, 'replay' | 'redrive'>([
    ...redrivable.map((messageId) => [messageId, 'redrive'] as const),
    // A message both replayed and redriven is waited for once, as replayed.
    ...replayed.map((messageId) => [messageId, 'replay'] as const),
  ]);
  if (tracked.size > 0)
    step(`waiting up to ${input.waitSeconds}s for ${tracked.size} message(s) to be CONFIRMED`);
  const waited = await waitForConfirmation(deps, { ids: [...tracked.keys()], input });

  const stats = await admin.stats(input.subscriber === undefined ? {} : { subscriber: input.subscriber });
  const messages = [...waited.statuses]
    .filter(([, status]) => status !== MessageStatus.CONFIRMED)
    .map(([messageId, status]) => ({ messageId, status, step: tracked.get(messageId) ?? 'replay' }));
  const failed =
    input.subscriber === undefined
      ? (stats.topics[topic]?.FAILED ?? 0)
      : stats.bySubscriber
          .filter((entry) => entry.topic === topic && entry.subscriber === input.subscriber)
          .reduce((sum, entry) => sum + entry.FAILED, 0);
  const subscribersElsewhere = [
    ...new Set(
      stats.bySubscriber
        .filter((entry) => entry.topic === topic && entry.subscriber !== undefined)
        .map((entry) => String(entry.subscriber)),
    ),
  ].sort();
  const deadLetterQueues =
    input.subscriber === undefined
      ? stats.deadLetterQueues.filter((queue) => queue.topics.includes(topic))
      : [];
  const resolved =
    messages.length === 0 &&
    failed === 0 &&
    deadLetterQueues.every((queue) => queue.messages + queue.inFlight === 0);
  return {
    topic,
    ...(input.subscriber === undefined ? {} : { subscriber: input.subscriber }),
    subscribersElsewhere,
    outcome: resolved ? RecoverOutcome.RESOLVED : RecoverOutcome.UNRESOLVED,
    health,
    ...(replay === undefined ? {} : { replay }),
    ...(redrive === undefined ? {} : { redrive }),
    wait: {
      tracked: tracked.size,
      confirmed: tracked.size - messages.length,
      waitedSeconds: waited.waitedSeconds,
      timedOut: waited.timedOut,
    },
    unresolved: { messages, failed, deadLetterQueues },
  };
}

async function checkHealth(
  deps: RecoverDeps,
  topic: string,
): Promise<{ checked: boolean; healthy: boolean; detail: string }> {
  if (deps.health === undefined) {
    return { checked: false, healthy: true, detail: 'no health hook given (--health <module>): skipped' };
  }
  try {
    const result = await deps.health.check(topic, deps.health.context);
    return { checked: true, healthy: result.healthy === true, detail: String(result.detail ?? '') };
  } catch (error) {
    // A hook that cannot tell is not a yes.
    return { checked: true, healthy: false, detail: `the health hook failed: ${describeError(error)}` };
  }
}

/**
 * Looks at the messages until every one is CONFIRMED or the wait is over; returns the last status seen of each
 * (a message that disappeared — erased, expired — counts as GONE).
 */
async function waitForConfirmation(
  deps: RecoverDeps,
  waiting: { readonly ids: readonly string[]; readonly input: RecoverInput },
): Promise<{ statuses: Map<string, string>; waitedSeconds: number; timedOut: boolean }> {
  const { ids, input } = waiting;
  const statuses = new Map(ids.map((id) => [id, 'UNKNOWN']));
  const started = deps.clock().getTime();
  const deadline = started + input.waitSeconds * 1_000;
  const interval = input.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const open = () =>
    [...statuses].filter(([, status]) => status !== MessageStatus.CONFIRMED).map(([id]) => id);
  let timedOut = false;
  while (open().length > 0) {
    const pending = open();
    for (let start = 0; start < pending.length; start += LOOKUP_CONCURRENCY) {
      await Promise.all(
        pending.slice(start, start + LOOKUP_CONCURRENCY).map(async (messageId) => {
          statuses.set(messageId, await statusOf(deps, { messageId, subscriber: input.subscriber }));
        }),
      );
    }
    if (open().length === 0) break;
    const now = deps.clock().getTime();
    if (now >= deadline) {
      timedOut = true;
      break;
    }
    await deps.sleep(Math.min(interval, deadline - now));
  }
  return { statuses, waitedSeconds: Math.round((deps.clock().getTime() - started) / 1_000), timedOut };
}

/** The message's status, or its delivery's to `subscriber` when one is named. */
async function statusOf(
  deps: RecoverDeps,
  of: { readonly messageId: string; readonly subscriber: string | undefined },
): Promise<string> {
  try {
    const details = await deps.admin.showMessage(of.messageId);
    if (of.subscriber === undefined) return String(details.message.status);
    const delivery = details.deliveries?.find((entry) => entry.subscriber === of.subscriber);
    return delivery === undefined ? 'GONE' : String(delivery.delivery.status);
  } catch (error) {
    if (error instanceof MessageNotFoundError) return 'GONE';
    throw error;
  }
}
