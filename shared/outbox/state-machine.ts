import { MessageStatus } from '../message/message-status.ts';

/** One allowed status change: the statuses it leaves from, the one it leads to, and whether only an operator makes it. */
export interface Transition {
  readonly from: readonly MessageStatus[];
  readonly to: MessageStatus;
  /** Made only by an operator's audited action, never by the relay, the sweeper or a consumer. */
  readonly byOperator?: true;
}

/**
 * Every allowed status change, as data. Each transition is carried out as a conditional
 * update on `from`, so a writer that lost a race gets a condition failure, never a wrong state.
 */
export const TRANSITIONS = {
  /**
   * The relay or sweeper hands the message to SQS: marked just before the send, so that a cancel either lands
   * first (nothing is sent) or is refused (it is on its way).
   */
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
  /**
   * A copy that was already in flight when an operator cancelled the message was applied: delivery is at least
   * once, so a cancel cannot recall it. The outcome is recorded in the history; the status stays CANCELLED.
   */
  applyAfterCancel: { from: [MessageStatus.CANCELLED], to: MessageStatus.CANCELLED },
  /**
   * A send failed and attempts remain: PENDING again, due at the next attempt. From SENT when SQS refused a message
   * its sender had marked SENT just before the send (only under that sender's own mark); from PENDING when it was
   * never marked (no queue is routed).
   */
  recordAttempt: { from: [MessageStatus.PENDING, MessageStatus.SENT], to: MessageStatus.PENDING },
  /** A send failed and no attempts remain: from the sender's own SENT mark, or from PENDING, as above. */
  fail: { from: [MessageStatus.PENDING, MessageStatus.SENT], to: MessageStatus.FAILED },
  /** The sweeper claimed a message whose stored item cannot be read: no retry can send it. */
  failUnreadable: { from: [MessageStatus.PENDING, MessageStatus.SENT], to: MessageStatus.FAILED },
  /** Reconciliation found the downstream never received a SENT message. */
  requeue: { from: [MessageStatus.SENT], to: MessageStatus.PENDING },
  /**
   * An operator sends a FAILED message again after fixing the downstream, or undoes a cancel: a fresh start,
   * attempts and delivery rounds back to 0.
   */
  replay: {
    from: [MessageStatus.FAILED, MessageStatus.CANCELLED],
    to: MessageStatus.PENDING,
    byOperator: true,
  },
  /** An operator gives up on a message that is waiting to be sent or has failed. */
  cancel: {
    from: [MessageStatus.PENDING, MessageStatus.FAILED],
    to: MessageStatus.CANCELLED,
    byOperator: true,
  },
} as const satisfies Record<string, Transition>;

/** The name of one of the {@link TRANSITIONS}. */
export type TransitionName = keyof typeof TRANSITIONS;

/**
 * Statuses nothing but an operator leaves: the message has no work left and expires by TTL. CANCELLED is one of
 * them although an operator's replay may bring it back, and a late delivery is recorded without leaving it.
 */
export const TERMINAL_STATUSES: readonly MessageStatus[] = /* @__PURE__ */ terminalStatuses();

/**
 * The {@link TERMINAL_STATUSES}, derived from the transitions. A function called as pure, so that a bundle that
 * never reads them (no Lambda does) drops the computation and what it alone keeps.
 */
function terminalStatuses(): MessageStatus[] {
  return Object.values(MessageStatus).filter(
    (status) =>
      !Object.values(TRANSITIONS).some(
        (t: Transition) => t.byOperator !== true && t.to !== status && t.from.includes(status),
      ),
  );
}

/** The status a transition leads to from `current`, or `undefined` when the transition is not allowed. */
export function applyTransition(current: MessageStatus, name: TransitionName): MessageStatus | undefined {
  const transition: Transition = TRANSITIONS[name];
  return transition.from.includes(current) ? transition.to : undefined;
}

/** Whether some transition leads from `from` to `to`. */
export function isAllowedChange(from: MessageStatus, to: MessageStatus): boolean {
  return Object.values(TRANSITIONS).some((t: Transition) => t.to === to && t.from.includes(from));
}
