import type { ClaimCheckReading } from '../claim-check/claim-check-store.ts';
import type { Envelope } from '../message/envelope.ts';
import type { ConfirmOutcome } from '../outbox/outbox-store.ts';
import type { ConflictRetry } from '../transaction/retry-conflicts.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type { ConsumerInbox } from './consumer-inbox.ts';

/* What the consumer core takes and gives: its plans, ports and results (apart from the code that uses them). */

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

/**
 * What telling the producer did: an outcome of the confirmation in its outbox, or RECEIPT_SENT when the consumer
 * tells it by a receipt on the producer's receipt queue (the producer applies it later, so its outcome is not
 * known here).
 */
export type Confirmation = ConfirmOutcome | 'RECEIPT_SENT';

/** How a consumer tells the producer that it applied a message, and with which outcome. */
export interface Confirmer {
  confirm(messageId: string, now: Date, outcome?: string): Promise<Confirmation>;
}

/** What the consumer needs: its inbox, and the ports and settings of everything around it. */
export interface ConsumePorts {
  /** Where each message is recorded with its effect, in one transaction (the consumer's inbox table). */
  readonly inbox: ConsumerInbox;
  /**
   * Tells the producer that the message was applied, and its outcome: in its outbox, or by a receipt. Called for
   * duplicates too (the earlier delivery may have stopped between its commit and its confirmation).
   * @default - none: the producer's sweeper reconciles on its own
   */
  readonly confirmer?: Confirmer;
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
  readonly confirmation: Confirmation | undefined;
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
  readonly confirmation: Confirmation | undefined;
}

/** A parked message that could not be applied after its predecessor, and why. */
export interface DrainFailure {
  /** The message as it was received and parked. */
  readonly message: Envelope;
  readonly error: unknown;
}
