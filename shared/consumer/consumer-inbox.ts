import type { Envelope } from '../message/envelope.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import type { OrderedEnvelope } from './ordered-envelope.ts';

/** One message's record in the inbox, and the business effect that commits with it. */
export interface InboxCommit<M extends Envelope = Envelope> {
  readonly message: M;
  /** What processing it did: `APPLIED`, or a business outcome such as `REJECTED_OUT_OF_STOCK`. */
  readonly outcome: string;
  /** The plan's actions, committed in the same transaction as the inbox row; none for a recorded outcome. */
  readonly effect: readonly TransactWriteAction[];
  readonly now: Date;
}

/** An ordered message's record: it also moves its order key's cursor from `seq - 1` to `seq`. */
export interface OrderedInboxCommit extends InboxCommit<OrderedEnvelope> {
  /** The message comes from its parked row, which the same transaction deletes. */
  readonly fromParked: boolean;
}

/**
 * Why a commit wrote nothing: the inbox holds the message already (with the outcome it recorded, when the row
 * says), the order key's cursor is not at the message's predecessor (where it stands: 0 when there is none yet),
 * or only a condition of the business effect failed.
 */
export type InboxRefusal =
  | { readonly refused: 'INBOX'; readonly outcome: string | undefined }
  | { readonly refused: 'CURSOR'; readonly lastSeq: number }
  | { readonly refused: 'BUSINESS' };

/**
 * The consumer's inbox: it applies a message once, its inbox row and its effect in one transaction, and holds the
 * messages of an ordered topic that arrived before their predecessor. A commit that loses a race with a concurrent
 * one throws a `TransactionConflictError` (retried by the consumer); any other failure is thrown as it is.
 */
export interface ConsumerInbox {
  /** Commits the inbox row with the effect; `undefined` once committed, else why not. */
  commit(entry: InboxCommit): Promise<Exclude<InboxRefusal, { refused: 'CURSOR' }> | undefined>;
  /** Commits the inbox row, the cursor move and the effect (and a drained message's parked-row delete). */
  commitOrdered(entry: OrderedInboxCommit): Promise<InboxRefusal | undefined>;
  /**
   * Parks a message, as received, while the cursor is still behind its predecessor: true when it is parked (now, or
   * by a copy before), false when the predecessor was applied meanwhile (the message is to be applied instead).
   */
  park(message: OrderedEnvelope, now: Date): Promise<boolean>;
  /** The message parked at `seq` of `orderKey`, read strongly consistent so a just-parked one is found. */
  readParked(orderKey: string, seq: number): Promise<OrderedEnvelope | undefined>;
  /** Removes the parked row at `seq` of `orderKey` (its message turned out to be applied already). */
  deleteParked(orderKey: string, seq: number): Promise<void>;
  /**
   * Removes the parked row at `seq` of `orderKey` only if it holds message `messageId` (an erase of it), never another
   * message parked at that place: true when it was there.
   */
  eraseParked(parked: {
    readonly orderKey: string;
    readonly seq: number;
    readonly messageId: string;
  }): Promise<boolean>;
}
