import type { ConfirmLatency } from './confirm-latency.ts';
import type { FaultRates, HopFaultRates } from './faults.ts';
import type { InvariantResult } from './invariant-result.ts';
import type { DrillMetrics } from './observed-metrics.ts';
import type { ReceiptCountsTotal } from './receipt-tally.ts';
import type { StopFacts } from './subscriber-stop.ts';

/** What a drill run does. */
export interface DrillConfig {
  readonly orders: number;
  /** Rate of each fault injected at a hop. */
  readonly rates: HopFaultRates;
  /**
   * Memory drill: the chance, per try, that a consumer's transaction on the hot SKU is cancelled with
   * `TransactionConflict` (on moto the conflicts are real: concurrent consumers under optimistic concurrency).
   */
  readonly hotConflictRate: number;
  /** Fraction of orders whose message SQS rejects forever (must end FAILED). */
  readonly poisonRate: number;
  /**
   * Fraction of the acknowledged orders a client cancels too (half of them right after the create, so that the
   * cancel often races it through the pipeline; the others later).
   */
  readonly cancelRate: number;
  readonly seed: number;
  readonly skus: number;
  /** Units of stock per SKU at the start; low enough that some orders are rejected as out of stock. */
  readonly initialStock: number;
}

/** One drill's measured result. */
export interface DrillResult {
  readonly mode: 'moto' | 'memory';
  readonly config: DrillConfig;
  readonly injected: Readonly<Record<string, number>>;
  readonly counts: Readonly<Record<string, number>>;
  /** Records each subscriber's consumer handled (each receive of each copy, whatever became of it). */
  readonly deliveries: Readonly<Record<string, number>>;
  /**
   * What the relay, sweeper and consumer functions would have published over the run, per topic (the consumers' per
   * subscriber): the drill calls the same cores and turns their counts into metrics with the same functions as the
   * handler factories.
   */
  readonly metrics: DrillMetrics;
  /** The receipts: how many the consumers sent, what the faults did to them, and what the producer found. */
  readonly receipts: ReceiptSummary;
  /** Each subscriber's confirm latency, from the tables: write → its delivery CONFIRMED. */
  readonly latency: ConfirmLatency;
  /** When the stopped subscriber was stopped and started again. */
  readonly stop: StopFacts;
  /** Wall-clock milliseconds to write every order and to settle afterwards. */
  readonly writeMs: number;
  readonly settleMs: number;
  /** Simulated time the pipeline ran (memory mode runs a virtual clock). */
  readonly simulatedMs?: number;
  readonly invariants: readonly InvariantResult[];
}

/** A run's receipts, summed. */
export interface ReceiptSummary {
  /** Receipts the consumers sent, in how many bodies (SQS messages). */
  readonly sent: number;
  readonly bodies: number;
  /** Receipts lost, duplicated and delayed by the drill's faults. */
  readonly lost: number;
  readonly duplicated: number;
  readonly delayed: number;
  /** Resends of the deliveries whose receipt was lost (each lost receipt costs a redelivery). */
  readonly resendsAfterLoss: number;
  /** What the producer's receipts function found for the receipts it applied. */
  readonly applied: ReceiptCountsTotal;
}

/** The rate of every fault a run injects: the hop faults, and conflicts on the hot SKU. */
export function drillRates(config: Pick<DrillConfig, 'rates' | 'hotConflictRate'>): FaultRates {
  return { ...config.rates, hotSkuConflict: config.hotConflictRate };
}

/** Progress callback: done out of total, plus a short status. */
export type Progress = (done: number, total: number, status: string) => void;
