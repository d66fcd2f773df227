import { MessageStatus } from '../message/message-status.ts';

/**
 * Every allowed status change, as data. Each transition is carried out as a conditional
 * update on `from`, so a writer that lost a race gets a condition failure, never a wrong state.
 */
export const TRANSITIONS = {
  /** The relay or sweeper handed the message to SQS. */
  markSent: { from: [MessageStatus.PENDING], to: MessageStatus.SENT },
  /**
   * The consumer applied the message, or reconciliation found it downstream. PENDING is allowed because
   * the consumer's confirmation can overtake the relay's mark; FAILED because a delivery from an earlier
   * attempt may land after the retries ran out, and the downstream is the truth.
   */
  confirm: {
    from: [MessageStatus.PENDING, MessageStatus.SENT, MessageStatus.FAILED],
    to: MessageStatus.CONFIRMED,
  },
  /** A send failed and attempts remain: bookkeeping only, the status stays PENDING. */
  recordAttempt: { from: [MessageStatus.PENDING], to: MessageStatus.PENDING },
  /** A send failed and no attempts remain. */
  fail: { from: [MessageStatus.PENDING], to: MessageStatus.FAILED },
  /** The sweeper claimed a message whose stored item cannot be read: no retry can send it. */
  failUnreadable: { from: [MessageStatus.PENDING, MessageStatus.SENT], to: MessageStatus.FAILED },
  /** Reconciliation found the downstream never received a SENT message. */
  requeue: { from: [MessageStatus.SENT], to: MessageStatus.PENDING },
  /** An operator replays a FAILED message after fixing the downstream. */
  replay: { from: [MessageStatus.FAILED], to: MessageStatus.PENDING },
  /** An operator gives up on a message that was never sent. */
  cancel: { from: [MessageStatus.PENDING], to: MessageStatus.CANCELLED },
} as const satisfies Record<string, { from: readonly MessageStatus[]; to: MessageStatus }>;

/** The name of one of the {@link TRANSITIONS}. */
export type TransitionName = keyof typeof TRANSITIONS;

/** Statuses no transition leaves. */
export const TERMINAL_STATUSES: readonly MessageStatus[] = Object.values(MessageStatus).filter(
  (status) => !Object.values(TRANSITIONS).some((t) => (t.from as readonly MessageStatus[]).includes(status)),
);

/** The status a transition leads to from `current`, or `undefined` when the transition is not allowed. */
export function applyTransition(current: MessageStatus, name: TransitionName): MessageStatus | undefined {
  const transition = TRANSITIONS[name];
  return (transition.from as readonly MessageStatus[]).includes(current) ? transition.to : undefined;
}

/** Whether some transition leads from `from` to `to`. */
export function isAllowedChange(from: MessageStatus, to: MessageStatus): boolean {
  return Object.values(TRANSITIONS).some(
    (t) => t.to === to && (t.from as readonly MessageStatus[]).includes(from),
  );
}
