import { TransactionConditionError } from '../errors.ts';
import { ControlTopic } from '../message/control-topics.ts';
import { subscriberOrderKeyOf, unscopedKeyOf } from '../message/delivery-id.ts';
import { MessageStatus } from '../message/message-status.ts';
import { MAX_ORDER_KEY_LENGTH, ORDER_KEY_SEPARATOR, orderedTopic } from '../ordering/ordering.ts';
import { subscriberNames } from '../outbox/subscriptions.ts';
import { subscriberNameSchema } from '../receipts/receipt.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { safeParse } from '../validation/safe-parse.ts';
import type { AdminDeps } from './admin-deps.ts';
import {
  EarlierGapError,
  GapNotSettledError,
  InvalidAdminRequestError,
  MessageNotFoundError,
  WrongStatusError,
} from './admin-errors.ts';
import { requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';
import { controlRequest, type SentControl } from './control-requests.ts';

/** An operator's skip of one message of an ordered sequence. */
export interface SkipOrderGapInput {
  /** The sequence: `<scope>#<aggregateId>`. */
  readonly orderKey: string;
  /** The place of the message to skip in it (a whole number from 1). */
  readonly seq: number;
  /** Why; required, kept in the audit row and the message's history. */
  readonly reason: string;
  /** Who: the IAM caller's ARN, or `local:<user>`. */
  readonly actor: string;
  /**
   * The subscriber whose sequence it is, when the order key's topic is delivered to subscribers: the skip is of that
   * subscriber's delivery at `seq` (its sequence `<orderKey>#<subscriber>`, which `orderKey` may also name itself).
   * @default - the sequence `orderKey` names
   */
  readonly subscriber?: string;
}

/** What the skip did to one consumer's cursor of the order key. */
export interface CursorSkip {
  /** The consumer's inbox table, which holds its cursor row. */
  readonly inboxTable: string;
  /** The last seq the consumer had applied (or skipped) before the skip; `null` when it had none. */
  readonly lastSeq: number | null;
  /** `MOVED`: set to the skipped seq; `ALREADY_PAST`: the consumer was at or past it, nothing to do. */
  readonly outcome: 'MOVED' | 'ALREADY_PAST';
}

/**
 * What the skip did to the skipped message's successor (seq + 1), which a consumer holds parked (SENT) or the
 * sweeper holds back (PENDING) until the gap is closed: `RESENT`, requeued SENT → PENDING due now, so that the
 * sweeper sends it again; `DUE_NOW`, a PENDING one the sweeper held back made due now; `LEFT`, nothing (it is not
 * waiting for the gap, or not in a status the skip can hurry: FAILED or CANCELLED needs an operator too).
 */
export const SuccessorAction = { RESENT: 'RESENT', DUE_NOW: 'DUE_NOW', LEFT: 'LEFT' } as const;

/** One of the {@link SuccessorAction} values. */
export type SuccessorAction = (typeof SuccessorAction)[keyof typeof SuccessorAction];

/** The skipped message's successor (seq + 1), and what the skip did to it. */
export interface SuccessorResend {
  readonly messageId: string;
  readonly seq: number;
  /** Its status when the skip read it. */
  readonly status: string;
  readonly action: SuccessorAction;
}

/** What {@link skipOrderGap} changed. */
export interface SkipOrderGapResult {
  readonly action: typeof AuditAction.SKIP;
  readonly orderKey: string;
  readonly seq: number;
  /**
   * The skipped message; absent when the outbox no longer holds it (`gone`: it expired after its cancel, or was
   * erased), which a skip by order key and seq closes all the same.
   */
  readonly messageId?: string;
  /** Its topic (when it is gone, the topic of the message after it, which shares its scope). */
  readonly topic: string;
  readonly aggregateId: string;
  /** Its status before the skip, or `GONE`. */
  readonly from: MessageStatus | 'GONE';
  /** Its status after: CANCELLED, or `GONE`. */
  readonly to: MessageStatus | 'GONE';
  /** Whether the skip cancelled it (false when it already was CANCELLED, or is gone). */
  readonly cancelled: boolean;
  /** The outbox no longer holds the message at `seq`. */
  readonly gone: boolean;
  /** Each consumer inbox of the order key's topics (none for a subscriber's sequence: see `skipSent`). */
  readonly cursors: readonly CursorSkip[];
  /** The subscriber whose sequence `orderKey` is, when it is one's. */
  readonly subscriber?: string;
  /**
   * A subscriber's sequence: the `outbox.skip` message written for it. Its consumer moves its own cursor and applies
   * what it parked after the seq; its receipt confirms the skip's delivery with `SKIPPED`, `ALREADY_PAST at seq N`
   * or `EARLIER_GAP at seq N` (nothing moved: skip or replay the seqs after N first, then skip again).
   */
  readonly skipSent?: SentControl;
  /** The message after it, when there is one. */
  readonly successor?: SuccessorResend;
  /** Whether anything was written; when not, there is no audit row either. */
  readonly changed: boolean;
  readonly at: string;
  /** The audit row's id, when something was changed. */
  readonly actionId?: string;
}

type Deps = Pick<
  AdminDeps,
  | 'outbox'
  | 'audit'
  | 'inboxes'
  | 'transactions'
  | 'deliveryInboxes'
  | 'orderedTopics'
  | 'subscriptions'
  | 'dueShards'
  | 'retentionDays'
  | 'clock'
  | 'newId'
>;

/** Statuses a skipped message may be in: it never reached the consumer, and will not unless an operator acts. */
const SKIPPABLE: readonly MessageStatus[] = [
  MessageStatus.PENDING,
  MessageStatus.FAILED,
  MessageStatus.CANCELLED,
];

/** How often a skip re-reads what changed between its reads and its write. */
const MAX_ROUNDS = 3;

/**
 * How old the message after a gone seq must be before the seq is skipped as gone: the byOrderKey index lags writes
 * by a moment, so a seq written just now could look missing beside its successor.
 */
export const GONE_SKIP_MIN_AGE_MS = 60_000;

/**
 * Closes a gap in an ordered sequence for good: the consumers of `orderKey` hold every later message parked
 * until message `seq` is applied, and it never will be (it FAILED, or was cancelled, or is stuck PENDING, or is gone
 * from the outbox: expired after its cancel, or erased). In ONE TransactWriteItems, audited:
 * - the message is CANCELLED with the reason (unless it already is) and marked skipped, so the sweeper never sends
 *   it and a replay is refused (MessageSkippedError); a gone message has nothing to mark;
 * - each consumer's cursor of the order key moves from `seq - 1` to `seq` (a cursor already at or past `seq` is
 *   left alone), as if the consumer had applied it;
 * - the successor `seq + 1`, if SENT (parked by the consumer), is requeued in a new delivery round, due now: the
 *   sweeper sends it again, the consumer applies it and drains what it parked behind it. If PENDING and held
 *   back by the sweeper behind the gap, it is made due now.
 *
 * A subscriber's sequence (`<orderKey>#<subscriber>`, or `orderKey` with `subscriber`) is the subscriber's own: its
 * cursor is in its inbox, which the producer holds no grant on. The skip cancels and marks that subscriber's delivery
 * at `seq` as above, makes a PENDING successor held back behind it due now, and writes an `outbox.skip` message for
 * the subscriber in the same transaction; its consumer moves its cursor from `seq - 1` to `seq` and applies the
 * successor it holds parked (a successor it never got is resent like any unconfirmed delivery). The other
 * subscribers' sequences are untouched. A skip run again sends another (a cursor already past answers ALREADY_PAST).
 * Throws ReasonRequiredError (400), InvalidAdminRequestError (400: an order key delivered to subscribers named
 * without one), MessageNotFoundError (404: no message at `seq`, and none after it waits for
 * it), WrongStatusError (409: the message is SENT or CONFIRMED, so not a gap; or it is gone and the message after it
 * is too recent to be sure: GapNotSettledError), EarlierGapError (409: a cursor is behind `seq - 1`; skip or replay those first).
 * @example
 * await skipOrderGap(deps, { orderKey: 'order#o-42', seq: 3, reason: 'payload unfixable (INC-7)', actor });
 */
export async function skipOrderGap(deps: Deps, input: SkipOrderGapInput): Promise<SkipOrderGapResult> {
  const reason = requireReason('skip', input.reason);
  const actor = requireActor(input.actor);
  const orderKey = requireText('orderKey', input.orderKey);
  if (orderKey.length > MAX_ORDER_KEY_LENGTH) {
    throw new InvalidAdminRequestError('orderKey', `must be at most ${MAX_ORDER_KEY_LENGTH} characters`);
  }
  const seq = input.seq;
  if (!Number.isSafeInteger(seq) || seq < 1) {
    throw new InvalidAdminRequestError('seq', `must be a whole number from 1, got ${seq}`);
  }
  const subscriber = input.subscriber === undefined ? undefined : requireSubscriber(input.subscriber);
  const sequence = subscriber === undefined ? orderKey : subscriberOrderKeyOf(orderKey, subscriber);
  let lastError: unknown;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const plan = await planSkip(deps, { orderKey: sequence, seq, named: subscriber !== undefined });
    if (!plan.changes) return plan.result({ changed: false, at: deps.clock().toISOString() });
    const now = deps.clock();
    const actionId = deps.newId();
    const result = plan.result({ changed: true, at: now.toISOString(), actionId });
    try {
      // The action id as the idempotency token: an SDK retry of a lost response is answered, not applied twice.
      await deps.transactions.write(plan.actions({ now, actor, reason, actionId, result }), actionId);
      return result;
    } catch (error) {
      // The message, a cursor or the successor changed between the reads and the write: read again.
      if (!(error instanceof TransactionConditionError)) throw error;
      lastError = error;
    }
  }
  throw lastError;
}

/** A stored message of the sequence, as the skip reads it. */
interface SequenceMessage {
  readonly messageId: string;
  readonly status: string;
  readonly topic: string;
  readonly aggregateId: string;
  /** When it is due in the due index (PENDING and SENT only). */
  readonly nextAttemptAt?: string;
  readonly createdAt?: string;
  /** Whether a sweeper holds a claim on it. */
  readonly leased: boolean;
  /** The subscriber it is a delivery to, when its topic has subscribers. */
  readonly subscriber?: string;
}

interface Plan {
  /** Whether the skip has anything to write. */
  readonly changes: boolean;
  result(at: { changed: boolean; at: string; actionId?: string }): SkipOrderGapResult;
  actions(write: {
    now: Date;
    actor: string;
    reason: string;
    actionId: string;
    result: SkipOrderGapResult;
  }): TransactWriteAction[];
}

/**
 * The message to skip: as stored, or — when the outbox no longer holds it — the first later message of the order key,
 * which waits for it. Refuses a seq with nothing after it, and a gone seq whose successor is too recent to be sure.
 */
async function skippedOrGone(
  deps: Deps,
  at: { orderKey: string; seq: number; named: boolean },
): Promise<{ readonly message: SequenceMessage; readonly gone: boolean }> {
  const message = await messageAt(deps, at);
  if (message !== undefined) return { message, gone: false };
  const later = await firstAfter(deps, at);
  if (later === undefined) {
    const holding = at.named ? [] : await subscribersHolding(deps, at);
    if (holding.length > 0) {
      throw new InvalidAdminRequestError(
        'subscriber',
        `is required: ${at.orderKey} is delivered to subscribers, each its own sequence; name the one to skip seq ${at.seq} of (${holding.join(', ')})`,
      );
    }
    throw new MessageNotFoundError(`${at.orderKey} seq ${at.seq} (nor any later message of it)`);
  }
  const ageMs = deps.clock().getTime() - Date.parse(later.createdAt ?? '');
  if (!(ageMs >= GONE_SKIP_MIN_AGE_MS)) {
    throw new GapNotSettledError({
      orderKey: at.orderKey,
      seq: at.seq,
      laterMessageId: later.messageId,
      retryAfterMs: GONE_SKIP_MIN_AGE_MS - (Number.isFinite(ageMs) ? Math.max(0, ageMs) : 0),
    });
  }
  return { message: later, gone: true };
}

/** Reads the message, the cursors and the successor, refuses what cannot be skipped, and plans the writes. */
async function planSkip(deps: Deps, at: { orderKey: string; seq: number; named: boolean }): Promise<Plan> {
  const { orderKey, seq } = at;
  const { message, gone } = await skippedOrGone(deps, at);
  if (!gone && !SKIPPABLE.includes(message.status as MessageStatus)) {
    // A SENT message may still reach the consumer (reconciliation resends it); a CONFIRMED one did.
    throw new WrongStatusError({
      action: 'skip',
      messageId: message.messageId,
      status: message.status,
      allowed: SKIPPABLE,
    });
  }
  if (message.subscriber !== undefined) {
    return planSubscriberSkip(deps, { orderKey, seq, message, gone, subscriber: message.subscriber });
  }
  const from = gone ? 'GONE' : (message.status as MessageStatus);
  const inboxes = inboxesOf(deps, { orderKey, topic: message.topic });
  const cursors: CursorSkip[] = [];
  for (const inboxTable of inboxes) {
    const lastSeq = await deps.inboxes.cursorOf({ inboxTable, orderKey });
    if (lastSeq !== null && lastSeq >= seq) {
      cursors.push({ inboxTable, lastSeq, outcome: 'ALREADY_PAST' });
    } else if ((lastSeq ?? 0) === seq - 1) {
      cursors.push({ inboxTable, lastSeq, outcome: 'MOVED' });
    } else {
      throw new EarlierGapError({ orderKey, seq, inboxTable, lastSeq });
    }
  }
  const next = await messageAt(deps, { orderKey, seq: seq + 1 });
  // The successor waits for the gap where a consumer's cursor ends at `seq` after the skip (moved there now, or
  // by an earlier skip whose resend was lost): running the skip again hurries it again.
  const waiting = cursors.some((cursor) => cursor.outcome === 'MOVED' || cursor.lastSeq === seq);
  const successorAction = actionOn(next, { waiting, now: deps.clock() });
  const successor: SuccessorResend | undefined =
    next === undefined
      ? undefined
      : { messageId: next.messageId, seq: seq + 1, status: next.status, action: successorAction };
  const cancelling = from !== MessageStatus.CANCELLED && from !== 'GONE';
  const moving = cursors.filter((cursor) => cursor.outcome === 'MOVED');
  const to = gone ? 'GONE' : MessageStatus.CANCELLED;
  return {
    changes: cancelling || moving.length > 0 || successorAction !== SuccessorAction.LEFT,
    result: (written) => ({
      action: AuditAction.SKIP,
      orderKey,
      seq,
      ...(gone ? {} : { messageId: message.messageId }),
      topic: message.topic,
      aggregateId: message.aggregateId,
      from,
      to,
      cancelled: cancelling,
      gone,
      cursors,
      ...(successor === undefined ? {} : { successor }),
      changed: written.changed,
      at: written.at,
      ...(written.actionId === undefined ? {} : { actionId: written.actionId }),
    }),
    actions: ({ now, actor, reason, actionId, result }) => {
      const marking = markingOf(deps, { message, from, orderKey, seq, now, actor, reason });
      return [
        ...marking,
        ...moving.map((cursor) => deps.inboxes.cursorSkipAction({ ...cursor, orderKey, seq, now })),
        ...(next === undefined || successorAction === SuccessorAction.LEFT
          ? []
          : [
              successorAction === SuccessorAction.RESENT
                ? deps.outbox.resendAction({
                    messageId: next.messageId,
                    now,
                    by: actor,
                    reason: `resent after the skip of ${orderKey} seq ${seq}: ${reason}`,
                    dueShards: deps.dueShards,
                  })
                : deps.outbox.dueNowAction({ messageId: next.messageId, now }),
            ]),
        skipAuditAction(
          deps,
          {
            gone,
            orderKey,
            seq,
            message,
            from,
            to,
            details: { cursorsMoved: moving.map((cursor) => cursor.inboxTable) },
          },
          { now, actor, reason, actionId, result },
        ),
      ];
    },
  };
}

/**
 * The skip in one subscriber's sequence: the subscriber's delivery at `seq` cancelled and marked skipped (a gone one
 * has nothing to mark), a PENDING successor held back behind it made due now, and an `outbox.skip` written for the
 * subscriber, whose consumer moves its own cursor and drains what it parked. Always something to write: run again, it
 * sends another skip, which a consumer already past answers with ALREADY_PAST.
 */
async function planSubscriberSkip(
  deps: Deps,
  at: {
    readonly orderKey: string;
    readonly seq: number;
    readonly message: SequenceMessage;
    readonly gone: boolean;
    readonly subscriber: string;
  },
): Promise<Plan> {
  const { orderKey, seq, message, gone, subscriber } = at;
  const from = gone ? 'GONE' : (message.status as MessageStatus);
  const next = await messageAt(deps, { orderKey, seq: seq + 1 });
  // A SENT successor is the subscriber's: parked there, it is applied right after the skip; never received, it is
  // resent as any unconfirmed delivery. Only one the sweeper held back behind the gap is hurried.
  const action = actionOn(next, { waiting: true, now: deps.clock() });
  const successorAction = action === SuccessorAction.RESENT ? SuccessorAction.LEFT : action;
  const successor: SuccessorResend | undefined =
    next === undefined
      ? undefined
      : { messageId: next.messageId, seq: seq + 1, status: next.status, action: successorAction };
  const cancelling = from !== MessageStatus.CANCELLED && from !== 'GONE';
  const to = gone ? 'GONE' : MessageStatus.CANCELLED;
  const control = controlRequest(deps, {
    topic: ControlTopic.SKIP,
    subscriber,
    aggregateId: message.aggregateId,
    // The order key as the subscriber's messages carry it: its consumer files it under its own name.
    payload: { orderKey: unscopedKeyOf(orderKey, subscriber), seq },
    now: deps.clock(),
  });
  return {
    changes: true,
    result: (written) => ({
      action: AuditAction.SKIP,
      orderKey,
      seq,
      ...(gone ? {} : { messageId: message.messageId }),
      topic: message.topic,
      aggregateId: message.aggregateId,
      from,
      to,
      cancelled: cancelling,
      gone,
      cursors: [],
      subscriber,
      skipSent: control.sent,
      ...(successor === undefined ? {} : { successor }),
      changed: written.changed,
      at: written.at,
      ...(written.actionId === undefined ? {} : { actionId: written.actionId }),
    }),
    actions: ({ now, actor, reason, actionId, result }) => {
      return [
        ...markingOf(deps, { message, from, orderKey, seq, now, actor, reason }),
        ...(next === undefined || successorAction !== SuccessorAction.DUE_NOW
          ? []
          : [deps.outbox.dueNowAction({ messageId: next.messageId, now })]),
        control.action,
        skipAuditAction(
          deps,
          {
            gone,
            orderKey,
            seq,
            message,
            from,
            to,
            details: { subscriber, skipSent: control.sent.messageId },
          },
          { now, actor, reason, actionId, result },
        ),
      ];
    },
  };
}

/**
 * The skip's audit row: under the message, or under its order key's sequence when the seq is gone, naming the
 * successor it moved, and what the kind of skip did.
 */
function skipAuditAction(
  deps: Deps,
  skip: {
    readonly gone: boolean;
    readonly orderKey: string;
    readonly seq: number;
    readonly message: SequenceMessage;
    readonly from: string;
    readonly to: string;
    /** What the kind of skip did: the cursors it moved, or the skip it sent. */
    readonly details: Readonly<Record<string, unknown>>;
  },
  write: Parameters<Plan['actions']>[0],
): TransactWriteAction {
  const { gone, orderKey, seq, message, from, to, details } = skip;
  const { successor } = write.result;
  return deps.audit.putAction({
    subject: gone ? auditSubject.sequence(orderKey) : auditSubject.message(message.messageId),
    actionId: write.actionId,
    at: write.now.toISOString(),
    action: AuditAction.SKIP,
    actor: write.actor,
    reason: write.reason,
    details: {
      orderKey,
      seq,
      from,
      to,
      topic: message.topic,
      aggregateId: message.aggregateId,
      ...details,
      ...(successor === undefined || successor.action === SuccessorAction.LEFT
        ? {}
        : { successor: successor.messageId, successorAction: successor.action }),
    },
  });
}

/** The write that marks the skipped message: cancelled and marked skipped, only marked when already cancelled. */
function markingOf(
  deps: Deps,
  at: {
    readonly message: SequenceMessage;
    readonly from: MessageStatus | 'GONE';
    readonly orderKey: string;
    readonly seq: number;
    readonly now: Date;
    readonly actor: string;
    readonly reason: string;
  },
): TransactWriteAction[] {
  const { message, from, now } = at;
  if (from === 'GONE') return [];
  if (from === MessageStatus.CANCELLED)
    return [deps.outbox.markSkippedAction({ messageId: message.messageId, now })];
  return [
    deps.outbox.cancelAction({
      messageId: message.messageId,
      from,
      now,
      by: at.actor,
      dueShards: deps.dueShards,
      reason: `skipped ${at.orderKey} seq ${at.seq}: ${at.reason}`,
      retentionDays: deps.retentionDays,
      skip: true,
    }),
  ];
}

/**
 * The subscribers whose own sequence of `orderKey` holds a message at or after `seq`: an order key of a topic
 * delivered to subscribers is sequenced per subscriber, so the skip must name one.
 */
async function subscribersHolding(deps: Deps, at: { orderKey: string; seq: number }): Promise<string[]> {
  const names = subscriberNames(deps.subscriptions ?? {});
  const found = await Promise.all(
    names.map(async (subscriber) => {
      const sequence = { orderKey: subscriberOrderKeyOf(at.orderKey, subscriber), seq: at.seq };
      return (await messageAt(deps, sequence)) ?? (await firstAfter(deps, sequence));
    }),
  );
  return names.filter((_, n) => found[n] !== undefined);
}

/** A subscriber's name as the producer declares it, or a 400 saying why not. */
function requireSubscriber(subscriber: string): string {
  const read = safeParse(subscriberNameSchema, subscriber);
  if (!read.success) {
    throw new InvalidAdminRequestError(
      'subscriber',
      read.error.issues[0]?.message ?? 'is not a subscriber name',
    );
  }
  return read.data;
}

/** The message at `seq` of `orderKey`: its id from the byOrderKey index, then the item by key, consistently. */
function messageAt(deps: Deps, at: { orderKey: string; seq: number }): Promise<SequenceMessage | undefined> {
  return readInSequence(deps, { orderKey: at.orderKey, seq: at.seq, after: false });
}

/** The first message of `orderKey` after `seq`, read as {@link messageAt} reads one. */
function firstAfter(deps: Deps, at: { orderKey: string; seq: number }): Promise<SequenceMessage | undefined> {
  return readInSequence(deps, { orderKey: at.orderKey, seq: at.seq, after: true });
}

async function readInSequence(
  deps: Deps,
  at: { orderKey: string; seq: number; after: boolean },
): Promise<SequenceMessage | undefined> {
  const found = await deps.outbox.readInSequence(at);
  if (found === undefined) return undefined;
  const { messageId, item } = found;
  const { nextAttemptAt, createdAt } = item;
  return {
    messageId,
    status: String(item.status),
    topic: String(item.topic ?? ''),
    aggregateId: String(item.aggregateId ?? ''),
    ...(typeof nextAttemptAt === 'string' ? { nextAttemptAt } : {}),
    ...(typeof createdAt === 'string' ? { createdAt } : {}),
    leased: item.leaseOwner !== undefined,
    ...(typeof item.subscriber === 'string' ? { subscriber: item.subscriber } : {}),
  };
}

/**
 * The inbox tables of the consumers of `orderKey`: the inbox of the message's topic and of every topic ordered in
 * the same scope (they share the sequence). Throws when the outbox knows none: there is no cursor to move.
 */
function inboxesOf(deps: Deps, of: { orderKey: string; topic: string }): string[] {
  const scope =
    orderedTopic(deps.orderedTopics, of.topic)?.scope ?? of.orderKey.split(ORDER_KEY_SEPARATOR)[0] ?? '';
  const topics = [
    of.topic,
    ...Object.keys(deps.orderedTopics ?? {}).filter(
      (topic) => orderedTopic(deps.orderedTopics, topic)?.scope === scope,
    ),
  ];
  const inboxes = [
    ...new Set(topics.map((topic) => deps.deliveryInboxes[topic]).filter((table) => table !== undefined)),
  ];
  if (inboxes.length === 0) {
    throw new InvalidAdminRequestError(
      'orderKey',
      `names a sequence of topic ${of.topic}, and the outbox knows no consumer inbox of it (DELIVERY_INBOXES): there is no cursor to move`,
    );
  }
  return inboxes;
}

/**
 * What to do with the successor: only one that waits for the gap (a consumer's cursor ends at the skipped seq) is
 * hurried. A SENT one is parked at the consumer: resend it. A PENDING one the sweeper held back behind the gap:
 * make it due now, unless a sweeper holds it (it is being sent) or it is due already.
 */
function actionOn(next: SequenceMessage | undefined, at: { waiting: boolean; now: Date }): SuccessorAction {
  if (next === undefined || !at.waiting) return SuccessorAction.LEFT;
  if (next.status === MessageStatus.SENT) return SuccessorAction.RESENT;
  const later = next.nextAttemptAt !== undefined && next.nextAttemptAt > at.now.toISOString();
  if (next.status === MessageStatus.PENDING && !next.leased && later) return SuccessorAction.DUE_NOW;
  return SuccessorAction.LEFT;
}
