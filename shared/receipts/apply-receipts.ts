/**
 * The producer's side of receipts: each one confirms its subscriber's delivery of a message. Applying is a
 * conditional update on the delivery's status, so a duplicate receipt, a late one, or one that overtakes its
 * message's send mark changes nothing it should not; the port says what it found.
 */
import type { ConfirmOutcome } from '../outbox/outbox-store.ts';
import type { Receipt } from './receipt.ts';

/** Where receipts land: the producer's outbox, one subscriber's delivery of one message at a time. */
export interface DeliveryConfirmer {
  /**
   * The delivery of `receipt.messageId` to `receipt.subscriber` → CONFIRMED at `receipt.appliedAt`, with its
   * outcome, conditional on it not being confirmed already. NOT_FOUND: the outbox holds no such delivery (a
   * subscriber it does not deliver to, or a message archived since).
   */
  confirmDelivery(receipt: Receipt): Promise<ConfirmOutcome>;
}

/** What applying one receipt did, or the error that stopped it (the receipt is then retried). */
export type ReceiptResult =
  | { readonly receipt: Receipt; readonly outcome: ConfirmOutcome }
  | { readonly receipt: Receipt; readonly error: unknown };

/** Counts of one batch of applied receipts, by what each found. */
export type ReceiptCounts = Readonly<Record<ConfirmOutcome | 'ERROR', number>>;

/**
 * Applies `receipts` at most `concurrency` at a time, results in the receipts' order; one that fails
 * (throttling, a network error) is reported with its error and the others still apply. Two copies of one receipt
 * may apply at once: the conditional update lets exactly one of them confirm.
 */
export async function applyReceipts(
  receipts: readonly Receipt[],
  confirmer: DeliveryConfirmer,
  concurrency = 10,
): Promise<ReceiptResult[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`receipt concurrency must be a positive integer, got ${concurrency}`);
  }
  const results: ReceiptResult[] = new Array(receipts.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < receipts.length) {
      const index = next;
      next += 1;
      const receipt = receipts[index] as Receipt;
      try {
        results[index] = { receipt, outcome: await confirmer.confirmDelivery(receipt) };
      } catch (error) {
        results[index] = { receipt, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, receipts.length) }, worker));
  return results;
}

/** How many receipts found each outcome, and how many failed. */
export function countReceipts(results: readonly ReceiptResult[]): ReceiptCounts {
  const counts: Record<ConfirmOutcome | 'ERROR', number> = {
    CONFIRMED: 0,
    ALREADY_CONFIRMED: 0,
    APPLIED_AFTER_CANCEL: 0,
    NOT_CONFIRMABLE: 0,
    NOT_FOUND: 0,
    ERROR: 0,
  };
  for (const result of results) counts['outcome' in result ? result.outcome : 'ERROR'] += 1;
  return counts;
}
