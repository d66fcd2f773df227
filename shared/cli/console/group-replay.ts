/**
 * A failure group's replay: each FAILED delivery of one cause replayed by the admin core's own single replay
 * (audited as BULK_REPLAY with the run's id, as `outbox replay --topic` files each of its replays), paced, and
 * stopped cleanly between two replays when cancelled.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import { AdminError } from '../../admin/admin-errors.ts';
import { rateOf, requireActor, requireReason } from '../../admin/admin-input.ts';
import { AuditAction } from '../../admin/audit-trail.ts';
import { replayMessage } from '../../admin/message-actions.ts';
import { pacer } from '../../admin/pacer.ts';
import { describeError } from '../../errors.ts';
import { abortableSleep, type JobControl } from './bulk-jobs.ts';
import { causeOf } from './cause-groups.ts';

/** One delivery to replay: a message, and the subscriber whose delivery it is (absent for one queue). */
export interface ReplayTarget {
  readonly messageId: string;
  readonly subscriber?: string;
}

/** What to replay and how. */
export interface GroupReplayInput {
  readonly targets: readonly ReplayTarget[];
  /** The cause the targets were grouped under, kept in each audit row's details. */
  readonly cause: string;
  readonly reason: string;
  readonly actor: string;
  readonly ratePerSecond: number;
}

/** Deliveries not replayed for one reason: how many, and a few of them. */
export interface ProblemGroup {
  readonly kind: string;
  readonly message: string;
  /** `skipped`: refused by the core (it moved on since it was read); `failed`: an error. */
  readonly outcome: 'skipped' | 'failed';
  readonly count: number;
  readonly examples: readonly (ReplayTarget & { readonly error: string })[];
}

/** What a group replay did. */
export interface GroupReplayReport {
  /** The run's id, in each BULK_REPLAY audit row. */
  readonly bulkId: string;
  readonly total: number;
  readonly replayed: number;
  /** Refused by the core: confirmed late, replayed by someone else, gone. */
  readonly skipped: number;
  readonly failed: number;
  /** Left as they were because the run was cancelled first. */
  readonly notStarted: number;
  readonly cancelled: boolean;
  /** Why the others were not replayed, grouped by cause as the failures are. */
  readonly problems: readonly ProblemGroup[];
  /** The first deliveries replayed, to look at (their pages show them being sent again). */
  readonly replayedExamples: readonly ReplayTarget[];
}

/** Examples kept per problem group, and of the deliveries replayed. */
const EXAMPLES_PER_PROBLEM = 5;

type Deps = Pick<
  AdminDeps,
  | 'outbox'
  | 'audit'
  | 'transactions'
  | 'dueShards'
  | 'retentionDays'
  | 'clock'
  | 'newId'
  | 'sleep'
  | 'subscriptions'
>;

/**
 * Replays `targets` in order at most `ratePerSecond` a second, each with the core's audited single replay; stops
 * before the next one once `control.signal` aborts. A refusal (the delivery moved on) is counted as skipped and an
 * error as failed; neither stops the others.
 * @example
 * const report = await replayGroup(deps, { targets, cause: group.id, reason: 'INC-42 fixed', actor, ratePerSecond: 10 }, control);
 */
export async function replayGroup(
  deps: Deps,
  input: GroupReplayInput,
  control: JobControl,
): Promise<GroupReplayReport> {
  const reason = requireReason('replay', input.reason);
  const actor = requireActor(input.actor);
  const ratePerSecond = rateOf(input.ratePerSecond);
  const bulkId = deps.newId();
  const nextSlot = pacer(ratePerSecond, {
    clock: deps.clock,
    sleep: abortableSleep(deps.sleep, control.signal),
  });
  const counts = { replayed: 0, skipped: 0, failed: 0 };
  const problems = new Map<
    string,
    {
      group: Omit<ProblemGroup, 'count' | 'examples'>;
      count: number;
      examples: (ReplayTarget & { error: string })[];
    }
  >();
  const replayedExamples: ReplayTarget[] = [];
  const total = input.targets.length;
  let done = 0;
  const report = () => control.progress({ total, done, counts: { ...counts } });
  report();
  for (const target of input.targets) {
    await nextSlot();
    if (control.signal.aborted) break;
    try {
      await replayMessage(
        deps,
        {
          messageId: target.messageId,
          ...(target.subscriber === undefined ? {} : { subscriber: target.subscriber }),
          reason,
          actor,
        },
        { auditAction: AuditAction.BULK_REPLAY, details: { bulkId, cause: input.cause } },
      );
      counts.replayed += 1;
      if (replayedExamples.length < EXAMPLES_PER_PROBLEM) replayedExamples.push(target);
    } catch (error) {
      const outcome = error instanceof AdminError ? 'skipped' : 'failed';
      counts[outcome] += 1;
      const text = describeError(error);
      const cause = causeOf(text);
      const key = `${outcome}:${cause.id}`;
      const problem = problems.get(key) ?? {
        group: { kind: cause.kind, message: cause.message, outcome },
        count: 0,
        examples: [],
      };
      problem.count += 1;
      if (problem.examples.length < EXAMPLES_PER_PROBLEM) problem.examples.push({ ...target, error: text });
      problems.set(key, problem);
    }
    done += 1;
    report();
    // Every replay gives the console's other requests their turn, whatever the backend answers with.
    await control.yieldTurn();
  }
  return {
    bulkId,
    total,
    ...counts,
    notStarted: total - done,
    cancelled: control.signal.aborted,
    replayedExamples,
    problems: [...problems.values()]
      .map(({ group, count, examples }) => ({ ...group, count, examples }))
      .sort((a, b) => b.count - a.count),
  };
}
