import { describe, expect, it } from 'vitest';
import { uniformRates } from '../../../infra/drill/faults.ts';
import { checkInvariants } from '../../../infra/drill/invariants.ts';
import { runMemoryDrill } from '../../../infra/drill/memory-drill.ts';

describe('the scale drill on in-memory adapters (small size)', () => {
  it('keeps every invariant with 10 % faults at every hop', async () => {
    const result = await runMemoryDrill(
      { orders: 500, rates: uniformRates(0.1), poisonRate: 0.02, seed: 5, skus: 20, initialStock: 120 },
      () => {},
    );

    for (const invariant of result.invariants)
      expect(invariant, invariant.detail).toMatchObject({ ok: true });
    expect(result.injected.sqsSendError).toBeGreaterThan(0);
    expect(result.injected.relayCrashAfterSend).toBeGreaterThan(0);
    expect(result.injected.droppedStreamRecord).toBeGreaterThan(0);
    expect(result.duplicatesSuppressed).toBeGreaterThan(0);
  }, 120_000);
});

describe('checkInvariants', () => {
  const base = {
    orders: [{ orderId: 'o-1', items: [{ sku: 'A', quantity: 2 }] }],
    outbox: [{ messageId: 'm-1', aggregateId: 'o-1', status: 'CONFIRMED' }],
    inbox: [{ messageId: 'm-1', outcome: 'APPLIED' }],
    inventory: [{ sku: 'A', available: 8 }],
    initialStock: new Map([['A', 10]]),
    poisonedOrders: new Set<string>(),
    acknowledgedOrders: new Set(['o-1']),
  };

  it('passes a ledger where the stock moved once', () => {
    expect(checkInvariants(base).every((result) => result.ok)).toBe(true);
  });

  it('catches an effect applied twice', () => {
    const results = checkInvariants({ ...base, inventory: [{ sku: 'A', available: 6 }] });
    expect(results.find((result) => result.name.startsWith('stock moved'))?.ok).toBe(false);
  });

  it('catches a message left PENDING, and a FAILED one that was not poisoned', () => {
    const pending = checkInvariants({
      ...base,
      outbox: [{ messageId: 'm-1', aggregateId: 'o-1', status: 'PENDING' }],
    });
    expect(pending.find((result) => result.name.startsWith('no message lost'))?.ok).toBe(false);
    const failed = checkInvariants({
      ...base,
      outbox: [{ messageId: 'm-1', aggregateId: 'o-1', status: 'FAILED', lastError: 'x' }],
      inbox: [],
      inventory: [{ sku: 'A', available: 10 }],
    });
    expect(failed.find((result) => result.name.startsWith('no message lost'))?.ok).toBe(false);
  });

  it('catches an acknowledged order that was never written', () => {
    const results = checkInvariants({ ...base, acknowledgedOrders: new Set(['o-1', 'o-2']) });
    expect(results[0]?.ok).toBe(false);
  });
});
