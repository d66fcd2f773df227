import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TransactionConditionError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import type { ConfirmOutcome, OutboxStore } from '../outbox/outbox-store.ts';
import { transactWrite } from '../transaction/transact-write.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { DEFAULT_INBOX_RETENTION_DAYS, inboxPut } from './inbox.ts';

/** Outcome recorded for an effect that committed. */
export const APPLIED = 'APPLIED';

/** What a topic's consumer wants done for a message. */
export type EffectPlan =
  /**
   * Apply `actions` (committed with the inbox row). If one of their conditions fails (e.g. not enough
   * stock), nothing is applied and `onConditionFailure` is recorded as the outcome instead.
   */
  | { readonly apply: readonly TransactWriteAction[]; readonly onConditionFailure: string }
  /** Apply nothing and record this outcome (e.g. a payload the consumer cannot read). */
  | { readonly reject: string };

/** The business side of a consumer: turns a message into an effect plan. Pure; no I/O. */
export type PlanEffect = (message: Envelope) => EffectPlan;

/** What the consumer needs. */
export interface ConsumeDeps {
  readonly client: DynamoDBDocumentClient;
  readonly inboxTable: string;
  /** Tells the producer's outbox that the message was applied; omit when the producer is elsewhere. */
  readonly confirmer?: Pick<OutboxStore, 'confirm'>;
  readonly clock: () => Date;
  /** @default 30 */
  readonly inboxRetentionDays?: number;
}

/** What consuming one message did. */
export interface ConsumeResult {
  /** APPLIED: the effect committed now. REJECTED: a business outcome was recorded. DUPLICATE: seen before. */
  readonly kind: 'APPLIED' | 'REJECTED' | 'DUPLICATE';
  /** The outcome stored in the inbox (for a duplicate, the earlier one when DynamoDB returned it). */
  readonly outcome: string;
  readonly confirmation: ConfirmOutcome | undefined;
}

/**
 * Applies a message exactly once in effect: the inbox put (`attribute_not_exists(messageId)`) and the
 * business actions commit in ONE TransactWriteItems. A duplicate fails the inbox condition and is skipped;
 * a failed business condition becomes a recorded outcome rather than an endless retry; any other error is
 * thrown so that only this record is retried. Afterwards the producer's message is confirmed.
 * @example
 * const result = await consumeMessage(envelope, planStockReservation(inventoryTable), deps);
 */
export async function consumeMessage(
  message: Envelope,
  plan: PlanEffect,
  deps: ConsumeDeps,
): Promise<ConsumeResult> {
  const decided = plan(message);
  const recorded =
    'apply' in decided
      ? await applyOnce(message, decided.apply, decided.onConditionFailure, deps)
      : await recordRejection(message, decided.reject, deps);
  // Confirm duplicates too: the previous delivery may have crashed between its commit and its confirm.
  const confirmation = await deps.confirmer?.confirm(message.messageId, deps.clock());
  return { ...recorded, confirmation };
}

async function applyOnce(
  message: Envelope,
  actions: readonly TransactWriteAction[],
  onConditionFailure: string,
  deps: ConsumeDeps,
): Promise<Omit<ConsumeResult, 'confirmation'>> {
  try {
    await transactWrite(deps.client, [inboxRow(message, APPLIED, deps), ...actions]);
    return { kind: 'APPLIED', outcome: APPLIED };
  } catch (error) {
    if (!(error instanceof TransactionConditionError)) throw error;
    // Action 0 is the inbox put: its condition failing means this message was processed before.
    if (error.failed(0)) return duplicateOf(error);
    return recordRejection(message, onConditionFailure, deps);
  }
}

async function recordRejection(
  message: Envelope,
  outcome: string,
  deps: ConsumeDeps,
): Promise<Omit<ConsumeResult, 'confirmation'>> {
  try {
    await transactWrite(deps.client, [inboxRow(message, outcome, deps)]);
    return { kind: 'REJECTED', outcome };
  } catch (error) {
    if (error instanceof TransactionConditionError) return duplicateOf(error);
    throw error;
  }
}

function inboxRow(message: Envelope, outcome: string, deps: ConsumeDeps): TransactWriteAction {
  return inboxPut(
    deps.inboxTable,
    { messageId: message.messageId, topic: message.topic, outcome },
    deps.clock(),
    deps.inboxRetentionDays ?? DEFAULT_INBOX_RETENTION_DAYS,
  );
}

/** The earlier outcome, read from the cancellation reason's ALL_OLD item at no extra cost. */
function duplicateOf(error: TransactionConditionError): Omit<ConsumeResult, 'confirmation'> {
  const earlier = error.oldItem(0)?.outcome;
  return { kind: 'DUPLICATE', outcome: typeof earlier === 'string' ? earlier : 'UNKNOWN' };
}
