import { TransactionConflictError } from '../errors.ts';
import {
  ControlOutcome,
  type ErasePayload,
  readControl,
  type SkipPayload,
} from '../message/control-message.ts';
import { ControlTopic } from '../message/control-topics.ts';
import type { Envelope } from '../message/envelope.ts';
import type { ConsumePorts, ConsumeResult, PlanEffect } from './consume-types.ts';
import type { InboxRefusal } from './consumer-inbox.ts';
import { assertTimeLeft } from './invocation-budget.ts';
import { drainAfter, retrying } from './ordered-consume.ts';
import type { OrderedEnvelope } from './ordered-envelope.ts';

/** Where a control message ended up, before its confirmation. */
interface Placed {
  readonly kind: Exclude<ConsumeResult['kind'], 'PARKED'>;
  readonly outcome: string;
  /** The skipped place, when the parked messages after it are to be applied now. */
  readonly drainAfter?: OrderedEnvelope;
}

/** The outcome of a copy whose inbox row holds none (never written by this library, but read tolerantly). */
const UNKNOWN = 'UNKNOWN';

/**
 * Attempts at a skip while the cursor moves under it: after a refusal at `seq - 2` the next attempt finds the cursor
 * at `seq - 1` (applies) or past it: two are enough, the third is a margin.
 */
const MAX_SKIP_ATTEMPTS = 3;

/**
 * Applies one of the outbox's own messages (a control topic, `outbox.*`) in the consumer, where the producer holds
 * no grant: the user's plan never sees it. Each is recorded in the inbox like any message (so a copy is a duplicate)
 * and confirmed with its outcome, by receipt for a subscriber:
 * - `outbox.erase` deletes this consumer's parked rows of the listed messages (each only if it holds that message),
 *   then records `ERASED`. The deletes come first: a copy redelivered after a stop between them finds no inbox row
 *   and deletes again, which changes nothing.
 * - `outbox.skip` moves the order key's cursor from `seq - 1` to `seq` in the transaction that records `SKIPPED`,
 *   as if the message at `seq` had been applied, then applies the parked messages after it (as an apply drains its
 *   successors). A cursor at or past `seq` is `ALREADY_PAST`; one further behind is `EARLIER_GAP` and nothing moves
 *   (the operator skips or replays the earlier seqs, then skips again). Both name the cursor's seq.
 * Throws PoisonMessageError for a control message it cannot read (dead-lettered with the reason).
 * @example
 * if (isControlTopic(message.topic)) return consumeControl(message, plan, deps);
 */
export async function consumeControl(
  received: Envelope,
  plan: PlanEffect,
  deps: ConsumePorts,
): Promise<ConsumeResult> {
  const request = readControl(received);
  assertTimeLeft(deps.remainingMs, `consuming ${received.messageId}`);
  const placed =
    request.topic === ControlTopic.ERASE
      ? await applyErase(received, request, deps)
      : await applySkip(received, request, deps);
  assertTimeLeft(deps.remainingMs, `confirming ${received.messageId}`);
  const confirmation = await deps.confirmer?.confirm(received.messageId, deps.clock(), placed.outcome);
  const own = { kind: placed.kind, outcome: placed.outcome, confirmation };
  if (placed.drainAfter === undefined) return own;
  const { drained, failure } = await drainAfter(placed.drainAfter, { plan, deps });
  return { ...own, drained, ...(failure === undefined ? {} : { drainFailure: failure }) };
}

/**
 * The order keys a control message touches (a skip's, an erase's parked rows'): a batch applies it after the
 * messages of those keys before it, and before those after it. Throws PoisonMessageError when it cannot be read.
 */
export function controlOrderKeys(message: Envelope): string[] {
  const request = readControl(message);
  if (request.topic === ControlTopic.SKIP) return [request.orderKey];
  return [
    ...new Set(request.messages.flatMap((entry) => (entry.orderKey === undefined ? [] : [entry.orderKey]))),
  ];
}

async function applyErase(message: Envelope, request: ErasePayload, deps: ConsumePorts): Promise<Placed> {
  for (const entry of request.messages) {
    // Only a message of an ordered topic is ever parked.
    if (entry.orderKey === undefined || entry.seq === undefined) continue;
    assertTimeLeft(deps.remainingMs, `erasing the parked row of ${entry.messageId}`);
    await deps.inbox.eraseParked({ orderKey: entry.orderKey, seq: entry.seq, messageId: entry.messageId });
  }
  return record(message, { outcome: ControlOutcome.ERASED, kind: 'APPLIED' }, deps);
}

async function applySkip(message: Envelope, request: SkipPayload, deps: ConsumePorts): Promise<Placed> {
  // The skip is placed as the message at the skipped seq would be, with no effect: its inbox row and the cursor move
  // commit together, or neither does.
  const skipped: OrderedEnvelope = { ...message, orderKey: request.orderKey, seq: request.seq };
  const retry = retrying(deps);
  for (let attempt = 1; attempt <= MAX_SKIP_ATTEMPTS; attempt += 1) {
    const refusal = await retry(() =>
      deps.inbox.commitOrdered({
        message: skipped,
        outcome: ControlOutcome.SKIPPED,
        effect: [],
        now: deps.clock(),
        fromParked: false,
      }),
    );
    if (refusal === undefined)
      return { kind: 'APPLIED', outcome: ControlOutcome.SKIPPED, drainAfter: skipped };
    if (refusal.refused !== 'CURSOR') return duplicateSkip(refusal, skipped);
    const { lastSeq } = refusal;
    // The cursor reached `seq - 1` between the read and the write: try again.
    if (lastSeq === request.seq - 1) continue;
    const past = lastSeq >= request.seq;
    const outcome = `${past ? ControlOutcome.ALREADY_PAST : ControlOutcome.EARLIER_GAP} at seq ${lastSeq}`;
    const placed = await record(message, { outcome, kind: 'REJECTED' }, deps);
    // Past the seq: whatever applied it may have stopped before applying what was parked after it.
    return past ? { ...placed, drainAfter: skipped } : placed;
  }
  throw new TransactionConflictError(
    `the cursor of ${request.orderKey} moved during each of ${MAX_SKIP_ATTEMPTS} attempts at skipping seq ${request.seq}; retry`,
  );
}

/**
 * A copy of a skip recorded before: its earlier outcome, and the parked messages after it applied again unless the
 * skip found an earlier gap (a delivery that recorded it may have stopped before its drain).
 */
function duplicateSkip(refusal: InboxRefusal, skipped: OrderedEnvelope): Placed {
  const outcome = (refusal.refused === 'INBOX' ? refusal.outcome : undefined) ?? UNKNOWN;
  const held = outcome.startsWith(ControlOutcome.EARLIER_GAP);
  return { kind: 'DUPLICATE', outcome, ...(held ? {} : { drainAfter: skipped }) };
}

/** Records the control message in the inbox with `outcome`; a copy recorded before is a duplicate. */
async function record(
  message: Envelope,
  recorded: { readonly outcome: string; readonly kind: Placed['kind'] },
  deps: ConsumePorts,
): Promise<Placed> {
  const refusal = await retrying(deps)(() =>
    deps.inbox.commit({ message, outcome: recorded.outcome, effect: [], now: deps.clock() }),
  );
  if (refusal === undefined) return { kind: recorded.kind, outcome: recorded.outcome };
  // With no effect, the inbox row's condition is the only one that can fail.
  const earlier = refusal.refused === 'INBOX' ? refusal.outcome : undefined;
  return { kind: 'DUPLICATE', outcome: earlier ?? UNKNOWN };
}
