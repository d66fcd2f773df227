import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import type { DrillConfig } from '../../../infra/dev/drill/drill-config.ts';
import { uniformRates } from '../../../infra/dev/drill/faults.ts';
import { runMemoryDrill } from '../../../infra/dev/drill/memory-drill.ts';
import { metricTotal } from '../../../infra/dev/drill/observed-metrics.ts';
import { formatReport } from '../../../infra/dev/drill/report.ts';
import { counterIds } from './counter-ulid.ts';

// Ids from a counter: each run follows from its seed alone, whatever the machine (see counter-ulid.ts).
vi.mock('ulid', async (importOriginal) =>
  (await import('./counter-ulid.ts')).counterUlid(await importOriginal<typeof import('ulid')>()),
);

beforeEach(() => {
  counterIds.issued = 0;
});

const SMALL: DrillConfig = {
  orders: 500,
  rates: uniformRates(0.1),
  poisonRate: 0.02,
  cancelRate: 0.3,
  hotConflictRate: 0.6,
  seed: 5,
  skus: 20,
  initialStock: 120,
};

describe('the scale drill on in-memory adapters (small size)', () => {
  it('keeps every invariant with 10 % faults at every hop, rogue messages, a hot SKU burst and cancels racing their creates', async () => {
    const result = await runMemoryDrill(SMALL, () => {});

    for (const invariant of result.invariants)
      expect(invariant, invariant.detail).toMatchObject({ ok: true });
    expect(result.injected.sqsSendError).toBeGreaterThan(0);
    expect(result.injected.relayCrashAfterSend).toBeGreaterThan(0);
    expect(result.injected.droppedStreamRecord).toBeGreaterThan(0);
    expect(result.injected.hotSkuConflict).toBeGreaterThan(0);
    const topic = result.metrics[ORDER_CREATED];
    expect(topic?.counts.DuplicatesSuppressed).toBeGreaterThan(0);
    expect(topic?.counts.SendFailures).toBeGreaterThan(0);
    expect(topic?.counts.RetriesScheduled).toBeGreaterThan(0);
    expect(topic?.confirmLatenciesMs.length).toBeGreaterThan(0);
    // Poisoned orders and the three rogue messages (readable by the sweeper: all under their own topic); each
    // replayed message failed before its fix and replay, and the skipped create before the operator skipped it.
    expect(metricTotal(result.metrics, 'MessagesFailed')).toBe(
      (result.counts.FAILED ?? 0) +
        3 +
        (result.counts['operator: FAILED messages replayed'] ?? 0) +
        (result.counts['operator: FAILED seq 1 skipped'] ?? 0),
    );
    // The operator acted mid-run: cancels racing the relay, replays of FAILED, a skip and an erase.
    expect(result.counts).toMatchObject({
      'operator: FAILED messages replayed': 3,
      'operator: FAILED seq 1 skipped': 1,
      'operator: settled orders erased': 1,
    });
    expect(result.counts['operator: PENDING creates cancelled right after their write']).toBeGreaterThan(0);
    // About 30 % of the orders cancelled, half of them right after the create: some cancels arrived first and were
    // parked until their create was applied, and each is applied after it.
    const cancels = result.metrics[ORDER_CANCELLED];
    expect(result.counts['orders cancelled']).toBeGreaterThan(100);
    expect(cancels?.counts.MessagesApplied).toBeGreaterThan(0);
    expect(cancels?.counts.MessagesParked).toBeGreaterThan(0);
    expect(cancels?.counts.DeadLettered).toBeGreaterThan(0);
    // Crashes after the commit leave inbox rows that no delivery reported, and the invariants account for them.
    expect(result.counts['inbox rows whose delivery failed after its commit (in no metric)']).toBeGreaterThan(
      0,
    );
    expect(result.counts).toMatchObject({
      'rogue messages FAILED': 3,
      'hot SKU orders (one burst)': 50,
      'TransactionConflict cancellations (injected)': result.injected.hotSkuConflict,
    });
  }, 120_000);

  it('applies every order of the burst despite the conflicts, stalls only the aggregate whose create was poisoned, and lists the new counters in its report', async () => {
    const result = await runMemoryDrill(
      { ...SMALL, orders: 200, poisonRate: 0, hotConflictRate: 0.9, seed: 9 },
      () => {},
    );

    expect(result.invariants.filter((invariant) => !invariant.ok)).toEqual([]);
    // 20 hot orders at 0.9 per try: many lose all 8 tries and are requeued; none is lost or dead-lettered for it.
    expect(result.counts['hot SKU orders APPLIED']).toBe(20);
    expect(result.metrics[ORDER_CREATED]?.counts.Requeued).toBeGreaterThan(0);
    const report = formatReport(result);
    // Poison rate 0: the one stalled aggregate is the drill's own, its create poisoned. Its cancel is delivered and
    // parked, or still held PENDING by the relay or sweeper: which one depends on how the concurrent stages
    // interleave on the machine, and both are the designed stall.
    const stall =
      /all settled but 1 stalled behind FAILED seq 1, as designed \((\d+) delivered and parked, (\d+) held PENDING\)/.exec(
        report,
      );
    expect(stall, 'the stalled aggregate is reported').not.toBeNull();
    const [, parked, held] = stall ?? [];
    expect(Number(parked) + Number(held)).toBe(1);
    for (const line of [
      /orders cancelled +[1-9]\d*\n/,
      /cursor rows +[1-9]\d*\n/,
      /reservation rows +[1-9]\d*\n/,
      /PASS every acknowledged order was written with its messages: seq 1 order\.created, seq 2 order\.cancelled/,
      /PASS no message lost.* all settled but 1 stalled behind FAILED seq 1, as designed/,
      /PASS a poisoned aggregate stalls alone.* 1 order\(s\) stalled, every other aggregate settled/,
      /PASS applied in order: .* [1-9]\d* RELEASED after APPLIED/,
      /PASS each order key's cursor lastSeq = its messages applied or rejected \(or skipped\) +[1-9]\d* cursors/,
      /PASS a skipped gap releases what waited behind it.* 1 gap\(s\) skipped/,
      /PASS operator actions mid-run: .* [1-9]\d* PENDING message\(s\) cancelled right after their write, \d+ cancel\(s\) refused as already SENT, 0 FAILED replayed after the fix and applied, 1 gap\(s\) skipped, 1 order\(s\) erased/,
      new RegExp(`PASS no parked row left for a settled aggregate .* ${parked} behind a FAILED seq 1`),
      /PASS stock moved exactly once per applied order and released cancel/,
      /PASS reservation rows exactly for the APPLIED creates not RELEASED/,
      /MessagesParked +[1-9]\d* +\d+\n/,
      /hotSkuConflict +\d+ \(rate 0\.9\)/,
      /rogue messages FAILED +3/,
      /hot SKU orders \(one burst\) +20/,
      /hot SKU orders APPLIED +20/,
      /TransactionConflict cancellations \(injected\) +[1-9]\d*/,
      /dead letters sent by the consumer, with its reason +\d+/,
      /dead letters moved by the queue's redrive policy \(no reason\) +0\n/,
      /PASS every rogue message .* 3 FAILED \(bigint, set, oversized\)/,
      /PASS contention dead-letters nothing/,
      /Metrics observed \(per topic\)\n +metric +order\.cancelled +order\.created\n/,
      /MessagesSent +[1-9]\d* +[1-9]\d*\n/,
      // The rogue messages, the stalled order's create and the skipped one's (before its skip); no cancel fails.
      /MessagesFailed +0 +5\n/,
      /MessagesApplied +[1-9]\d* +[1-9]\d*\n/,
      /Requeued +\d+ +[1-9]\d*\n/,
      /ConfirmLatencyMs p50 +\d+ ms +\d+ ms\n +ConfirmLatencyMs p95 +\d+ ms +\d+ ms\n +ConfirmLatencyMs max +\d+ ms +\d+ ms\n/,
      /PASS metrics agree with the tables per topic .* order\.created: 5 moved to FAILED, \d+ dead-lettered, [1-9]\d* confirmed by the consumer, \d+ inbox rows \(\d+ unreported\)/,
      /PASS metrics bound the sends per topic/,
    ]) {
      expect(report).toMatch(line);
    }
  }, 120_000);
});
