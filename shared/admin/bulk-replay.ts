import { describeError } from '../errors.ts';
import { MessageStatus } from '../message/message-status.ts';
import { type AttentionStatus, attentionPartitions } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import { AdminError, InvalidAdminRequestError } from './admin-errors.ts';
import { instantOf, rateOf, requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction } from './audit-trail.ts';
import { replayMessage } from './message-actions.ts';
import { messageIdOfRow } from './message-summary.ts';
import { pacer } from './pacer.ts';

/** Which messages to replay, how fast, and whether for real. */
export interface BulkReplayInput {
  readonly topic: string;
  /** Only the deliveries to this subscriber. @default every FAILED row of the topic, each subscriber's delivery */
  readonly subscriber?: string;
  /** Only messages created at or after this instant (ISO-8601). */
  readonly from?: string;
  /** Only messages created at or before this instant (ISO-8601). */
  readonly to?: string;
  /** Replay CANCELLED messages of the range too, not only FAILED ones. @default false */
  readonly includeCancelled?: boolean;
  readonly reason: string;
  readonly actor: string;
  /** Replays per second at most, so the recovering downstream is not flooded. */
  readonly ratePerSecond: number;
  /** List what would be replayed and change nothing. */
  readonly dryRun: boolean;
  /** Called before the first replay and after each one (a progress bar). */
  readonly onProgress?: (progress: BulkReplayProgress) => void;
}

/** How far a bulk replay got. */
export interface BulkReplayProgress {
  readonly total: number;
  readonly done: number;
  readonly replayed: number;
  readonly skipped: number;
  readonly failed: number;
}

/** A message, or one subscriber's delivery of it, a bulk replay selected. */
export interface BulkReplayCandidate {
  /** The message's own id. */
  readonly messageId: string;
  /** The subscriber of the delivery selected; absent for a message delivered to one queue. */
  readonly subscriber?: string;
  readonly status: MessageStatus;
  readonly createdAt: string;
}

/** What a bulk replay did (or, in a dry run, would do). */
export interface BulkReplayReport extends BulkReplayProgress {
  readonly dryRun: boolean;
  /** The run's id, in each message's BULK_REPLAY audit row; absent in a dry run. */
  readonly bulkId?: string;
  /** Dry run: every message that would be replayed, oldest first. */
  readonly wouldReplay?: readonly BulkReplayCandidate[];
  /** Messages not replayed, and why: moved on since they were read (skipped) or an error (failed). */
  readonly problems: readonly {
    readonly messageId: string;
    readonly subscriber?: string;
    readonly error: string;
  }[];
}

type Deps = Pick<
  AdminDeps,
  'outbox' | 'audit' | 'transactions' | 'dueShards' | 'retentionDays' | 'clock' | 'newId' | 'sleep'
>;

/**
 * Replays the FAILED (and optionally CANCELLED) messages of a topic created in a time range, found through the
 * attention index (never a scan), oldest first, at most `ratePerSecond` a second. A message delivered to
 * subscribers is replayed delivery by delivery: each FAILED one (only `subscriber`'s with a subscriber), never
 * a CONFIRMED one. Each replay is the audited single-message replay, filed as BULK_REPLAY with the run's id. A message that moved on since it was read
 * (confirmed late, replayed by someone else) is skipped; an error on one message never stops the others.
 * A dry run reads the same messages and changes nothing.
 * @example
 * await bulkReplay(deps, { topic: 'order.created', reason: 'INC-42 fixed', actor, ratePerSecond: 20, dryRun: true });
 */
export async function bulkReplay(deps: Deps, input: BulkReplayInput): Promise<BulkReplayReport> {
  const topic = requireText('topic', input.topic);
  const subscriber = input.subscriber?.trim() || undefined;
  const reason = requireReason('replay', input.reason);
  const actor = requireActor(input.actor);
  const ratePerSecond = rateOf(input.ratePerSecond);
  const from = input.from === undefined ? undefined : instantOf('from', input.from);
  const to = input.to === undefined ? undefined : instantOf('to', input.to);
  if (from !== undefined && to !== undefined && from > to) {
    throw new InvalidAdminRequestError('from', `must not be after to (${from} > ${to})`);
  }
  const statuses: AttentionStatus[] =
    input.includeCancelled === true
      ? [MessageStatus.FAILED, MessageStatus.CANCELLED]
      : [MessageStatus.FAILED];
  const candidates = await findCandidates(deps, { topic, subscriber, statuses, from, to });

  const progress = { total: candidates.length, done: 0, replayed: 0, skipped: 0, failed: 0 };
  if (input.dryRun) return { dryRun: true, ...progress, wouldReplay: candidates, problems: [] };

  const bulkId = deps.newId();
  const problems: { messageId: string; subscriber?: string; error: string }[] = [];
  const nextSlot = pacer(ratePerSecond, deps);
  input.onProgress?.({ ...progress });
  for (const candidate of candidates) {
    await nextSlot();
    try {
      await replayMessage(
        deps,
        {
          messageId: candidate.messageId,
          ...(candidate.subscriber === undefined ? {} : { subscriber: candidate.subscriber }),
          reason,
          actor,
        },
        { auditAction: AuditAction.BULK_REPLAY, details: { bulkId } },
      );
      progress.replayed += 1;
    } catch (error) {
      // Refusals (confirmed late, already replayed, gone) mean there is nothing left to do for that message.
      if (error instanceof AdminError) progress.skipped += 1;
      else progress.failed += 1;
      problems.push({
        messageId: candidate.messageId,
        ...(candidate.subscriber === undefined ? {} : { subscriber: candidate.subscriber }),
        error: describeError(error),
      });
    }
    progress.done += 1;
    input.onProgress?.({ ...progress });
  }
  return { dryRun: false, bulkId, ...progress, problems };
}

async function findCandidates(
  deps: Pick<AdminDeps, 'outbox' | 'dueShards'>,
  range: {
    readonly topic: string;
    readonly subscriber: string | undefined;
    readonly statuses: readonly AttentionStatus[];
    readonly from: string | undefined;
    readonly to: string | undefined;
  },
): Promise<BulkReplayCandidate[]> {
  const partitions = range.statuses.flatMap((status) => attentionPartitions(status, deps.dueShards));
  const pages = await Promise.all(
    partitions.map(async (partition) => {
      const found = await deps.outbox.readAttentionRange({
        partition,
        topic: range.topic,
        ...(range.subscriber === undefined ? {} : { subscriber: range.subscriber }),
        ...(range.from === undefined ? {} : { from: range.from }),
        ...(range.to === undefined ? {} : { to: range.to }),
      });
      return found.map((item): BulkReplayCandidate => {
        const subscriber = typeof item.subscriber === 'string' ? item.subscriber : undefined;
        return {
          messageId: messageIdOfRow(String(item.messageId), subscriber),
          ...(subscriber === undefined ? {} : { subscriber }),
          status: item.status as MessageStatus,
          createdAt: String(item.createdAt),
        };
      });
    }),
  );
  return pages
    .flat()
    .sort((a, b) =>
      a.createdAt !== b.createdAt
        ? a.createdAt < b.createdAt
          ? -1
          : 1
        : a.messageId !== b.messageId
          ? a.messageId.localeCompare(b.messageId)
          : (a.subscriber ?? '').localeCompare(b.subscriber ?? ''),
    );
}
