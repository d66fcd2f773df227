import { TransactionConditionError } from '../errors.ts';
import type { MessageStatus } from '../message/message-status.ts';
import { TRANSITIONS } from '../outbox/state-machine.ts';
import type { AdminDeps } from './admin-deps.ts';
import { MessageNotFoundError, MessageSkippedError, WrongStatusError } from './admin-errors.ts';
import { requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';

/** An operator's action on one message. */
export interface MessageActionInput {
  readonly messageId: string;
  /** Why; required, kept in the audit row and the message's history. */
  readonly reason: string;
  /** Who: the IAM caller's ARN, or `local:<user>`. */
  readonly actor: string;
}

/** What an action changed. */
export interface MessageActionResult {
  readonly messageId: string;
  readonly action: typeof AuditAction.REPLAY | typeof AuditAction.CANCEL | typeof AuditAction.BULK_REPLAY;
  readonly from: MessageStatus;
  readonly to: MessageStatus;
  readonly topic: string;
  readonly aggregateId: string;
  readonly at: string;
  /** The audit row's id. */
  readonly actionId: string;
}

/** How an action is filed: bulk replay files each message's replay as BULK_REPLAY with the run's id. */
export interface ActionFiling {
  readonly auditAction?: typeof AuditAction.BULK_REPLAY;
  readonly details?: Readonly<Record<string, unknown>>;
}

type Deps = Pick<
  AdminDeps,
  'outbox' | 'audit' | 'transactions' | 'dueShards' | 'retentionDays' | 'clock' | 'newId'
>;

/**
 * FAILED or CANCELLED → PENDING, attempts and delivery rounds reset, due at once: the next sweeper run sends it.
 * One TransactWriteItems writes the conditional update with its history entry and the audit row.
 * Throws ReasonRequiredError (400), MessageNotFoundError (404), WrongStatusError (409, naming the status),
 * MessageSkippedError (409: a skip moved the consumers past it, so it would never be applied).
 * @example
 * await replayMessage(deps, { messageId, reason: 'inventory fixed (INC-42)', actor: 'arn:aws:iam::…:user/ana' });
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
 * in the history as APPLIED_AFTER_CANCEL. One TransactWriteItems with the audit row. Throws as
 * {@link replayMessage} does.
 * @example
 * await cancelMessage(deps, { messageId, reason: 'order withdrawn by the customer', actor });
 */
export function cancelMessage(deps: Deps, input: MessageActionInput): Promise<MessageActionResult> {
  return moveMessage(deps, { transition: 'cancel', input, filing: {} });
}

/** How often an action re-reads a message that changed between its read and its write. */
const MAX_ROUNDS = 3;

async function moveMessage(
  deps: Deps,
  move: { transition: 'replay' | 'cancel'; input: MessageActionInput; filing: ActionFiling },
): Promise<MessageActionResult> {
  const { transition, filing } = move;
  const messageId = requireText('messageId', move.input.messageId);
  const reason = requireReason(transition, move.input.reason);
  const actor = requireActor(move.input.actor);
  const allowed: readonly MessageStatus[] = TRANSITIONS[transition].from;
  let seen = '';
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const stored = await deps.outbox.read(messageId);
    if (stored === undefined) throw new MessageNotFoundError(messageId);
    seen = String(stored.status);
    if (!allowed.includes(seen as MessageStatus)) {
      throw new WrongStatusError({ action: transition, messageId, status: seen, allowed });
    }
    const skippedAt = deps.outbox.skippedAtOf(stored);
    if (transition === 'replay' && skippedAt !== undefined) {
      throw new MessageSkippedError({
        messageId,
        orderKey: String(stored.orderKey ?? ''),
        seq: Number(stored.seq ?? 0),
        skippedAt,
      });
    }
    const from = seen as MessageStatus;
    const now = deps.clock();
    const actionId = deps.newId();
    const change = { messageId, from, now, by: actor, reason, dueShards: deps.dueShards };
    const outboxAction =
      transition === 'replay'
        ? deps.outbox.replayAction(change)
        : deps.outbox.cancelAction({ ...change, retentionDays: deps.retentionDays });
    const topic = String(stored.topic ?? '');
    const aggregateId = String(stored.aggregateId ?? '');
    const action = filing.auditAction ?? (transition === 'replay' ? AuditAction.REPLAY : AuditAction.CANCEL);
    const to = TRANSITIONS[transition].to;
    try {
      // The action id as the idempotency token: an SDK retry of a lost response is answered, not applied twice.
      await deps.transactions.write(
        [
          outboxAction,
          deps.audit.putAction({
            subject: auditSubject.message(messageId),
            actionId,
            at: now.toISOString(),
            action,
            actor,
            reason,
            details: { from, to, topic, aggregateId, ...filing.details },
          }),
        ],
        actionId,
      );
    } catch (error) {
      // The status changed between the read and the write: read again and decide on the new status.
      if (error instanceof TransactionConditionError && error.failed(0)) continue;
      throw error;
    }
    return { messageId, action, from, to, topic, aggregateId, at: now.toISOString(), actionId };
  }
  throw new WrongStatusError({ action: transition, messageId, status: seen, allowed });
}
