import { describe, expect, it } from 'vitest';
import { confirmLatency, latencyRatio } from '../../../infra/dev/drill/confirm-latency.ts';
import { OutboxIndex } from '../../../infra/dev/drill/drill-snapshot.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1_000).toISOString();

/** A delivery of order `orderId`'s create to `subscriber`, written at `written` s and confirmed `after` s later. */
function delivery(
  orderId: string,
  subscriber: string,
  { written, after, status = 'CONFIRMED' }: { written: number; after: number; status?: string },
) {
  return {
    messageId: `m-${orderId}#${subscriber}`,
    subscriber,
    topic: 'order.created',
    aggregateId: orderId,
    status,
    createdAt: at(written),
    confirmedAt: at(written + after),
  };
}

describe('confirmLatency', () => {
  const stop = { stoppedAt: T0 + 10_000, restartedAt: T0 + 20_000 };

  it("measures each subscriber's write → CONFIRMED, apart for the orders written during the stop and outside it", () => {
    const index = new OutboxIndex(
      [
        delivery('o-1', 'inventory', { written: 0, after: 2 }),
        delivery('o-1', 'loyalty', { written: 0, after: 3 }),
        delivery('o-2', 'inventory', { written: 12, after: 2 }),
        delivery('o-2', 'loyalty', { written: 12, after: 30 }),
        delivery('o-3', 'inventory', { written: 25, after: 4 }),
        delivery('o-3', 'loyalty', { written: 25, after: 4, status: 'SENT' }),
      ],
      new Map(),
    );

    const latency = confirmLatency(index, stop, new Set());

    expect(latency.inventory).toEqual({
      all: { count: 3, mean: (2_000 + 2_000 + 4_000) / 3, p50: 2_000, p95: 4_000 },
      duringStop: { count: 1, mean: 2_000, p50: 2_000, p95: 2_000 },
      outsideStop: { count: 2, mean: 3_000, p50: 2_000, p95: 4_000 },
    });
    // An unconfirmed delivery has no latency.
    expect(latency.loyalty.all.count).toBe(2);
    expect(latency.loyalty.duringStop.p50).toBe(30_000);
  });

  it("leaves the burst's orders out of the comparison, not out of the whole", () => {
    const index = new OutboxIndex([delivery('hot-1', 'inventory', { written: 12, after: 50 })], new Map());

    const latency = confirmLatency(index, stop, new Set(['hot-1']));

    expect(latency.inventory.all.count).toBe(1);
    expect(latency.inventory.duringStop).toEqual({ count: 0 });
  });
});

describe('latencyRatio', () => {
  it('divides during by outside, and has none without both or for an outside of zero', () => {
    expect(latencyRatio(3_000, 2_000)).toBe(1.5);
    expect(latencyRatio(undefined, 2_000)).toBeUndefined();
    expect(latencyRatio(3_000, 0)).toBeUndefined();
  });
});
