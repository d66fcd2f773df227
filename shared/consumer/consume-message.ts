import type { ClaimCheckReading } from '../claim-check/claim-check-store.ts';
import { resolveClaimCheck } from '../claim-check/resolve-claim-check.ts';
import type { Envelope } from '../message/envelope.ts';
import type { ConfirmOutcome, OutboxStore } from '../outbox/outbox-store.ts';
import {
  type ConflictRetry,
  DEFAULT_CONFLICT_RETRY,
  retryConflicts,
} from '../transaction/retry-conflicts.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type { ConsumerInbox, InboxRefusal } from './consumer-inbox.ts';
import { APPLIED } from './inbox-record.ts';
import { assertTimeLeft } from './invocation-budget.ts';
import { consumeOrdered } from './ordered-consume.ts';
import { isOrdered } from './ordered-envelope.ts';

export { APPLIED } from './inbox-record.ts';

/** What a topic's consumer wants done for a message. */
export type EffectPlan =
  /**
   * Apply `actions` (committed with the inbox row). If one of their conditions fails (e.g. not enough
   * stock), nothing is applied and `onConditionFailure` is recorded as the business outcome instead.
   */
  | {
      readonly apply: readonly TransactWriteAction[];
      readonly onConditionFailure: string;
      /** The business outcome recorded when the actions commit (e.g. `RELEASED`). @default 'APPLIED' */
      readonly outcome?: string;
    }
  /** Apply nothing and record this business outcome (e.g. an order this service declines). */
  | { readonly reject: string };

/**
 * The business side of a consumer: turns a message into an effect plan. Pure; no I/O. Read the payload
 * tolerantly (ignore fields you do not know: a newer producer may add some). For a message you genuinely cannot
 * read, throw a `PoisonMessageError` saying why: it is dead-lettered with that reason and never recorded in the
 * inbox, so it can be replayed once the consumer is fixed.
 */
export type PlanEffect = (message: Envelope) => EffectPlan;

/** What the consumer needs: its inbox, and the ports and settings of everything around it. */
export interface ConsumePorts {
  /** Where each message is recorded with its effect, in one transaction (the consumer's inbox table). */
  readonly inbox: ConsumerInbox;
  /** Tells the producer's outbox that the message was applied, and its outcome; omit when the producer is elsewhere. */
  readonly confirmer?: Pick<OutboxStore, 'confirm'>;
  /**
   * Where payloads too large for the queue are read from (the producer's claim check).
   * @default - none: a message that carries a reference fails with a ConfigError naming CLAIM_CHECK_BUCKET
   */
  readonly claimCheck?: ClaimCheckReading;
  readonly clock: () => Date;
  /**
   * How a transaction that conflicts with a concurrent one (a hot item, e.g. one SKU in many orders) is retried
   * within the invocation.
   * @default DEFAULT_CONFLICT_RETRY: 8 tries, 20 ms doubling to 500 ms, full jitter
   */
  readonly conflictRetry?: ConflictRetry;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default Math.random */
  readonly random?: () => number;
  /**
   * Milliseconds the invocation may still start work in (until its wrap-up point, before the function's timeout):
   * conflict retries stop before it, and no step starts after it (an {@link OutOfTimeError} instead). The SQS
   * consumer sets it per invocation from the Lambda context.
   * @default no bound
   */
  readonly remainingMs?: () => number;
}

/** What consuming one message did. */
export interface ConsumeResult {
  /**
   * APPLIED: the effect committed now. REJECTED: a business outcome was recorded. DUPLICATE: seen before.
   * PARKED (ordered topics): held until its predecessor is applied; acknowledged, not confirmed.
   */
  readonly kind: 'APPLIED' | 'REJECTED' | 'DUPLICATE' | 'PARKED';
  /**
   * The outcome stored in the inbox (for a duplicate, the earlier one when DynamoDB returned it, else `UNKNOWN`);
   * `PARKED` for a parked message.
   */
  readonly outcome: string;
  readonly confirmation: ConfirmOutcome | undefined;
  /**
   * Ordered topics only: the parked successors applied right after this message, in seq order, each confirmed
   * in the producer's outbox with its outcome.
   */
  readonly drained?: readonly DrainedMessage[];
  /**
   * Ordered topics only: the parked successor whose apply failed; it stays parked, and its error is here for the
   * caller to retry it as a message of its own.
   */
  readonly drainFailure?: DrainFailure;
}

/** A parked message applied after its predecessor. */
export interface DrainedMessage {
  /** The message as it was received and parked (a claim-checked payload is its reference). */
  readonly message: Envelope;
  readonly kind: 'APPLIED' | 'REJECTED' | 'DUPLICATE';
  readonly outcome: string;
  readonly confirmation: ConfirmOutcome | undefined;
}

/** A parked message that could not be applied after its predecessor, and why. */
export interface DrainFailure {
  /** The message as it was received and parked. */
  readonly message: Envelope;
  readonly error: unknown;
}

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
 * @example
 * const result = await consumeMessage(envelope, planStockReservation(inventoryTable), { inbox, clock });
 */
export async function consumeMessage(
  received: Envelope,
  plan: PlanEffect,
  deps: ConsumePorts,
): Promise<ConsumeResult> {
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
