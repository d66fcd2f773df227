/**
 * A dead-letter queue's redrive from the console: the admin core's journalled redrive (the producer's, or a
 * subscriber's own on its stack), with progress for the page and a cancel that stops it cleanly: the messages it
 * has received (at most ten, one SQS receive) are moved at the same pace and journalled, nothing more is received,
 * the messages it held are released, and the REDRIVE audit row says what moved.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import type { AdminQueues } from '../../admin/admin-queues.ts';
import {
  type RedriveInput,
  type RedriveReport,
  redriveDeadLetters,
} from '../../admin/redrive-dead-letters.ts';
import { SubscriberAdmin, type SubscriberAdminDeps } from '../../admin/subscriber-admin.ts';
import type { JobControl } from './bulk-jobs.ts';

/** Whose dead letters: the producer's (its outbox's own queues) or a subscriber's, in its own stack. */
export type DeadLetterPlace =
  | { readonly kind: 'producer'; readonly deps: AdminDeps }
  | { readonly kind: 'subscriber'; readonly deps: SubscriberAdminDeps };

/** What to move back. */
export interface DeadLetterRedriveInput {
  readonly deadLetterQueueUrl: string;
  /** Only this topic's messages. */
  readonly topic?: string;
  readonly reason: string;
  readonly actor: string;
  readonly ratePerSecond: number;
  /** The queue's depth when the redrive started: the progress bar's total (an estimate). */
  readonly expected: number;
}

/** What the redrive did, and whether a cancel cut it short. */
export type DeadLetterRedriveReport = RedriveReport & { readonly cancelled: boolean };

/**
 * Redrives one dead-letter queue of `place` by the core's receive / journal / send / delete (never a move task:
 * its progress could not be shown, nor could it be filtered or stopped), paced; after a cancel the core receives
 * nothing more, finishes the batch in hand and ends its pass as usual.
 * @example
 * await redriveDeadLetterQueue({ kind: 'subscriber', deps }, { deadLetterQueueUrl, reason, actor, ratePerSecond: 10, expected: 12 }, control);
 */
export async function redriveDeadLetterQueue(
  place: DeadLetterPlace,
  input: DeadLetterRedriveInput,
  control: JobControl,
): Promise<DeadLetterRedriveReport> {
  const queues = stoppableQueues(place.deps.queues, control);
  const redrive: RedriveInput = {
    queue: input.deadLetterQueueUrl,
    ...(input.topic === undefined ? {} : { topic: input.topic }),
    reason: input.reason,
    actor: input.actor,
    ratePerSecond: input.ratePerSecond,
    dryRun: false,
    onProgress: (progress) =>
      control.progress({
        total: Math.max(input.expected, progress.examined),
        done: progress.examined,
        counts: {
          moved: progress.moved + progress.resumed,
          left: progress.left,
          examined: progress.examined,
        },
      }),
  };
  control.progress({ total: input.expected, done: 0, counts: { moved: 0, left: 0, examined: 0 } });
  const report =
    place.kind === 'producer'
      ? await redriveDeadLetters({ ...place.deps, queues }, redrive)
      : await new SubscriberAdmin({ ...place.deps, queues }).redriveDeadLetters(redrive);
  return { ...report, cancelled: control.signal.aborted };
}

/**
 * `queues` that find nothing more to receive once the job is cancelled (so the core's pass ends as at the end of
 * the queue), and that give the event loop its turn after each send.
 */
export function stoppableQueues(
  queues: AdminQueues,
  control: Pick<JobControl, 'signal' | 'yieldTurn'>,
): AdminQueues {
  return {
    receive: async (queueUrl, options) => (control.signal.aborted ? [] : queues.receive(queueUrl, options)),
    send: async (queueUrl, message) => {
      await queues.send(queueUrl, message);
      await control.yieldTurn();
    },
    delete: (queueUrl, receiptHandle) => queues.delete(queueUrl, receiptHandle),
    changeVisibility: (queueUrl, receiptHandle, seconds) =>
      queues.changeVisibility(queueUrl, receiptHandle, seconds),
    depth: (queueUrl) => queues.depth(queueUrl),
  };
}
