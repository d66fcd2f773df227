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
  it('keeps every invariant at both subscribers with 10 % faults at every hop, receipts lost, duplicated and delayed, loyalty stopped for a stretch, rogue messages, a hot SKU burst and cancels racing their creates', async () => {
    const result = await runMemoryDrill(SMALL, () => {});

    for (const invariant of result.invariants)
      expect(invariant, invariant.detail).toMatchObject({ ok: true });
    for (const kind of [
      'sqsSendError',
      'relayCrashAfterSend',
      'droppedStreamRecord',
      'hotSkuConflict',
      'receiptLost',
      'receiptDuplicated',
      'receiptDelayed',
    ] as const) {
      expect(result.injected[kind], kind).toBeGreaterThan(0);
    }
    // Every subscriber consumed both topics, suppressed duplicates and parked cancels that overtook their creates.
    for (const subscriber of ['inventory', 'loyalty']) {
      const created = result.metrics.consumers[subscriber]?.[ORDER_CREATED];
      const cancelled = result.metrics.consumers[subscriber]?.[ORDER_CANCELLED];
      expect(created?.counts.MessagesApplied, subscriber).toBeGreaterThan(0);
      expect(created?.counts.DuplicatesSuppressed, subscriber).toBeGreaterThan(0);
      expect(cancelled?.counts.MessagesApplied, subscriber).toBeGreaterThan(0);
      expect(cancelled?.counts.MessagesParked, subscriber).toBeGreaterThan(0);
    }
    const sends = result.metrics.sends[ORDER_CREATED];
    expect(sends?.counts.SendFailures).toBeGreaterThan(0);
    expect(sends?.counts.RetriesScheduled).toBeGreaterThan(0);
    // The receipts: every lost one cost its delivery a redelivery, duplicates found their delivery confirmed already.
    expect(result.receipts.lost).toBeGreaterThan(0);
    expect(result.receipts.resendsAfterLoss).toBeGreaterThan(0);
    expect(result.receipts.applied.ALREADY_CONFIRMED).toBeGreaterThan(0);
    expect(result.receipts.applied.CONFIRMED).toBe(
      (result.counts['inventory deliveries CONFIRMED'] ?? 0) +
        (result.counts['loyalty deliveries CONFIRMED'] ?? 0) +
        (result.counts["operator's control deliveries CONFIRMED"] ?? 0),
    );
    // Poisoned deliveries and the rogue ones (readable by the sweeper: all under their own topic); each replayed
    // delivery failed before its fix and replay, and the skipped create before the operator skipped it.
    expect(metricTotal({ ...result.metrics.sends }, 'MessagesFailed')).toBe(
      (result.counts['inventory deliveries FAILED'] ?? 0) +
        (result.counts['loyalty deliveries FAILED'] ?? 0) +
        (result.counts['rogue deliveries FAILED'] ?? 0) +
        (result.counts['operator: FAILED deliveries replayed'] ?? 0) +
        (result.counts['operator: FAILED seq 1 skipped'] ?? 0),
    );
    // The operator acted mid-run, per subscriber: cancels racing the relay, replays of FAILED deliveries at
    // inventory, at loyalty and at both, a skip at inventory, and an erase that reached both subscribers.
    expect(result.counts).toMatchObject({
      'operator: FAILED deliveries replayed': 5,
      'operator: FAILED seq 1 skipped': 1,
      'operator: settled orders erased': 1,
      "operator's control deliveries CONFIRMED": 3,
    });
    expect(result.counts['operator: deliveries cancelled right after their write']).toBeGreaterThan(0);
    // About 30 % of the orders cancelled, half of them right after the create.
    expect(result.counts['orders cancelled']).toBeGreaterThan(100);
    // Crashes after the commit leave inbox rows that no delivery reported, and the invariants account for them.
    for (const subscriber of ['inventory', 'loyalty']) {
      expect(
        result.counts[`${subscriber} inbox rows whose delivery failed after its commit (in no metric)`],
      ).toBeGreaterThan(0);
    }
    expect(result.counts).toMatchObject({
      'rogue deliveries FAILED': 6,
      'hot SKU orders (one burst)': 50,
      'TransactionConflict cancellations (injected)': result.injected.hotSkuConflict,
    });
    // Loyalty was stopped for a stretch of the writes and caught up; inventory went on meanwhile.
    expect(result.stop.restartedAt).toBeGreaterThan(result.stop.plannedRestartAt - 1);
    expect(result.stop.plannedRestartAt).toBeGreaterThan(result.stop.stoppedAt);
    expect(result.latency.inventory.duringStop.count).toBeGreaterThan(0);
    expect(result.latency.loyalty.duringStop.count).toBeGreaterThan(0);
  }, 120_000);

  it('applies every order of the burst despite the conflicts, stalls only the aggregate whose create was poisoned, and says all of it in its report', async () => {
    const result = await runMemoryDrill(
      { ...SMALL, orders: 200, poisonRate: 0, hotConflictRate: 0.9, seed: 9 },
      () => {},
    );

    expect(result.invariants.filter((invariant) => !invariant.ok)).toEqual([]);
    // 20 hot orders at 0.9 per try: many lose all 8 tries and are requeued; none is lost or dead-lettered for it.
    expect(result.counts['hot SKU orders APPLIED at inventory']).toBe(20);
    expect(result.metrics.consumers.inventory?.[ORDER_CREATED]?.counts.Requeued).toBeGreaterThan(0);
    const report = formatReport(result);
    for (const line of [
      /^Fault drill \(memory\): 200 orders to inventory and loyalty, seed 9, poison rate 0; loyalty stopped from 20 % to 50 % of the writes/,
      /receiptLost +\d+ \(rate 0\.1\)/,
      /hotSkuConflict +\d+ \(rate 0\.9\)/,
      /orders cancelled +[1-9]\d*\n/,
      /inventory cursor rows +[1-9]\d*\n/,
      /loyalty cursor rows +[1-9]\d*\n/,
      /reservation rows +[1-9]\d*\n/,
      /award rows +[1-9]\d*\n/,
      /rogue deliveries FAILED +6\n/,
      /hot SKU orders \(one burst\) +20\n/,
      /hot SKU orders APPLIED at inventory +20\n/,
      /TransactionConflict cancellations \(injected\) +[1-9]\d*/,
      /inventory: dead letters moved by its queue's redrive policy \(no reason\) +0\n/,
      /loyalty: dead letters moved by its queue's redrive policy \(no reason\) +0\n/,
      /records handled by inventory's consumer +[1-9]\d*\n/,
      /records handled by loyalty's consumer +[1-9]\d*\n/,
      /\nReceipts\n +sent by the consumers +[1-9]\d* in [1-9]\d* bodies\n +lost \/ duplicated \/ delayed \(injected\) +\d+ \/ \d+ \/ \d+\n/,
      /found by the receipts function +CONFIRMED [1-9]\d*, ALREADY_CONFIRMED [1-9]\d*/,
      /\nConfirm latency \(a message's write → that subscriber's delivery CONFIRMED\)\n +subscriber +messages written +deliveries +p50 +p95 +mean\n/,
      /inventory +regular orders, during loyalty's stop +[1-9]\d* +[\d.]+ m?s/,
      /inventory's latency for messages written during loyalty's stop ÷ outside it: p50 (×[\d.]+|–), p95 ×[\d.]+, mean ×[\d.]+/,
      /loyalty stopped for [\d.]+ s \(planned [\d.]+ s, simulated\)/,
      /\nSend metrics \(relay and sweepers, per topic\)\n +metric +order\.cancelled +order\.created +outbox\.erase +outbox\.skip\n/,
      /MessagesSent +[1-9]\d* +[1-9]\d* +[1-9]\d* +[1-9]\d*\n/,
      /\nConsumer metrics \(per subscriber and topic\)\n +metric +inventory order\.cancelled +inventory order\.created/,
      /MessagesParked +[1-9]\d*/,
      // Poison rate 0: the one stalled aggregate is the drill's own, its create poisoned at both subscribers.
      /PASS no delivery lost.* inventory: \d+ CONFIRMED, 1 FAILED \(poisoned\), \d+ CANCELLED \(operator\), 1 stalled behind a FAILED seq 1 as designed/,
      /PASS a poisoned aggregate stalls alone at each subscriber.* 2 cancel\(s\) stalled/,
      /PASS a skipped gap releases what waited behind it at its subscriber.* 1 gap\(s\) skipped \(inventory\)/,
      /PASS applied in order at each subscriber.* inventory: [1-9]\d* RELEASED after APPLIED.* loyalty: [1-9]\d* REVOKED after AWARDED/,
      /PASS points awarded once per order loyalty applied.* [1-9]\d* orders awarded \([1-9]\d* revoked\)/,
      /PASS receipts confirm each delivery once.* \d+ lost \(their \d+ deliveries confirmed by a later receipt, after \d+ resends in all/,
      /PASS the stopped subscriber \(loyalty\) applied nothing while stopped, and caught up after.* [1-9]\d* of its deliveries written meanwhile/,
      /PASS the stop held none of the running subscriber's \(inventory\) deliveries.* [1-9]\d* inventory deliveries written during the planned stop/,
      /PASS every rogue message .* 3 messages, 6 deliveries FAILED \(bigint, set, oversized\)/,
      /PASS contention dead-letters nothing at any subscriber/,
      /PASS operator actions mid-run, per subscriber.* 1 gap\(s\) skipped, 1 order\(s\) erased; 3 outbox\.skip\/outbox\.erase messages confirmed SKIPPED\/ERASED/,
      /PASS metrics agree with the tables per topic and subscriber/,
      /PASS metrics bound the sends per topic/,
    ]) {
      expect(report).toMatch(line);
    }
  }, 120_000);
});
