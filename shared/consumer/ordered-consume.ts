import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { transactWrite } from '../aws/transact-write.ts';
import { resolveClaimCheck } from '../claim-check/resolve-claim-check.ts';
import { TransactionConditionError, TransactionConflictError } from '../errors.ts';
import { DEFAULT_CONFLICT_RETRY, retryConflicts } from '../transaction/retry-conflicts.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type {
  ConsumeDeps,
  ConsumeResult,
  DrainedMessage,
  DrainFailure,
  EffectPlan,
  PlanEffect,
} from './consume-message.ts';
import { APPLIED, INBOX_KEYS, inboxPut } from './inbox.ts';
import { assertTimeLeft } from './invocation-budget.ts';
import {
  cursorAdvance,
  cursorBehind,
  lastSeqOf,
  type OrderedEnvelope,
  parkedDelete,
  parkedKeyOf,
  parkedMessageOf,
  parkedPut,
} from './order-cursor.ts';

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

/** Why an ordered transaction did not commit. */
type Refusal =
  | { readonly refused: 'INBOX'; readonly outcome: string }
  | { readonly refused: 'CURSOR'; readonly lastSeq: number }
  | { readonly refused: 'BUSINESS' };

/**
 * Consumes a message of an ordered topic: applies it if the cursor of its order key stands at its predecessor,
 * parks it if the cursor is further behind, reports a duplicate if the cursor has passed it; then applies the
 * parked successors that can follow (see `consumeMessage`).
 */
export async function consumeOrdered(
  received: OrderedEnvelope,
  plan: PlanEffect,
  deps: ConsumeDeps,
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
  readonly deps: ConsumeDeps;
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
  refused: Placing & { readonly refusal: Refusal },
): Promise<Placed | undefined> {
  const { deps, refusal } = refused;
  if (refusal.refused === 'INBOX') return { kind: 'DUPLICATE', outcome: refusal.outcome, confirm: true };
  if (refusal.refused === 'BUSINESS') return undefined;
  const { lastSeq } = refusal;
  if (lastSeq >= received.seq) return { kind: 'DUPLICATE', outcome: UNKNOWN, confirm: false };
  if (lastSeq === received.seq - 1) return undefined;
  // Drained from its row, yet the cursor is behind its predecessor: it stays parked for the apply that moves it.
  if (refused.fromParked) return { kind: 'PARKED', outcome: PARKED, confirm: false };
  const parked = await retrying(deps)(() => park(received, deps));
  return parked ? { kind: 'PARKED', outcome: PARKED, confirm: false } : undefined;
}

/** Parks a message; false when its predecessor was applied meanwhile (then it is applied instead). */
async function park(message: OrderedEnvelope, deps: ConsumeDeps): Promise<boolean> {
  const target = { inboxTable: deps.inboxTable, orderKey: message.orderKey, seq: message.seq };
  try {
    await transactWrite(deps.client, [
      parkedPut({
        inboxTable: deps.inboxTable,
        message,
        now: deps.clock(),
        ...(deps.inboxRetentionDays === undefined ? {} : { retentionDays: deps.inboxRetentionDays }),
      }),
      cursorBehind(target),
    ]);
    return true;
  } catch (error) {
    if (!(error instanceof TransactionConditionError)) throw error;
    // Action 1 checks the cursor: it reached the predecessor between the apply and this park.
    if (error.failed(1)) return false;
    // Only the put failed: a copy of this message is parked already.
    return true;
  }
}

/** Commits the inbox row, the cursor move and the plan's actions in one transaction, or says why not. */
async function commitEffect(
  message: OrderedEnvelope,
  decided: EffectPlan,
  placing: Placing,
): Promise<Refusal | undefined> {
  const outcome = 'apply' in decided ? (decided.outcome ?? APPLIED) : decided.reject;
  const ordered = orderedActions(message, { ...placing, outcome });
  const effect = 'apply' in decided ? decided.apply : [];
  return commit(placing.deps, [...ordered, ...effect]);
}

/** Commits the inbox row with a business outcome and the cursor move, or says why not. */
async function commitOutcome(
  message: OrderedEnvelope,
  placing: Placing & { readonly outcome: string },
): Promise<Refusal | undefined> {
  return commit(placing.deps, orderedActions(message, placing));
}

/** The inbox put (action 0), the cursor move (action 1) and, for a drained message, its parked row's delete. */
function orderedActions(
  message: OrderedEnvelope,
  placing: Placing & { readonly outcome: string },
): TransactWriteAction[] {
  const { deps } = placing;
  const target = { inboxTable: deps.inboxTable, orderKey: message.orderKey, seq: message.seq };
  return [
    inboxPut({
      inboxTable: deps.inboxTable,
      messageId: message.messageId,
      topic: message.topic,
      outcome: placing.outcome,
      now: deps.clock(),
      ...(deps.inboxRetentionDays === undefined ? {} : { retentionDays: deps.inboxRetentionDays }),
    }),
    cursorAdvance({ ...target, now: deps.clock() }),
    ...(placing.fromParked ? [parkedDelete(target)] : []),
  ];
}

/** Sends the transaction; a refusal says which condition failed first: the inbox, the cursor, the business. */
async function commit(deps: ConsumeDeps, actions: TransactWriteAction[]): Promise<Refusal | undefined> {
  try {
    await transactWrite(deps.client, actions);
    return undefined;
  } catch (error) {
    if (!(error instanceof TransactionConditionError)) throw error;
    if (error.failed(0)) {
      const earlier = error.oldItem(0)?.outcome;
      return { refused: 'INBOX', outcome: typeof earlier === 'string' ? earlier : UNKNOWN };
    }
    if (error.failed(1)) return { refused: 'CURSOR', lastSeq: lastSeqOf(error.oldItem(1)) };
    return { refused: 'BUSINESS' };
  }
}

/**
 * Applies the parked successors of `message`, seq after seq, until one is not parked, one must wait, or one
 * fails (it stays parked and is reported). Each is confirmed once applied. A parked row whose message turns out
 * to be a duplicate (another copy was applied) is deleted.
 */
async function drainAfter(
  message: OrderedEnvelope,
  draining: { readonly plan: PlanEffect; readonly deps: ConsumeDeps },
): Promise<{ drained: DrainedMessage[]; failure?: DrainFailure }> {
  const { deps } = draining;
  const drained: DrainedMessage[] = [];
  for (let seq = message.seq + 1; ; seq += 1) {
    // Out of time, the drain stops here: its successors stay parked, and the next apply or resend drains them.
    if (deps.remainingMs !== undefined && deps.remainingMs() <= 0) return { drained };
    const row = await readParked(deps, { orderKey: message.orderKey, seq });
    if (row === undefined) return { drained };
    const parked = parkedMessageOf(row);
    try {
      const placed = await placeMessage(parked, { ...draining, fromParked: true });
      if (placed.kind === 'PARKED') return { drained };
      if (placed.kind === 'DUPLICATE') await deleteParked(deps, { orderKey: message.orderKey, seq });
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

/** The parked row of `seq`, read strongly consistent so a just-parked message is found. */
async function readParked(
  deps: ConsumeDeps,
  at: { readonly orderKey: string; readonly seq: number },
): Promise<Record<string, unknown> | undefined> {
  const result = await deps.client.send(
    new GetCommand({
      TableName: deps.inboxTable,
      Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(at.orderKey, at.seq) },
      ConsistentRead: true,
    }),
  );
  return result.Item;
}

async function deleteParked(
  deps: ConsumeDeps,
  at: { readonly orderKey: string; readonly seq: number },
): Promise<void> {
  await deps.client.send(
    new DeleteCommand({
      TableName: deps.inboxTable,
      Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(at.orderKey, at.seq) },
    }),
  );
}

/** Runs a write with the in-invocation retry of transactions that conflict with concurrent ones. */
function retrying(deps: ConsumeDeps): <T>(write: () => Promise<T>) => Promise<T> {
  const retry = deps.conflictRetry ?? DEFAULT_CONFLICT_RETRY;
  const clock = {
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: deps.random ?? Math.random,
    ...(deps.remainingMs === undefined ? {} : { remainingMs: deps.remainingMs }),
  };
  return (write) => retryConflicts(write, retry, clock);
}
