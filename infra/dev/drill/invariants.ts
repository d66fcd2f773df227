import { NOTHING_TO_RELEASE, RELEASED } from '../../../functions/inventory/apply-order/plan-stock-release.ts';
import { REJECTED_OUT_OF_STOCK } from '../../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { isReservationKey, reservationKeyOf } from '../../../functions/inventory/reservation.ts';
import { ORDER_CANCELLED, ORDER_CREATED, OrderStatus } from '../../../functions/orders/order.ts';
import { MessageStatus, orderKeyOf } from '../../../shared/index.ts';
import {
  APPLIED as APPLIED_OUTCOME,
  cursorKeyOf,
  DeadLetterCause,
  readDeadLetter,
} from '../../../shared/memory/index.ts';
import type { DrillResult } from './drill-config.ts';
import { checkMetrics, type MetricObservations } from './metric-invariants.ts';
import type { OperatorFacts } from './operator-actions.ts';
import type { RogueMessage } from './rogue-messages.ts';

/** A message in the consumer's dead-letter queue: its body and its string attributes (the reason it is there). */
export interface DeadLetterCopy {
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** SQS's receive count when the drill read it (a message the redrive policy moved keeps its source receives). */
  readonly receiveCount?: number;
}

/** The tables' contents at the end of a drill, plus what the drill did on purpose. */
export interface DrillSnapshot {
  readonly orders: readonly Record<string, unknown>[];
  /** The outbox at the end, with the messages the operator erased as they were just before the erase. */
  readonly outbox: readonly Record<string, unknown>[];
  /** Erased messages still found in the outbox at the end (there must be none). */
  readonly erasedLeft: readonly string[];
  /** The consumer's inbox rows, one per message applied or rejected (its cursor and parked rows apart). */
  readonly inbox: readonly Record<string, unknown>[];
  /** The consumer's cursor rows (`cursor#<orderKey>`, `lastSeq`), kept in its inbox table. */
  readonly cursors: readonly Record<string, unknown>[];
  /** The consumer's parked rows (`parked#<orderKey>#<seq>`): messages held for their predecessor. */
  readonly parked: readonly Record<string, unknown>[];
  /** Stock rows of the inventory table (its reservation rows apart). */
  readonly inventory: readonly Record<string, unknown>[];
  /** Reservation rows of the inventory table (`reservation#<orderId>`), one per order holding stock. */
  readonly reservations: readonly Record<string, unknown>[];
  /** Stock per SKU before the first order. */
  readonly initialStock: ReadonlyMap<string, number>;
  /** Orders whose message SQS rejects forever (they must end FAILED, with a reason). */
  readonly poisonedOrders: ReadonlySet<string>;
  /**
   * Orders whose `order.created` alone SQS rejects forever (it must end FAILED) and that are cancelled too: their
   * `order.cancelled` must stall behind it, never applied, while every other order completes.
   */
  readonly stalledOrders: ReadonlySet<string>;
  /** Orders the API acknowledged with 201 (or 409 on a retry of an acknowledged write). */
  readonly acknowledgedOrders: ReadonlySet<string>;
  /** Orders whose cancellation the API acknowledged with 202 (or 409 on a retry of an acknowledged cancel). */
  readonly cancelledOrders: ReadonlySet<string>;
  /** The orders of the burst on the hot SKU. */
  readonly hotOrders: ReadonlySet<string>;
  /**
   * Messages written straight into the outbox behind the writer's back, by id, with what each must fail with.
   * They belong to no order.
   */
  readonly rogueMessages: ReadonlyMap<string, RogueMessage>;
  /** What the consumer's dead-letter queue holds at the end. */
  readonly deadLetters: readonly DeadLetterCopy[];
  /** The source queue's maxReceiveCount: after that many receives its redrive policy moves a message itself. */
  readonly maxReceiveCount: number;
  /** What the operator did while the drill ran. */
  readonly operator: OperatorFacts;
}

/** One checked invariant. */
export interface InvariantResult {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
}

/** What a consumer's own dead letter says when every receive failed with a fault the drill injected. */
const INJECTED_FAULT = /\binjected \w+: /;

/** The ordering scope of the example's order messages (the stack orders both topics in it). */
export const ORDER_SCOPE = 'order';

/** Statuses a message ends in. */
const SETTLED: ReadonlySet<unknown> = new Set([
  MessageStatus.CONFIRMED,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
]);

/** The longest lastError quoted in a violation. */
const QUOTED_ERROR_CHARS = 160;

/**
 * Checks, from the tables and the dead-letter queue alone, what the product promises: no message lost, every
 * effect applied exactly once (stock reconciles to the order ledger), FAILED only for messages that were
 * poisoned on purpose or can never be delivered as stored (each with its reason), and nothing dead-lettered
 * for contention.
 */
export function checkInvariants(snapshot: DrillSnapshot): InvariantResult[] {
  const results: InvariantResult[] = [];
  const check = (name: string, failures: readonly string[], okDetail: string) =>
    results.push({
      name,
      ok: failures.length === 0,
      detail:
        failures.length === 0
          ? okDetail
          : `${failures.length} violation(s), e.g. ${failures.slice(0, 3).join('; ')}`,
    });

  const ordersById = new Map(snapshot.orders.map((order) => [String(order.orderId), order]));
  const rogue = snapshot.outbox.filter((message) => snapshot.rogueMessages.has(String(message.messageId)));
  const orderMessages = snapshot.outbox.filter(
    (message) => !snapshot.rogueMessages.has(String(message.messageId)),
  );
  const messagesByOrder = new Map<string, Record<string, unknown>[]>();
  for (const message of orderMessages) {
    const list = messagesByOrder.get(String(message.aggregateId)) ?? [];
    list.push(message);
    messagesByOrder.set(String(message.aggregateId), list);
  }
  const inboxById = new Map(snapshot.inbox.map((row) => [String(row.messageId), row]));
  const messageOf = (orderId: string, topic: string) =>
    messagesByOrder.get(orderId)?.find((message) => message.topic === topic);
  const outcomeOf = (message: Record<string, unknown> | undefined) =>
    message === undefined ? undefined : inboxById.get(String(message.messageId))?.outcome;
  const stalled = stalledMessages(snapshot);
  const { operator } = snapshot;
  const cancelledByOperator = (message: Record<string, unknown>) =>
    operator.cancelled.has(String(message.messageId)) ||
    (message.topic === ORDER_CREATED && operator.skippedOrders.has(String(message.aggregateId)));

  check(
    'every acknowledged order was written with its messages: seq 1 order.created, seq 2 order.cancelled if cancelled',
    [...snapshot.acknowledgedOrders].flatMap((orderId) => {
      const order = ordersById.get(orderId);
      if (order === undefined) return [`order ${orderId} acknowledged but missing`];
      const cancelled = snapshot.cancelledOrders.has(orderId);
      const failures = sequenceViolations(orderId, {
        messages: messagesByOrder.get(orderId) ?? [],
        cancelled,
      });
      const status = cancelled ? OrderStatus.CANCELLED : OrderStatus.PLACED;
      if (order.status !== status)
        failures.push(`order ${orderId} is ${String(order.status)}, not ${status}`);
      return failures;
    }),
    `${snapshot.acknowledgedOrders.size} orders (${snapshot.cancelledOrders.size} cancelled), ${orderMessages.length} messages`,
  );

  const stalledParked = [...stalled.values()].filter((entry) => entry.parked).length;
  check(
    'no message lost: each is CONFIRMED, FAILED with its reason only if poisoned, or stalled behind a FAILED seq 1',
    orderMessages.flatMap((message) => {
      const orderId = String(message.aggregateId);
      const poisoned =
        !operator.replayed.has(String(message.messageId)) &&
        (snapshot.poisonedOrders.has(orderId) ||
          (snapshot.stalledOrders.has(orderId) && message.topic === ORDER_CREATED));
      if (message.status === MessageStatus.CONFIRMED) {
        return poisoned ? [`poisoned order ${orderId} was confirmed`] : [];
      }
      if (message.status === MessageStatus.FAILED && poisoned && typeof message.lastError === 'string')
        return [];
      if (message.status === MessageStatus.CANCELLED && cancelledByOperator(message)) return [];
      const stall = stalled.get(String(message.messageId));
      if (stall !== undefined) return stall.problem === undefined ? [] : [stall.problem];
      return [
        `${String(message.messageId)} is ${String(message.status)} (${String(message.lastError ?? 'no error')})`,
      ];
    }),
    stalled.size === 0
      ? 'all settled'
      : `all settled but ${stalled.size} stalled behind FAILED seq 1, as designed ` +
          `(${stalledParked} delivered and parked, ${stalled.size - stalledParked} held PENDING)`,
  );

  check(
    'a poisoned aggregate stalls alone: the cancel of each order whose create alone was poisoned is held, never applied',
    [...snapshot.stalledOrders].flatMap((orderId) => {
      if (operator.skippedOrders.has(orderId)) return [];
      if (!snapshot.cancelledOrders.has(orderId)) return [`stalled order ${orderId} was never cancelled`];
      const cancel = messageOf(orderId, ORDER_CANCELLED);
      if (cancel === undefined) return [`stalled order ${orderId} has no order.cancelled`];
      return stalled.has(String(cancel.messageId))
        ? []
        : [`cancel of stalled order ${orderId} is ${String(cancel.status)}, not stalled`];
    }),
    `${snapshot.stalledOrders.size - operator.skippedOrders.size} order(s) stalled, every other aggregate settled`,
  );

  check(
    "a skipped gap releases what waited behind it: the order's FAILED create is CANCELLED and skipped, its cancel applied",
    [...operator.skippedOrders].flatMap((orderId) => {
      const created = messageOf(orderId, ORDER_CREATED);
      const cancel = messageOf(orderId, ORDER_CANCELLED);
      const failures: string[] = [];
      if (created?.status !== MessageStatus.CANCELLED || typeof created.skippedAt !== 'string')
        failures.push(
          `order ${orderId}: its create is ${String(created?.status)}, not CANCELLED and skipped`,
        );
      if (cancel?.status !== MessageStatus.CONFIRMED || outcomeOf(cancel) !== NOTHING_TO_RELEASE)
        failures.push(
          `order ${orderId}: its cancel is ${String(cancel?.status)} (${String(outcomeOf(cancel) ?? 'no inbox row')}), not applied with nothing to release`,
        );
      return failures;
    }),
    `${operator.skippedOrders.size} gap(s) skipped, each order's cancel then applied`,
  );

  let appliedBeforeCancel = 0;
  check(
    'every CONFIRMED message has exactly one inbox row; no poisoned one has any',
    snapshot.outbox.flatMap((message) => {
      const row = inboxById.get(String(message.messageId));
      if (message.status === MessageStatus.CONFIRMED && !row)
        return [`${String(message.messageId)} confirmed without inbox row`];
      if (message.status !== MessageStatus.CONFIRMED && row) {
        // A copy handed to SQS before the cancel (a send whose answer was lost, then retried) is still applied:
        // delivery is at least once, and the history records APPLIED_AFTER_CANCEL.
        if (message.status === MessageStatus.CANCELLED && operator.cancelled.has(String(message.messageId))) {
          appliedBeforeCancel += 1;
          return [];
        }
        return [`${String(message.messageId)} has inbox row but is ${String(message.status)}`];
      }
      return [];
    }),
    `${snapshot.inbox.length} inbox rows (${appliedBeforeCancel} of messages cancelled after an earlier copy was sent)`,
  );

  let releasedAfterApplied = 0;
  let nothingAfterRejected = 0;
  check(
    'applied in order: a cancel is RELEASED after an APPLIED create, NOTHING_TO_RELEASE after an out-of-stock one',
    [...messagesByOrder.keys()].flatMap((orderId) => {
      const created = messageOf(orderId, ORDER_CREATED);
      const cancelled = messageOf(orderId, ORDER_CANCELLED);
      const cancelOutcome = outcomeOf(cancelled);
      if (cancelOutcome === undefined) return [];
      const createdOutcome = outcomeOf(created);
      // A skipped create is never applied: the cancel behind it finds nothing reserved (checked above).
      if (operator.skippedOrders.has(orderId) && createdOutcome === undefined) return [];
      const expected =
        createdOutcome === APPLIED_OUTCOME
          ? RELEASED
          : createdOutcome === REJECTED_OUT_OF_STOCK
            ? NOTHING_TO_RELEASE
            : undefined;
      if (expected === undefined) {
        return [
          `order ${orderId}: cancel ${String(cancelOutcome)} with its create ${String(createdOutcome)}`,
        ];
      }
      if (cancelOutcome !== expected) {
        return [
          `order ${orderId}: cancel ${String(cancelOutcome)} beside a ${String(createdOutcome)} create`,
        ];
      }
      const createdAt = String(inboxById.get(String(created?.messageId))?.processedAt);
      const cancelledAt = String(inboxById.get(String(cancelled?.messageId))?.processedAt);
      if (cancelledAt < createdAt) {
        return [`order ${orderId}: cancel processed at ${cancelledAt}, before its create at ${createdAt}`];
      }
      if (expected === RELEASED) releasedAfterApplied += 1;
      else nothingAfterRejected += 1;
      return [];
    }),
    `${releasedAfterApplied} RELEASED after APPLIED, ${nothingAfterRejected} NOTHING_TO_RELEASE after out of stock`,
  );

  const cursorsByKey = new Map(snapshot.cursors.map((row) => [String(row.messageId), row]));
  const orderCursorKeys = new Set(
    [...messagesByOrder.keys()].map((orderId) => cursorKeyOf(orderKeyOf(ORDER_SCOPE, orderId))),
  );
  check(
    "each order key's cursor lastSeq = its messages applied or rejected (or skipped)",
    [
      ...[...messagesByOrder].flatMap(([orderId, messages]) => {
        const key = cursorKeyOf(orderKeyOf(ORDER_SCOPE, orderId));
        // A skip moves the cursor past the skipped seq as if it had been applied.
        const expected =
          messages.filter((message) => inboxById.has(String(message.messageId))).length +
          (operator.skippedOrders.has(orderId) ? 1 : 0);
        const lastSeq = cursorsByKey.get(key)?.lastSeq ?? 0;
        return lastSeq === expected ? [] : [`${key}: lastSeq ${String(lastSeq)}, ${expected} processed`];
      }),
      ...[...cursorsByKey.keys()].flatMap((key) =>
        orderCursorKeys.has(key) ? [] : [`${key} belongs to no order`],
      ),
    ],
    `${snapshot.cursors.length} cursors`,
  );

  let staleParked = 0;
  check(
    'no parked row left for a settled aggregate (only a message stalled behind a FAILED seq 1 stays parked)',
    snapshot.parked.flatMap((row) => {
      const stall = stalled.get(String(row.parkedMessageId));
      if (stall?.parked === true) return [];
      const message = snapshot.outbox.find((candidate) => candidate.messageId === row.parkedMessageId);
      const inbox = inboxById.get(String(row.parkedMessageId));
      // Its message was applied by another copy, delivered as a record of its own: the row is stale (it expires
      // with the inbox's retention), and the delivery check reads the inbox row first.
      if (inbox !== undefined && message?.status === MessageStatus.CONFIRMED) {
        staleParked += 1;
        return [];
      }
      return [
        `${String(row.messageId)} left parked (its message ${String(message?.status)}, ` +
          `inbox ${String(inbox?.outcome ?? 'none')}, resends ${String(message?.resends ?? 0)})`,
      ];
    }),
    `${snapshot.parked.length} parked row(s): ${snapshot.parked.length - staleParked} behind a FAILED seq 1, ` +
      `${staleParked} stale (message applied and confirmed through another copy)`,
  );

  const moved = new Map<string, number>();
  const move = (orderId: string, sign: number) => {
    for (const line of (ordersById.get(orderId)?.items ?? []) as OrderLine[]) {
      moved.set(line.sku, (moved.get(line.sku) ?? 0) + sign * line.quantity);
    }
  };
  const holding = new Set<string>();
  for (const orderId of messagesByOrder.keys()) {
    const created = outcomeOf(messageOf(orderId, ORDER_CREATED)) === APPLIED_OUTCOME;
    const released = outcomeOf(messageOf(orderId, ORDER_CANCELLED)) === RELEASED;
    if (created) move(orderId, -1);
    if (released) move(orderId, 1);
    if (created && !released) holding.add(reservationKeyOf(orderId));
  }
  const stock = new Map(snapshot.inventory.map((row) => [String(row.sku), Number(row.available)]));
  check(
    'stock moved exactly once per applied order and released cancel (initial − Σ applied + Σ released = final)',
    [...snapshot.initialStock].flatMap(([sku, initial]) => {
      const expected = initial + (moved.get(sku) ?? 0);
      const actual = stock.get(sku);
      return actual === expected && expected >= 0 ? [] : [`${sku}: expected ${expected}, found ${actual}`];
    }),
    `${snapshot.initialStock.size} SKUs reconcile`,
  );

  const reserved = new Set(snapshot.reservations.map((row) => String(row.sku)));
  check(
    'reservation rows exactly for the APPLIED creates not RELEASED',
    [
      ...[...holding].filter((key) => !reserved.has(key)).map((key) => `${key} missing`),
      ...[...reserved].filter((key) => !holding.has(key)).map((key) => `${key} left over`),
    ],
    `${reserved.size} reservation rows`,
  );

  const rogueById = new Map(rogue.map((message) => [String(message.messageId), message]));
  check(
    "every rogue message (written behind the writer's back) ended FAILED with its reason",
    [...snapshot.rogueMessages].flatMap(([messageId, expected]) => {
      const message = rogueById.get(messageId);
      if (message === undefined) return [`rogue ${expected.kind} message ${messageId} is missing`];
      const lastError = message.lastError;
      if (
        message.status === MessageStatus.FAILED &&
        typeof lastError === 'string' &&
        expected.reason.test(lastError)
      )
        return [];
      return [
        `rogue ${expected.kind} message ${messageId} is ${String(message.status)} (${quoted(lastError)})`,
      ];
    }),
    `${snapshot.rogueMessages.size} FAILED (${[...snapshot.rogueMessages.values()].map(({ kind }) => kind).join(', ')})`,
  );

  let afterInjectedFaults = 0;
  let hotAfterInjectedFaults = 0;
  check(
    'contention dead-letters nothing: each dead letter is a poisoned order or followed injected faults',
    snapshot.deadLetters.flatMap((letter) => {
      const orderId = aggregateIdOf(letter.body);
      if (orderId !== undefined && snapshot.poisonedOrders.has(orderId)) return [];
      const hot = orderId !== undefined && snapshot.hotOrders.has(orderId);
      const order = `${hot ? 'hot ' : ''}order ${String(orderId)}`;
      const read = readDeadLetter(letter);
      // No reason of the consumer's: SQS's redrive policy moved it after maxReceiveCount receives that the consumer
      // never finished (each invocation stopped, or its record neither acknowledged nor given a verdict).
      if (read.cause === DeadLetterCause.REDRIVE_POLICY) {
        return [
          `${order} moved to the DLQ by the queue's redrive policy after ${read.receives ?? 'an unknown number of'} ` +
            `receives (maxReceiveCount ${snapshot.maxReceiveCount}), with no reason: receives the consumer never finished`,
        ];
      }
      // On its last receive the consumer dead-letters with the last error; a conflict is requeued instead, its
      // receive count starting again, so a message dead-lettered this way failed for a fault on every receive.
      if (read.cause === DeadLetterCause.MAX_RECEIVES && INJECTED_FAULT.test(read.lastError ?? '')) {
        afterInjectedFaults += 1;
        if (hot) hotAfterInjectedFaults += 1;
        return [];
      }
      return [`${order} dead-lettered (${read.cause}: ${quoted(read.lastError)})`];
    }),
    `${snapshot.deadLetters.length} dead letters, ${afterInjectedFaults} after injected faults on every receive ` +
      `(${hotAfterInjectedFaults} of them hot-SKU orders), none moved by the redrive policy, none for contention`,
  );

  const erasedIds = operator.erased.map((item) => String(item.messageId));
  check(
    'operator actions mid-run: each answered as documented; a FAILED message replayed after its fix was applied, an erased one is gone and kept its inbox row',
    [
      ...operator.problems,
      ...snapshot.erasedLeft.map((messageId) => `erased ${messageId} is still in the outbox`),
      ...erasedIds
        .filter((messageId) => !inboxById.has(messageId))
        .map((id) => `erased ${id} lost its inbox row`),
      ...[...operator.replayed].flatMap((messageId) => {
        const message = snapshot.outbox.find((candidate) => candidate.messageId === messageId);
        return message?.status === MessageStatus.CONFIRMED && inboxById.has(messageId)
          ? []
          : [`replayed ${messageId} is ${String(message?.status)}, not CONFIRMED and applied`];
      }),
    ],
    `${operator.cancelled.size} PENDING message(s) cancelled right after their write, ${operator.cancelsRefused} ` +
      `cancel(s) refused as already SENT, ${operator.replayed.size} FAILED replayed after the fix and applied, ` +
      `${operator.skippedOrders.size} gap(s) skipped, ${erasedIds.length} order(s) erased`,
  );
  return results;
}

/** The messages an order must have, in its sequence: its create, then its cancel when it was cancelled. */
function sequenceViolations(
  orderId: string,
  of: { readonly messages: readonly Record<string, unknown>[]; readonly cancelled: boolean },
): string[] {
  const expected: [topic: string, seq: number][] = [[ORDER_CREATED, 1]];
  if (of.cancelled) expected.push([ORDER_CANCELLED, 2]);
  const failures: string[] = [];
  if (of.messages.length !== expected.length)
    failures.push(`order ${orderId} has ${of.messages.length} messages, not ${expected.length}`);
  const orderKey = orderKeyOf(ORDER_SCOPE, orderId);
  for (const [topic, seq] of expected) {
    const message = of.messages.find((candidate) => candidate.topic === topic);
    if (message === undefined) failures.push(`order ${orderId} has no ${topic}`);
    else if (message.orderKey !== orderKey || message.seq !== seq) {
      failures.push(
        `order ${orderId}'s ${topic} is seq ${String(message.seq)} of ${String(message.orderKey)}, not ${seq} of ${orderKey}`,
      );
    }
  }
  return failures;
}

/** A message left unsettled on purpose: held (PENDING) or parked (delivered) behind its FAILED predecessor. */
interface Stall {
  /** Whether the consumer holds it in a parked row. */
  readonly parked: boolean;
  /** What is wrong with it, if anything. */
  readonly problem?: string;
}

/**
 * The ordered messages that wait, unsettled, for a predecessor that FAILED: they may never be applied (no inbox
 * row) until an operator replays or skips the predecessor. Delivered, one must be parked; else it is held PENDING.
 */
export function stalledMessages(
  snapshot: Pick<DrillSnapshot, 'outbox' | 'inbox' | 'parked'>,
): Map<string, Stall> {
  const bySequence = new Map<string, Record<string, unknown>>();
  for (const message of snapshot.outbox) {
    if (typeof message.orderKey === 'string' && typeof message.seq === 'number')
      bySequence.set(`${message.orderKey}#${message.seq}`, message);
  }
  const inbox = new Set(snapshot.inbox.map((row) => String(row.messageId)));
  const parked = new Set(snapshot.parked.map((row) => String(row.parkedMessageId)));
  const stalled = new Map<string, Stall>();
  for (const message of snapshot.outbox) {
    if (SETTLED.has(message.status) || typeof message.seq !== 'number' || message.seq <= 1) continue;
    const predecessor = bySequence.get(`${String(message.orderKey)}#${message.seq - 1}`);
    if (predecessor?.status !== MessageStatus.FAILED) continue;
    const messageId = String(message.messageId);
    const isParked = parked.has(messageId);
    const problem = inbox.has(messageId)
      ? `${messageId} has an inbox row although seq ${message.seq - 1} FAILED`
      : message.status === MessageStatus.SENT && !isParked
        ? `${messageId} is SENT behind FAILED seq ${message.seq - 1} but not parked`
        : undefined;
    stalled.set(messageId, { parked: isParked, ...(problem === undefined ? {} : { problem }) });
  }
  return stalled;
}

/** The order a dead letter's envelope belongs to, when its body is one. */
function aggregateIdOf(body: string): string | undefined {
  try {
    const envelope: unknown = JSON.parse(body);
    const aggregateId = (envelope as { aggregateId?: unknown } | null)?.aggregateId;
    return typeof aggregateId === 'string' ? aggregateId : undefined;
  } catch {
    return undefined;
  }
}

function quoted(error: unknown): string {
  if (typeof error !== 'string') return 'no error';
  return error.length > QUOTED_ERROR_CHARS ? `${error.slice(0, QUOTED_ERROR_CHARS)}…` : error;
}

/**
 * Counts of how the messages ended (the rogue ones on their own), of the hot SKU's orders applied (their creates),
 * and of the ordered rows: orders cancelled, cursors, parked rows left, reservations.
 */
export function outcomeCounts(snapshot: DrillSnapshot): Record<string, number> {
  const counts: Record<string, number> = {};
  const add = (name: string) => {
    counts[name] = (counts[name] ?? 0) + 1;
  };
  const orderOf = new Map<string, string>();
  for (const message of snapshot.outbox) {
    const rogue = snapshot.rogueMessages.has(String(message.messageId));
    add(rogue ? `rogue messages ${String(message.status)}` : String(message.status));
    if (message.topic === ORDER_CREATED) orderOf.set(String(message.messageId), String(message.aggregateId));
  }
  let hotApplied = 0;
  for (const row of snapshot.inbox) {
    add(`inbox ${String(row.outcome)}`);
    const orderId = orderOf.get(String(row.messageId));
    if (row.outcome === 'APPLIED' && orderId !== undefined && snapshot.hotOrders.has(orderId))
      hotApplied += 1;
  }
  counts['hot SKU orders APPLIED'] = hotApplied;
  counts['orders cancelled'] = snapshot.cancelledOrders.size;
  counts['cursor rows'] = snapshot.cursors.length;
  counts['parked rows left'] = snapshot.parked.length;
  counts['reservation rows'] = snapshot.reservations.length;
  const { operator } = snapshot;
  counts['operator: PENDING creates cancelled right after their write'] = operator.cancelled.size;
  counts['operator: cancels refused (already marked SENT)'] = operator.cancelsRefused;
  counts['operator: FAILED messages replayed'] = operator.replayed.size;
  counts['operator: FAILED seq 1 skipped'] = operator.skippedOrders.size;
  counts['operator: settled orders erased'] = operator.erased.length;
  return counts;
}

/** What a drill run counted along the way, besides the tables. */
export type DrillRunFigures = Pick<
  DrillResult,
  'mode' | 'config' | 'injected' | 'deliveries' | 'writeMs' | 'settleMs' | 'simulatedMs' | 'metrics'
> &
  Pick<MetricObservations, 'unreportedCommits'>;

/**
 * The drill's result from the final tables and what the run counted along the way: the invariants of the tables,
 * then those that hold the metrics to the tables.
 */
export function drillResult(
  run: DrillRunFigures,
  snapshot: DrillSnapshot,
  counts: Readonly<Record<string, number>>,
): DrillResult {
  const { unreportedCommits, ...result } = run;
  const unreported = Object.values(unreportedCommits).reduce(
    (sum, { applied, rejected }) => sum + applied + rejected,
    0,
  );
  return {
    ...result,
    counts: {
      ...outcomeCounts(snapshot),
      ...counts,
      'inbox rows whose delivery failed after its commit (in no metric)': unreported,
    },
    invariants: [
      ...checkInvariants(snapshot),
      ...checkMetrics(snapshot, { metrics: run.metrics, unreportedCommits }),
    ],
  };
}

/** The four tables the invariants read. */
export type DrillTable = 'orders' | 'outbox' | 'inbox' | 'inventory';

/** What the drill did on purpose, beside the tables. */
export type DrillFacts = Omit<
  DrillSnapshot,
  DrillTable | 'cursors' | 'parked' | 'reservations' | 'erasedLeft'
>;

/** How many dead letters the consumer sent with its reason, and how many SQS's redrive policy moved without one. */
export function deadLetterCounts(deadLetters: readonly DeadLetterCopy[]): {
  readonly byConsumer: number;
  readonly byRedrivePolicy: number;
} {
  const byRedrivePolicy = deadLetters.filter(
    (letter) => readDeadLetter(letter).cause === DeadLetterCause.REDRIVE_POLICY,
  ).length;
  return { byConsumer: deadLetters.length - byRedrivePolicy, byRedrivePolicy };
}

/**
 * Reads every table the invariants need and adds what the drill did on purpose. The consumer's inbox table also
 * holds its cursor and parked rows, and the inventory table its reservation rows: each kind is read apart.
 */
export async function takeSnapshot(
  read: (table: DrillTable) => Promise<Record<string, unknown>[]> | Record<string, unknown>[],
  facts: DrillFacts,
): Promise<DrillSnapshot> {
  const inboxTable = await read('inbox');
  const inventoryTable = await read('inventory');
  const outbox = await read('outbox');
  const keyed = (row: Record<string, unknown>, prefix: string) => String(row.messageId).startsWith(prefix);
  const live = new Set(outbox.map((message) => String(message.messageId)));
  const erasedLeft = facts.operator.erased
    .map((item) => String(item.messageId))
    .filter((messageId) => live.has(messageId));
  return {
    orders: await read('orders'),
    // The erased messages as they were, so that the order ledger and the metrics still add up.
    outbox: [...outbox, ...facts.operator.erased.filter((item) => !live.has(String(item.messageId)))],
    erasedLeft,
    inbox: inboxTable.filter((row) => !keyed(row, CURSOR_PREFIX) && !keyed(row, PARKED_PREFIX)),
    cursors: inboxTable.filter((row) => keyed(row, CURSOR_PREFIX)),
    parked: inboxTable.filter((row) => keyed(row, PARKED_PREFIX)),
    inventory: inventoryTable.filter((row) => !isReservationKey(String(row.sku))),
    reservations: inventoryTable.filter((row) => isReservationKey(String(row.sku))),
    ...facts,
  };
}

/** How the consumer's cursor and parked rows' keys begin (`cursorKeyOf`, `parkedKeyOf`). */
const CURSOR_PREFIX = cursorKeyOf('');
const PARKED_PREFIX = 'parked#';
