import { resolveClaimCheck } from '../claim-check/resolve-claim-check.ts';
import { TransactionConflictError } from '../errors.ts';
import { DEFAULT_CONFLICT_RETRY, retryConflicts } from '../transaction/retry-conflicts.ts';
import type {
  ConsumePorts,
  ConsumeResult,
  DrainedMessage,
  DrainFailure,
  EffectPlan,
  PlanEffect,
} from './consume-types.ts';
import type { InboxCommit, InboxRefusal } from './consumer-inbox.ts';
import { APPLIED } from './inbox-record.ts';
import { assertTimeLeft } from './invocation-budget.ts';
import type { OrderedEnvelope } from './ordered-envelope.ts';

/** The outcome a parked message reports: none is recorded until it is applied. */
export const PARKED = 'PARKED';

/** The outcome of a copy the cursor has passed while the inbox holds no row for it (skipped, or its row expired). */
const UNKNOWN = 'UNKNOWN';

/**
 * Attempts at placing one message while its predecessor commits beside it. After a park check fails the cursor
 * is at or past the predecessor, so the next attempt applies the message or finds it a duplicate: two are
 * enough; the third is a margin.
 */
const MAX_PLACE_ATTEMPTS = 3;

/** Where one message of an order key ended up, before any confirmation. */
interface Placed {
  readonly kind: ConsumeResult['kind'];
  readonly outcome: string;
  /**
   * Whether to confirm it in the producer's outbox. Not when parked (not applied yet), nor for a copy the cursor
   * passed without an inbox row: the message was skipped by an operator (confirming would record it as applied
   * after its cancel) or was confirmed long ago (its row expired).
   */
  readonly confirm: boolean;
}

/**
 * Consumes a message of an ordered topic: applies it if the cursor of its order key stands at its predecessor,
 * parks it if the cursor is further behind, reports a duplicate if the cursor has passed it; then applies the
 * parked successors that can follow (see `consumeMessage`).
 */
export async function consumeOrdered(
  received: OrderedEnvelope,
  plan: PlanEffect,
  deps: ConsumePorts,
): Promise<ConsumeResult> {
  const placed = await placeMessage(received, { plan, deps, fromParked: false });
  if (placed.confirm) assertTimeLeft(deps.remainingMs, `confirming ${received.messageId}`);
  const confirmation = placed.confirm
    ? await deps.confirmer?.confirm(received.messageId, deps.clock(), placed.outcome)
    : undefined;
  const own = { kind: placed.kind, outcome: placed.outcome, confirmation };
  if (placed.kind === 'PARKED') return { ...own, drained: [] };
  // Drain after a duplicate too: the delivery that applied this message may have stopped before its drain.
  const { drained, failure } = await drainAfter(received, { plan, deps });
  return { ...own, drained, ...(failure === undefined ? {} : { drainFailure: failure }) };
}

/** What placing a message needs. */
interface Placing {
  readonly plan: PlanEffect;
  readonly deps: ConsumePorts;
  /** The message comes from its parked row: its apply deletes the row, and it is never parked again. */
  readonly fromParked: boolean;
}

/** Applies, rejects, parks or skips one message, trying again when its predecessor commits meanwhile. */
async function placeMessage(received: OrderedEnvelope, placing: Placing): Promise<Placed> {
  const { plan, deps } = placing;
  assertTimeLeft(deps.remainingMs, `consuming ${received.messageId}`);
  // The plan always sees the payload as it was written, fetched and verified when it was claim-checked.
  const resolved = await resolveClaimCheck(received, deps.claimCheck);
  const message: OrderedEnvelope = { ...resolved, orderKey: received.orderKey, seq: received.seq };
  const decided = plan(message);
  const retry = retrying(deps);
  for (let attempt = 1; attempt <= MAX_PLACE_ATTEMPTS; attempt += 1) {
    let refusal = await retry(() => commitEffect(message, decided, placing));
    if (refusal === undefined) {
      return 'apply' in decided
        ? { kind: 'APPLIED', outcome: decided.outcome ?? APPLIED, confirm: true }
        : { kind: 'REJECTED', outcome: decided.reject, confirm: true };
    }
    if (refusal.refused === 'BUSINESS' && 'apply' in decided) {
      // Only a business condition failed: the message is rejected, and the rejection moves the cursor too.
      const outcome = decided.onConditionFailure;
      refusal = await retry(() => commitOutcome(message, { ...placing, outcome }));
      if (refusal === undefined) return { kind: 'REJECTED', outcome, confirm: true };
    }
    const settled = await settleRefusal(received, { ...placing, refusal });
    if (settled !== undefined) return settled;
  }
  throw new TransactionConflictError(
    `the cursor of ${received.orderKey} moved during each of ${MAX_PLACE_ATTEMPTS} attempts at seq ${received.seq}; retry`,
  );
}

/**
 * A refused message: a duplicate when the inbox holds it or the cursor is at or past it, parked when the cursor
 * is behind its predecessor; `undefined` when it must be tried again (the predecessor has just committed).
 */
async function settleRefusal(
  received: OrderedEnvelope,
  refused: Placing & { readonly refusal: InboxRefusal },
): Promise<Placed | undefined> {
  const { deps, refusal } = refused;
  if (refusal.refused === 'INBOX') {
    return { kind: 'DUPLICATE', outcome: refusal.outcome ?? UNKNOWN, confirm: true };
  }
  if (refusal.refused === 'BUSINESS') return undefined;
  const { lastSeq } = refusal;
  if (lastSeq >= received.seq) return { kind: 'DUPLICATE', outcome: UNKNOWN, confirm: false };
  if (lastSeq === received.seq - 1) return undefined;
  // Drained from its row, yet the cursor is behind its predecessor: it stays parked for the apply that moves it.
  if (refused.fromParked) return { kind: 'PARKED', outcome: PARKED, confirm: false };
  // False when its predecessor was applied meanwhile: then it is applied instead.
  const parked = await retrying(deps)(() => deps.inbox.park(received, deps.clock()));
  return parked ? { kind: 'PARKED', outcome: PARKED, confirm: false } : undefined;
}

/** Commits the inbox row, the cursor move and the plan's actions in one transaction, or says why not. */
async function commitEffect(
  message: OrderedEnvelope,
  decided: EffectPlan,
  placing: Placing,
): Promise<InboxRefusal | undefined> {
  const outcome = 'apply' in decided ? (decided.outcome ?? APPLIED) : decided.reject;
  const effect = 'apply' in decided ? decided.apply : [];
  return commitOrdered(message, { ...placing, outcome, effect });
}

/** Commits the inbox row with a business outcome and the cursor move, or says why not. */
async function commitOutcome(
  message: OrderedEnvelope,
  placing: Placing & { readonly outcome: string },
): Promise<InboxRefusal | undefined> {
  return commitOrdered(message, { ...placing, effect: [] });
}

/** The inbox row, the cursor move, the effect and, for a drained message, its parked row's delete, at once. */
async function commitOrdered(
  message: OrderedEnvelope,
  placing: Placing & { readonly outcome: string; readonly effect: InboxCommit['effect'] },
): Promise<InboxRefusal | undefined> {
  return placing.deps.inbox.commitOrdered({
    message,
    outcome: placing.outcome,
    effect: placing.effect,
    now: placing.deps.clock(),
    fromParked: placing.fromParked,
  });
}

/**
 * Applies the parked successors of `message`, seq after seq, until one is not parked, one must wait, or one
 * fails (it stays parked and is reported). Each is confirmed once applied. A parked row whose message turns out
 * to be a duplicate (another copy was applied) is deleted.
 */
export async function drainAfter(
  message: OrderedEnvelope,
  draining: { readonly plan: PlanEffect; readonly deps: ConsumePorts },
): Promise<{ drained: DrainedMessage[]; failure?: DrainFailure }> {
  const { deps } = draining;
  const drained: DrainedMessage[] = [];
  for (let seq = message.seq + 1; ; seq += 1) {
    // Out of time, the drain stops here: its successors stay parked, and the next apply or resend drains them.
    if (deps.remainingMs !== undefined && deps.remainingMs() <= 0) return { drained };
    const parked = await deps.inbox.readParked(message.orderKey, seq);
    if (parked === undefined) return { drained };
    try {
      const placed = await placeMessage(parked, { ...draining, fromParked: true });
      if (placed.kind === 'PARKED') return { drained };
      if (placed.kind === 'DUPLICATE') await deps.inbox.deleteParked(message.orderKey, seq);
      if (placed.confirm) assertTimeLeft(deps.remainingMs, `confirming ${parked.messageId}`);
      const confirmation = placed.confirm
        ? await deps.confirmer?.confirm(parked.messageId, deps.clock(), placed.outcome)
        : undefined;
      drained.push({ message: parked, kind: placed.kind, outcome: placed.outcome, confirmation });
    } catch (error) {
      // The row stays: the message is retried as one of its own, never skipped.
      return { drained, failure: { message: parked, error } };
    }
  }
}

/** Runs a write with the in-invocation retry of transactions that conflict with concurrent ones. */
export function retrying(deps: ConsumePorts): <T>(write: () => Promise<T>) => Promise<T> {
  const retry = deps.conflictRetry ?? DEFAULT_CONFLICT_RETRY;
  const clock = {
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: deps.random ?? Math.random,
    ...(deps.remainingMs === undefined ? {} : { remainingMs: deps.remainingMs }),
  };
  return (write) => retryConflicts(write, retry, clock);
}
