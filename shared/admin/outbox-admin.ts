import type { AdminDeps } from './admin-deps.ts';
import { type BulkReplayInput, type BulkReplayReport, bulkReplay } from './bulk-replay.ts';
import { type EraseInput, type EraseResult, eraseAggregate } from './erase-aggregate.ts';
import { type ListMessagesInput, listMessages, type MessagePage } from './list-messages.ts';
import {
  cancelMessage,
  type MessageActionInput,
  type MessageActionResult,
  replayMessage,
} from './message-actions.ts';
import { type MoveTaskInput, type StartedMoveTask, startDeadLetterMoveTasks } from './move-task.ts';
import { type OutboxStats, type OutboxStatsInput, outboxStats } from './outbox-stats.ts';
import {
  canUseMoveTask,
  type RedriveInput,
  type RedriveReport,
  redriveDeadLetters,
} from './redrive-dead-letters.ts';
import { type MessageDetails, showMessage } from './show-message.ts';
import { type SkipOrderGapInput, type SkipOrderGapResult, skipOrderGap } from './skip-order-gap.ts';

/**
 * The operations core of the outbox, for any front end (the admin API, the `outbox` CLI): inspect, replay,
 * cancel, redrive, count, erase and skip a gap of an ordered sequence. Reads go through the indexes only, every change is audited, and refusals are
 * `AdminError`s that carry the HTTP status to answer with.
 * @example
 * const admin = new OutboxAdmin(adminDeps(process.env));
 * const failed = await admin.listMessages({ status: 'FAILED', topic: 'order.created', subscriber: 'loyalty' });
 * await admin.replay({ messageId: failed.items[0].messageId, subscriber: 'loyalty', reason: 'loyalty fixed', actor });
 */
export class OutboxAdmin {
  readonly #deps: AdminDeps;

  constructor(deps: AdminDeps) {
    this.#deps = deps;
  }

  /** A page of message summaries through the indexes (see `listMessages`). */
  listMessages(input: ListMessagesInput): Promise<MessagePage> {
    return listMessages(this.#deps, input);
  }

  /** The full record of a message, each subscriber's delivery of it, their history and its audit rows (see `showMessage`). */
  showMessage(messageId: string): Promise<MessageDetails> {
    return showMessage(this.#deps, messageId);
  }

  /** FAILED or CANCELLED → PENDING, one subscriber's delivery or every one that failed, audited (see `replayMessage`). */
  replay(input: MessageActionInput): Promise<MessageActionResult> {
    return replayMessage(this.#deps, input);
  }

  /** PENDING or FAILED → CANCELLED, one subscriber's delivery or every one, audited (see `cancelMessage`). */
  cancel(input: MessageActionInput): Promise<MessageActionResult> {
    return cancelMessage(this.#deps, input);
  }

  /** Replays a topic's FAILED messages of a time range, paced (see `bulkReplay`). */
  bulkReplay(input: BulkReplayInput): Promise<BulkReplayReport> {
    return bulkReplay(this.#deps, input);
  }

  /** Moves dead letters back to their source queue, filtered and journalled (see `redriveDeadLetters`). */
  redriveDeadLetters(input: RedriveInput): Promise<RedriveReport> {
    return redriveDeadLetters(this.#deps, input);
  }

  /** Whether SQS's message move task can do this redrive instead (no filter, no limit, no dry run). */
  canUseMoveTask(input: RedriveInput): boolean {
    return canUseMoveTask(input);
  }

  /** Starts SQS message move tasks from the DLQs (AWS only; see `startDeadLetterMoveTasks`). */
  startMoveTasks(input: MoveTaskInput): Promise<StartedMoveTask[]> {
    return startDeadLetterMoveTasks(this.#deps, input);
  }

  /** Counts per status, topic and subscriber, oldest ages and DLQ depths (see `outboxStats`). */
  stats(input: OutboxStatsInput = {}): Promise<OutboxStats> {
    return outboxStats(this.#deps, input);
  }

  /**
   * Skips a message of an ordered sequence that will never be applied: cancels it, moves the consumers' cursors
   * past it and resends the successor they hold parked, audited (see `skipOrderGap`).
   */
  skipOrderGap(input: SkipOrderGapInput): Promise<SkipOrderGapResult> {
    return skipOrderGap(this.#deps, input);
  }

  /** Erases an aggregate's messages and inbox rows, refused while one is in flight (see `eraseAggregate`). */
  erase(input: EraseInput): Promise<EraseResult> {
    return eraseAggregate(this.#deps, input);
  }
}
