import { NOTHING_TO_RELEASE, RELEASED } from '../../../functions/inventory/apply-order/plan-stock-release.ts';
import { REJECTED_OUT_OF_STOCK } from '../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { ALREADY_AWARDED, AWARDED } from '../../../functions/loyalty/apply-order/plan-award.ts';
import { NOTHING_TO_REVOKE, REVOKED } from '../../../functions/loyalty/apply-order/plan-revocation.ts';
import { APPLIED } from '../../../shared/memory/index.ts';
import type { Subscriber } from './drill-subscribers.ts';

/** The outbox's own topics (its control messages to subscribers), as the library documents them. */
export const CONTROL_TOPICS = { erase: 'outbox.erase', skip: 'outbox.skip' } as const;

/** What a subscriber's consumer records for the operator's control messages it applied. */
export const CONTROL_OUTCOMES = { erased: 'ERASED', skipped: 'SKIPPED' } as const;

/**
 * What each subscriber records in its inbox for the order topics, by what the order's create and cancel did:
 * inventory reserves stock (or rejects the order as out of stock) and releases it; loyalty awards the order's
 * points and revokes them.
 */
export const SUBSCRIBER_OUTCOMES: Readonly<
  Record<
    Subscriber,
    {
      /** The create's effect committed. */
      readonly created: string;
      /** The create was recorded without effect (no stock; an order awarded already). */
      readonly createRejected: string;
      /** The cancel undid the create's effect. */
      readonly cancelled: string;
      /** The cancel found nothing to undo. */
      readonly nothingToCancel: string;
    }
  >
> = {
  inventory: {
    created: APPLIED,
    createRejected: REJECTED_OUT_OF_STOCK,
    cancelled: RELEASED,
    nothingToCancel: NOTHING_TO_RELEASE,
  },
  loyalty: {
    created: AWARDED,
    createRejected: ALREADY_AWARDED,
    cancelled: REVOKED,
    nothingToCancel: NOTHING_TO_REVOKE,
  },
};

/**
 * The inbox outcomes that say a message's effect committed (the consumer counts it in MessagesApplied): a create or
 * cancel that moved stock or points, and an operator's erase or skip applied; every other outcome records a
 * business rejection.
 */
const APPLIED_OUTCOMES: ReadonlySet<unknown> = new Set([
  ...Object.values(SUBSCRIBER_OUTCOMES).flatMap(({ created, cancelled }) => [created, cancelled]),
  CONTROL_OUTCOMES.erased,
  CONTROL_OUTCOMES.skipped,
]);

/** Whether an inbox row's outcome says its message's effect committed (MessagesApplied counts it). */
export function isAppliedOutcome(outcome: unknown): boolean {
  return APPLIED_OUTCOMES.has(outcome);
}
