import { TransactionConditionError } from '../errors.ts';
import { MessageStatus } from '../message/message-status.ts';
import { messageStatusOf } from '../outbox/delivery-status.ts';
import { TRANSITIONS } from '../outbox/state-machine.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type { AdminDeps } from './admin-deps.ts';
import { MessageSkippedError, WrongStatusError } from './admin-errors.ts';
import { requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';
import { type MessageRow, type MessageRows, messageRows } from './message-rows.ts';

/** An operator's action on one message, or on one subscriber's delivery of it. */
export interface MessageActionInput {
  readonly messageId: string;
  /**
   * Only this subscriber's delivery of the message. Without it, a message delivered to subscribers is acted on in
   * every delivery the action applies to (replay: each FAILED or CANCELLED one; cancel: each PENDING or FAILED one).
   */
  readonly subscriber?: string;
  /** Why; required, kept in the audit row and the message's history. */
  readonly reason: string;
  /** Who: the IAM caller's ARN, or `local:<user>`. */
  readonly actor: string;
}

/** What an action did to one delivery of a message acted on as a whole, or why it left it as it was. */
export interface DeliveryActionResult {
  readonly subscriber: string;
  /** The delivery's status as the action found it. */
  readonly from: MessageStatus;
  /** The status it was moved to; absent when it was left as it was. */
  readonly to?: MessageStatus;
  /** Why it was left as it was (a CONFIRMED delivery is never sent again); absent when it was moved. */
  readonly unchanged?: string;
}

/** What an action changed. */
export interface MessageActionResult {
  /** The message's own id. */
  readonly messageId: string;
  /** The subscriber whose delivery was acted on, when the action was on one subscriber's delivery. */
  readonly subscriber?: string;
  readonly action: typeof AuditAction.REPLAY | typeof AuditAction.CANCEL | typeof AuditAction.BULK_REPLAY;
  /** The status before (for a message acted on in every delivery: the status derived from its deliveries). */
  readonly from: MessageStatus;
  /** The status after (derived likewise). */
  readonly to: MessageStatus;
  readonly topic: string;
  readonly aggregateId: string;
  readonly at: string;
  /** The audit row's id. */
  readonly actionId: string;
  /** For a message delivered to subscribers, acted on as a whole: each delivery, moved or left as it was. */
  readonly deliveries?: readonly DeliveryActionResult[];
}

/** How an action is filed: bulk replay files each message's replay as BULK_REPLAY with the run's id. */
export interface ActionFiling {
  readonly auditAction?: typeof AuditAction.BULK_REPLAY;
  readonly details?: Readonly<Record<string, unknown>>;
}

type Deps = Pick<
  AdminDeps,
  'outbox' | 'audit' | 'transactions' | 'dueShards' | 'retentionDays' | 'clock' | 'newId' | 'subscriptions'
>;

/**
 * FAILED or CANCELLED → PENDING, attempts and delivery rounds reset, due at once: the next sweeper run sends it.
 * One TransactWriteItems writes the conditional update with its history entry and the audit row. For a message
 * delivered to subscribers: with `subscriber`, that subscriber's delivery only; without, every FAILED or CANCELLED
 * delivery in one transaction, and never a CONFIRMED one (nor one still PENDING or SENT) — the result says which
 * were left and why. The audit row names each subscriber.
 * Throws ReasonRequiredError (400), MessageNotFoundError or DeliveryNotFoundError (404), WrongStatusError (409,
 * naming the status, and each delivery's), MessageSkippedError (409: a skip moved the consumers past it, so it
 * would never be applied).
 * @example
 * await replayMessage(deps, { messageId, subscriber: 'loyalty', reason: 'loyalty fixed (INC-42)', actor: 'arn:aws:iam::…:user/ana' });
 */
export function replayMessage(
  deps: Deps,
  input: MessageActionInput,
  filing: ActionFiling = {},
): Promise<MessageActionResult> {
  return moveMessage(deps, { transition: 'replay', input, filing });
}

/**
 * PENDING or FAILED → CANCELLED: the sweeper never sends it again, and it expires after the retention. A copy
 * already handed to SQS may still be applied (delivery is at least once); its confirmation is then recorded
 * in the history as APPLIED_AFTER_CANCEL. One TransactWriteItems with the audit row. For a message delivered to
 * subscribers: one subscriber's delivery, or every PENDING or FAILED one, as {@link replayMessage} does. Throws as
 * {@link replayMessage} does.
 * @example
 * await cancelMessage(deps, { messageId, reason: 'order withdrawn by the customer', actor });
 */
export function cancelMessage(deps: Deps, input: MessageActionInput): Promise<MessageActionResult> {
  return moveMessage(deps, { transition: 'cancel', input, filing: {} });
}

/** How often an action re-reads a message that changed between its read and its write. */
const MAX_ROUNDS = 3;

interface Move {
  readonly transition: 'replay' | 'cancel';
  readonly input: MessageActionInput;
  readonly filing: ActionFiling;
}

/** One row the action moves, from the status it was read in. */
interface Planned {
  readonly row: MessageRow;
  readonly from: MessageStatus;
}

async function moveMessage(deps: Deps, move: Move): Promise<MessageActionResult> {
  const { transition, filing } = move;
  const messageId = requireText('messageId', move.input.messageId);
  const reason = requireReason(transition, move.input.reason);
  const actor = requireActor(move.input.actor);
  const subscriber = move.input.subscriber?.trim() || undefined;
  const allowed: readonly MessageStatus[] = TRANSITIONS[transition].from;
  let refusal: Error | undefined;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const found = await messageRows(deps, { messageId, ...(subscriber === undefined ? {} : { subscriber }) });
    const plan = planOf(deps, found, { transition, allowed });
    if (plan instanceof Error) throw plan;
    const now = deps.clock();
    const actionId = deps.newId();
    const first = found.rows[0]?.item ?? {};
    const topic = String(first.topic ?? '');
    const aggregateId = String(first.aggregateId ?? '');
    const to = TRANSITIONS[transition].to;
    const action = filing.auditAction ?? (transition === 'replay' ? AuditAction.REPLAY : AuditAction.CANCEL);
    const outcome = outcomeOf(found, plan, to);
    const actions: TransactWriteAction[] = plan.moved.map(({ row, from }) => {
      const change = { messageId: row.key, from, now, by: actor, reason, dueShards: deps.dueShards };
      return transition === 'replay'
        ? deps.outbox.replayAction(change)
        : deps.outbox.cancelAction({ ...change, retentionDays: deps.retentionDays });
    });
    const details = {
      from: outcome.from,
      to: outcome.to,
      topic,
      aggregateId,
      ...(outcome.subscriber === undefined ? {} : { subscriber: outcome.subscriber }),
      ...(outcome.deliveries === undefined
        ? {}
        : { deliveries: plan.moved.map(({ row, from }) => ({ subscriber: row.subscriber, from, to })) }),
      ...filing.details,
    };
    try {
      // The action id as the idempotency token: an SDK retry of a lost response is answered, not applied twice.
      await deps.transactions.write(
        [
          ...actions,
          deps.audit.putAction({
            subject: auditSubject.message(found.messageId),
            actionId,
            at: now.toISOString(),
            action,
            actor,
            reason,
            details,
          }),
        ],
        actionId,
      );
    } catch (error) {
      // A row's status changed between the read and the write: read again and decide on the new statuses.
      if (error instanceof TransactionConditionError && actions.some((_, n) => error.failed(n))) {
        refusal = new WrongStatusError({
          action: transition,
          messageId: found.messageId,
          status: outcome.from,
          allowed,
          ...(outcome.subscriber === undefined ? {} : { subscriber: outcome.subscriber }),
        });
        continue;
      }
      throw error;
    }
    return {
      messageId: found.messageId,
      ...(outcome.subscriber === undefined ? {} : { subscriber: outcome.subscriber }),
      action,
      from: outcome.from,
      to: outcome.to,
      topic,
      aggregateId,
      at: now.toISOString(),
      actionId,
      ...(outcome.deliveries === undefined ? {} : { deliveries: outcome.deliveries }),
    };
  }
  // Every round lost a race to another writer: the last refusal says what the message was when it was read.
  throw refusal ?? new WrongStatusError({ action: transition, messageId, status: 'changing', allowed });
}

/** The rows an action moves, or the refusal when it would move none. */
function planOf(
  deps: Pick<Deps, 'outbox'>,
  found: MessageRows,
  rule: { readonly transition: 'replay' | 'cancel'; readonly allowed: readonly MessageStatus[] },
): { readonly moved: readonly Planned[]; readonly left: ReadonlyMap<string, string> } | Error {
  const { transition, allowed } = rule;
  const moved: Planned[] = [];
  const left = new Map<string, string>();
  let skipped: MessageSkippedError | undefined;
  for (const row of found.rows) {
    const from = String(row.item.status) as MessageStatus;
    const skippedAt = deps.outbox.skippedAtOf(row.item);
    if (!allowed.includes(from)) {
      left.set(row.key, whyLeft(transition, from));
    } else if (transition === 'replay' && skippedAt !== undefined) {
      skipped = new MessageSkippedError({
        messageId: found.messageId,
        orderKey: String(row.item.orderKey ?? ''),
        seq: Number(row.item.seq ?? 0),
        skippedAt,
      });
      left.set(
        row.key,
        `skipped at ${skippedAt}: its consumer moved past it, so a replay would never be applied`,
      );
    } else moved.push({ row, from });
  }
  if (moved.length > 0) return { moved, left };
  if (skipped !== undefined) return skipped;
  const [only] = found.rows;
  if (found.scope !== 'deliveries' || only === undefined) {
    return new WrongStatusError({
      action: transition,
      messageId: found.messageId,
      status: String(only?.item.status),
      allowed,
      ...(only?.subscriber === undefined ? {} : { subscriber: only.subscriber }),
    });
  }
  const statuses = found.rows.map((row) => String(row.item.status) as MessageStatus);
  return new WrongStatusError({
    action: transition,
    messageId: found.messageId,
    status: messageStatusOf(statuses),
    allowed,
    deliveries: found.rows.map((row, n) => ({ subscriber: row.subscriber ?? '', status: statuses[n] ?? '' })),
  });
}

/** Why an action leaves a delivery in `status` as it is. */
function whyLeft(transition: 'replay' | 'cancel', status: MessageStatus): string {
  if (transition === 'replay') {
    if (status === MessageStatus.CONFIRMED)
      return 'CONFIRMED: its subscriber applied it, it is never sent again';
    return `${status}: still on its way, nothing to replay`;
  }
  if (status === MessageStatus.SENT) return 'SENT: handed to its queue, it cannot be recalled';
  return `${status}: nothing to cancel`;
}

/** The statuses before and after, as the result and the audit row state them. */
function outcomeOf(
  found: MessageRows,
  plan: { readonly moved: readonly Planned[]; readonly left: ReadonlyMap<string, string> },
  to: MessageStatus,
): {
  readonly from: MessageStatus;
  readonly to: MessageStatus;
  readonly subscriber?: string;
  readonly deliveries?: readonly DeliveryActionResult[];
} {
  if (found.scope !== 'deliveries') {
    const [only] = plan.moved;
    return {
      from: only?.from ?? to,
      to,
      ...(only?.row.subscriber === undefined ? {} : { subscriber: only.row.subscriber }),
    };
  }
  const movedKeys = new Set(plan.moved.map(({ row }) => row.key));
  const before = found.rows.map((row) => String(row.item.status) as MessageStatus);
  const deliveries = found.rows.map((row, n): DeliveryActionResult => {
    const from = before[n] as MessageStatus;
    return movedKeys.has(row.key)
      ? { subscriber: row.subscriber ?? '', from, to }
      : { subscriber: row.subscriber ?? '', from, unchanged: plan.left.get(row.key) ?? '' };
  });
  return {
    from: messageStatusOf(before),
    to: messageStatusOf(deliveries.map((delivery) => delivery.to ?? delivery.from)),
    deliveries,
  };
}
