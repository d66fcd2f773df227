import type { ReceiptBatchReport } from '../../../shared/lambda/index.ts';

/** What the producer's receipts function found for the receipts it applied, summed over a run. */
export type ReceiptCountsTotal = Readonly<Record<keyof ReceiptBatchReport['counts'] | 'unreadable', number>>;

/**
 * Sums what each invocation of the receipts function reported (the counts it logs): receipts that confirmed a
 * delivery, that found it confirmed already (a duplicate, or a receipt re-sent for a redelivered copy), that found
 * it cancelled (applied after the cancel), or found nothing to confirm, and the unreadable ones.
 * @example
 * const { response, report } = await applyReceiptEvent(event, { confirmer, logger });
 * tally.add(report);
 */
export class ReceiptTally {
  readonly #counts: Record<keyof ReceiptCountsTotal, number> = {
    CONFIRMED: 0,
    ALREADY_CONFIRMED: 0,
    APPLIED_AFTER_CANCEL: 0,
    NOT_CONFIRMABLE: 0,
    NOT_FOUND: 0,
    ERROR: 0,
    unreadable: 0,
  };
  #invocations = 0;

  /** Adds one invocation's report. */
  add(report: ReceiptBatchReport): void {
    this.#invocations += 1;
    for (const [outcome, count] of Object.entries(report.counts)) {
      this.#counts[outcome as keyof ReceiptBatchReport['counts']] += count;
    }
    this.#counts.unreadable += report.unreadable;
  }

  /** Invocations so far. */
  get invocations(): number {
    return this.#invocations;
  }

  /** The sums so far (a copy). */
  totals(): ReceiptCountsTotal {
    return { ...this.#counts };
  }
}
