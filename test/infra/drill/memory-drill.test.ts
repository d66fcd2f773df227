import { describe, expect, it } from 'vitest';
import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import type { DrillConfig } from '../../../infra/drill/drill-config.ts';
import { uniformRates } from '../../../infra/drill/faults.ts';
import { checkInvariants, type DrillSnapshot } from '../../../infra/drill/invariants.ts';
import { runMemoryDrill } from '../../../infra/drill/memory-drill.ts';
import { formatReport } from '../../../infra/drill/report.ts';

const SMALL: DrillConfig = {
  orders: 500,
  rates: uniformRates(0.1),
  poisonRate: 0.02,
  hotConflictRate: 0.6,
  seed: 5,
  skus: 20,
  initialStock: 120,
};

describe('the scale drill on in-memory adapters (small size)', () => {
  it('keeps every invariant with 10 % faults at every hop, rogue messages and a hot SKU burst', async () => {
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
    // Poisoned orders and the three rogue messages (readable by the sweeper: all under their own topic).
    expect(topic?.counts.MessagesFailed).toBe((result.counts.FAILED ?? 0) + 3);
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

  it('applies every order of the burst despite the conflicts, and lists the new counters in its report', async () => {
    const result = await runMemoryDrill(
      { ...SMALL, orders: 200, poisonRate: 0, hotConflictRate: 0.9, seed: 9 },
      () => {},
    );

    expect(result.invariants.filter((invariant) => !invariant.ok)).toEqual([]);
    // 20 hot orders at 0.9 per try: many lose all 8 tries and are requeued; none is lost or dead-lettered for it.
    expect(result.counts['hot SKU orders APPLIED']).toBe(20);
    expect(result.metrics[ORDER_CREATED]?.counts.Requeued).toBeGreaterThan(0);
    const report = formatReport(result);
    for (const line of [
      /hotSkuConflict +\d+ \(rate 0\.9\)/,
      /rogue messages FAILED +3/,
      /hot SKU orders \(one burst\) +20/,
      /hot SKU orders APPLIED +20/,
      /TransactionConflict cancellations \(injected\) +[1-9]\d*/,
      /dead-lettered by consumer +\d+/,
      /PASS every rogue message .* 3 FAILED \(bigint, set, oversized\)/,
      /PASS contention dead-letters nothing/,
      /Metrics observed \(per topic\)\n +metric +order\.created\n/,
      /MessagesSent +[1-9]\d*\n/,
      /MessagesFailed +3\n/,
      /MessagesApplied +[1-9]\d*\n/,
      /Requeued +[1-9]\d*\n/,
      /ConfirmLatencyMs p50 +\d+ ms\n +ConfirmLatencyMs p95 +\d+ ms\n +ConfirmLatencyMs max +\d+ ms\n/,
      /PASS metrics agree with the tables per topic .* order\.created: 3 moved to FAILED, \d+ dead-lettered, [1-9]\d* confirmed by the consumer, \d+ inbox rows \(\d+ unreported\)/,
      /PASS metrics bound the sends per topic/,
    ]) {
      expect(report).toMatch(line);
    }
  }, 120_000);
});

describe('checkInvariants', () => {
  const rogueId = '01JROGUE00000000000000000A';
  const base: DrillSnapshot = {
    orders: [{ orderId: 'o-1', items: [{ sku: 'A', quantity: 2 }] }],
    outbox: [
      { messageId: 'm-1', aggregateId: 'o-1', status: 'CONFIRMED' },
      {
        messageId: rogueId,
        aggregateId: 'rogue-set',
        status: 'FAILED',
        lastError: 'cannot be sent as stored: InvalidMessageError: payload.tags: a Set is not plain JSON',
      },
    ],
    inbox: [{ messageId: 'm-1', outcome: 'APPLIED' }],
    inventory: [{ sku: 'A', available: 8 }],
    initialStock: new Map([['A', 10]]),
    poisonedOrders: new Set<string>(),
    acknowledgedOrders: new Set(['o-1']),
    hotOrders: new Set(['o-1']),
    rogueMessages: new Map([[rogueId, { kind: 'set', reason: /payload\.tags: a Set is not plain JSON/ }]]),
    deadLetters: [],
  };
  const invariant = (snapshot: DrillSnapshot, prefix: string) =>
    checkInvariants(snapshot).find((result) => result.name.startsWith(prefix));
  const deadLetter = (orderId: string, attributes: Record<string, string>) => ({
    body: JSON.stringify({ messageId: 'm-9', aggregateId: orderId }),
    attributes,
  });

  it('passes a ledger where the stock moved once and the rogue message failed with its reason', () => {
    expect(checkInvariants(base).filter((result) => !result.ok)).toEqual([]);
  });

  it('catches an effect applied twice', () => {
    expect(invariant({ ...base, inventory: [{ sku: 'A', available: 6 }] }, 'stock moved')?.ok).toBe(false);
  });

  it('catches a message left PENDING, and a FAILED one that was not poisoned', () => {
    const pending = {
      ...base,
      outbox: [{ messageId: 'm-1', aggregateId: 'o-1', status: 'PENDING' }, ...base.outbox.slice(1)],
    };
    expect(invariant(pending, 'no message lost')?.ok).toBe(false);
    const failed = {
      ...base,
      outbox: [
        { messageId: 'm-1', aggregateId: 'o-1', status: 'FAILED', lastError: 'x' },
        ...base.outbox.slice(1),
      ],
      inbox: [],
      inventory: [{ sku: 'A', available: 10 }],
    };
    expect(invariant(failed, 'no message lost')?.ok).toBe(false);
  });

  it('catches an acknowledged order that was never written', () => {
    expect(checkInvariants({ ...base, acknowledgedOrders: new Set(['o-1', 'o-2']) })[0]?.ok).toBe(false);
  });

  it('counts a rogue message neither as an order message nor as a lost one', () => {
    expect(invariant(base, 'every acknowledged order')?.detail).toBe('1 orders, 1 messages');
    expect(invariant(base, 'no message lost')?.ok).toBe(true);
  });

  it('catches a rogue message left PENDING, FAILED for another reason, or missing', () => {
    const rogue = (changes: Record<string, unknown>) => ({
      ...base,
      outbox: [base.outbox[0] ?? {}, { ...base.outbox[1], ...changes }],
    });

    const pending = invariant(rogue({ status: 'PENDING', lastError: undefined }), 'every rogue message');
    expect(pending).toMatchObject({ ok: false, detail: expect.stringContaining('is PENDING (no error)') });
    const otherReason = invariant(
      rogue({ lastError: 'InternalError: injected sqsSendError' }),
      'every rogue',
    );
    expect(otherReason?.ok).toBe(false);
    const missing = invariant({ ...base, outbox: base.outbox.slice(0, 1) }, 'every rogue message');
    expect(missing).toMatchObject({ ok: false, detail: expect.stringContaining('is missing') });
  });

  it('catches a dead letter of an order that was not poisoned, such as one that lost to contention', () => {
    const contention = deadLetter('o-1', {
      dead_letter_reason: 'MAX_RECEIVES',
      last_error: 'TransactionConflictError: transaction conflicted with a concurrent write; retry',
    });
    const redriven = deadLetter('o-1', {});

    for (const letter of [contention, redriven]) {
      const result = invariant({ ...base, deadLetters: [letter] }, 'contention dead-letters nothing');
      expect(result).toMatchObject({
        ok: false,
        detail: expect.stringContaining('hot order o-1 dead-lettered'),
      });
    }
  });

  it('accepts a poisoned order in the DLQ, and one dead-lettered after injected faults on every receive', () => {
    const snapshot = {
      ...base,
      poisonedOrders: new Set(['o-2']),
      deadLetters: [
        deadLetter('o-2', { dead_letter_reason: 'POISON', last_error: 'PoisonMessageError: unreadable' }),
        deadLetter('o-1', {
          dead_letter_reason: 'MAX_RECEIVES',
          last_error: 'InjectedFault: injected consumerTransientError: downstream unavailable',
        }),
      ],
    };

    expect(invariant(snapshot, 'contention dead-letters nothing')).toMatchObject({
      ok: true,
      detail:
        '2 dead letters, 1 after injected faults on every receive (1 of them hot-SKU orders), none for contention',
    });
  });
});
