import { MessageStatus } from '../../../shared/index.ts';
import type { Subscriber } from './drill-subscribers.ts';

/**
 * The stretch of the write phase the stopped subscriber's consumer is not polled for: from when this share of the
 * orders has been acknowledged to when that share has — and then until the running subscriber has done all it can
 * with the regular orders' deliveries written meanwhile (see {@link STOP_BOUND_DEADLINES}; the hot SKU's burst is
 * apart: its delay is the contention on one item).
 */
export const STOP_WINDOW = { from: 0.2, to: 0.5 } as const;

/**
 * How long after the planned restart the stopped subscriber is kept stopped at most, in confirmation deadlines, while
 * the running subscriber settles the deliveries written during the planned stop: it is started again as soon as each
 * of them is settled or held by a delay of its own. Past a deadline, a delivery whose copy or receipt was lost has
 * been resent (its row says so), so one still open at the bound without a delay of its own waited for the stopped
 * subscriber.
 */
export const STOP_BOUND_DEADLINES = 3;

/** A delivery of the running subscriber still open when the stopped one was started again, and why. */
export interface OpenDelivery {
  /** `<messageId>#<subscriber>`. */
  readonly key: string;
  readonly status: string;
  /** What held it that is its own (a resend, a retried send, its predecessor, a fault at its consumer); none: a wait. */
  readonly ownDelay?: string;
}

/** When the drill stopped one subscriber and started it again, and what the other had left open then. */
export interface StopFacts {
  /** The subscriber whose consumer was stopped. */
  readonly subscriber: Subscriber;
  /** The subscriber that kept running. */
  readonly running: Subscriber;
  /** When it was stopped, planned to be started again, and started again: milliseconds on the tables' clock. */
  readonly stoppedAt: number;
  readonly plannedRestartAt: number;
  readonly restartedAt: number;
  /** The running subscriber's deliveries of the regular orders' messages written from `stoppedAt` to `plannedRestartAt`. */
  readonly awaited: number;
  /** Of those, the ones still open (neither settled nor stalled as designed) at the restart. */
  readonly openAtRestart: readonly OpenDelivery[];
}

/** What {@link ownDelayOf} looks at besides the delivery's row. */
export interface DelayContext {
  /** The same subscriber's delivery of the message before it in the order's sequence, if any. */
  readonly predecessor?: Readonly<Record<string, unknown>>;
  /** What went wrong for it on its way (its stream record, its send, at its consumer, its receipt), as the drill saw it. */
  readonly trouble?: string;
  /** Now, on the tables' clock. */
  readonly now: number;
}

/**
 * Why an open delivery has not settled yet, when the reason is its own: a resend or a retried send, its predecessor
 * in its own sequence not confirmed, a fault on its way (its stream record, its send, at its consumer, on its
 * receipt), or a sweeper's claim on it.
 * Undefined when its row and the drill show none of these: it went out once and is simply not finished (not applied
 * yet, or applied with its receipt on its way) — what the pipeline does in seconds, and what, past the stop's bound,
 * means it waited on the stopped subscriber.
 */
export function ownDelayOf(
  row: Readonly<Record<string, unknown>>,
  context: DelayContext,
): string | undefined {
  const resends = Number(row.resends ?? 0);
  if (resends > 0) return `resent ${resends} time(s) past its confirmation deadline`;
  if (Number(row.attempts ?? 0) > 1 || Number(row.refusals ?? 0) > 0 || typeof row.lastError === 'string')
    return `its send retried (${String(row.lastError ?? `${String(row.attempts)} attempts`)})`;
  const predecessor = context.predecessor;
  if (predecessor !== undefined && predecessor.status !== MessageStatus.CONFIRMED)
    return `behind its own seq ${Number(row.seq) - 1} (${String(predecessor.status)})`;
  if (context.trouble !== undefined) return context.trouble;
  if (typeof row.leaseUntil === 'string' && Date.parse(row.leaseUntil) > context.now)
    return 'claimed by a sweeper reconciling it';
  return undefined;
}
