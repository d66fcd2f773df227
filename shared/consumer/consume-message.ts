import { resolveClaimCheck } from '../claim-check/resolve-claim-check.ts';
import { isControlTopic } from '../message/control-topics.ts';
import type { Envelope } from '../message/envelope.ts';
import { DEFAULT_CONFLICT_RETRY, retryConflicts } from '../transaction/retry-conflicts.ts';
import { consumeControl } from './consume-control.ts';
import type { ConsumePorts, ConsumeResult, EffectPlan, PlanEffect } from './consume-types.ts';
import type { InboxRefusal } from './consumer-inbox.ts';
import { APPLIED } from './inbox-record.ts';
import { assertTimeLeft } from './invocation-budget.ts';
import { consumeOrdered } from './ordered-consume.ts';
import { isOrdered } from './ordered-envelope.ts';

export type {
  ConsumePorts,
  ConsumeResult,
  DrainedMessage,
  DrainFailure,
  EffectPlan,
  PlanEffect,
} from './consume-types.ts';

export { APPLIED } from './inbox-record.ts';

/**
 * Applies a message exactly once in effect, through its inbox port: the inbox row and the business actions commit
 * in ONE transaction. A duplicate is refused by the inbox and skipped; a failed business condition becomes a
 * recorded outcome rather than an endless retry; a conflict with a concurrent transaction is retried here with
 * jittered backoff; any other error is thrown so that only this record is retried. Afterwards the producer's
 * message is confirmed, with the outcome. A claim-checked payload is read and verified first; a missing or
 * altered object fails the message, which is never applied without its payload.
 *
 * A message of an ordered topic (it carries `orderKey` and `seq`) is applied only right after its predecessor: its
 * transaction also moves the order key's cursor from `seq - 1` to `seq` (a rejection moves it too). One that
 * arrives early is parked (acknowledged, not confirmed) and applied, then confirmed, once its predecessor has
 * been: each apply drains the parked successors that follow it. A copy of a message at or behind the cursor
 * is a duplicate.
 *
 * A message of the outbox's own (`outbox.erase`, `outbox.skip`: an operator's erase or skip sent to a subscriber)
 * is applied by the consumer itself and never handed to `plan` (see `consumeControl`).
 * @example
 * const result = await consumeMessage(envelope, planStockReservation(inventoryTable), { inbox, clock });
 */
export async function consumeMessage(
  received: Envelope,
  plan: PlanEffect,
  deps: ConsumePorts,
): Promise<ConsumeResult> {
  // The outbox's own messages (an operator's erase or skip) are applied here; the plan never sees one.
  if (isControlTopic(received.topic)) return consumeControl(received, plan, deps);
  if (isOrdered(received)) return consumeOrdered(received, plan, deps);
  assertTimeLeft(deps.remainingMs, `consuming ${received.messageId}`);
  // The plan always sees the payload as it was written, fetched and verified when it was claim-checked.
  const message = await resolveClaimCheck(received, deps.claimCheck);
  const decided = plan(message);
  const recorded = await retryConflicts(
    () =>
      'apply' in decided ? applyOnce(message, decided, deps) : recordOutcome(message, decided.reject, deps),
    deps.conflictRetry ?? DEFAULT_CONFLICT_RETRY,
    {
      sleep: deps.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
      random: deps.random ?? Math.random,
      ...(deps.remainingMs === undefined ? {} : { remainingMs: deps.remainingMs }),
    },
  );
  // Confirm duplicates too: the previous delivery may have crashed between its commit and its confirm.
  assertTimeLeft(deps.remainingMs, `confirming ${message.messageId}`);
  const confirmation = await deps.confirmer?.confirm(message.messageId, deps.clock(), recorded.outcome);
  return { ...recorded, confirmation };
}

async function applyOnce(
  message: Envelope,
  plan: Extract<EffectPlan, { apply: unknown }>,
  deps: ConsumePorts,
): Promise<Omit<ConsumeResult, 'confirmation'>> {
  const outcome = plan.outcome ?? APPLIED;
  const refusal = await deps.inbox.commit({ message, outcome, effect: plan.apply, now: deps.clock() });
  if (refusal === undefined) return { kind: 'APPLIED', outcome };
  if (refusal.refused === 'INBOX') return duplicateOf(refusal);
  // Only a business condition failed: nothing was applied, and the plan's outcome for it is recorded instead.
  return recordOutcome(message, plan.onConditionFailure, deps);
}

async function recordOutcome(
  message: Envelope,
  outcome: string,
  deps: ConsumePorts,
): Promise<Omit<ConsumeResult, 'confirmation'>> {
  const refusal = await deps.inbox.commit({ message, outcome, effect: [], now: deps.clock() });
  // With no effect, the inbox row's condition is the only one that can fail.
  return refusal === undefined ? { kind: 'REJECTED', outcome } : duplicateOf(refusal);
}

/** The earlier outcome, as the inbox's refusal gives it at no extra cost. */
function duplicateOf(refusal: InboxRefusal): Omit<ConsumeResult, 'confirmation'> {
  const earlier = refusal.refused === 'INBOX' ? refusal.outcome : undefined;
  return { kind: 'DUPLICATE', outcome: earlier ?? 'UNKNOWN' };
}
