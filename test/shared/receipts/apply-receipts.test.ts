import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConfirmOutcome } from '../../../shared/outbox/outbox-store.ts';
import {
  applyReceipts,
  countReceipts,
  type DeliveryConfirmer,
} from '../../../shared/receipts/apply-receipts.ts';
import type { Receipt } from '../../../shared/receipts/receipt.ts';

const RUNS = { numRuns: 300, seed: 20_261_202 } as const;
const SUBSCRIBERS = ['inventory', 'loyalty'] as const;
const MESSAGES = ['01JDQ3Z8W7M2K4N6P8R0S2T4V0', '01JDQ3Z8W7M2K4N6P8R0S2T4V1', '01JDQ3Z8W7M2K4N6P8R0S2T4V2'];

/**
 * The outbox's deliveries as the conditional confirm sees them: SENT until one confirm succeeds, which records
 * the receipt's outcome and time; a confirm of a confirmed delivery changes nothing. It yields between the read
 * and the write, so concurrent copies of one receipt really interleave.
 */
class DeliveriesModel implements DeliveryConfirmer {
  readonly confirmed = new Map<string, { outcome: string; appliedAt: string }>();
  readonly #known: Set<string>;
  readonly #failOnce = new Set<string>();

  constructor(known: readonly string[]) {
    this.#known = new Set(known);
  }

  failNextFor(key: string): void {
    this.#failOnce.add(key);
  }

  async confirmDelivery(receipt: Receipt): Promise<ConfirmOutcome> {
    const key = `${receipt.subscriber}/${receipt.messageId}`;
    if (this.#failOnce.delete(key)) throw new Error(`throttled: ${key}`);
    if (!this.#known.has(key)) return 'NOT_FOUND';
    const seen = this.confirmed.has(key);
    await Promise.resolve();
    // The condition is evaluated at the write, as DynamoDB does: a copy that read "not confirmed" still loses.
    if (seen || this.confirmed.has(key)) return 'ALREADY_CONFIRMED';
    this.confirmed.set(key, { outcome: receipt.outcome, appliedAt: receipt.appliedAt });
    return 'CONFIRMED';
  }
}

const deliveryKeys = SUBSCRIBERS.flatMap((subscriber) => MESSAGES.map((id) => `${subscriber}/${id}`));
const receiptOf = (key: string, copy: number): Receipt => {
  const [subscriber, messageId] = key.split('/') as [string, string];
  return { messageId, subscriber, outcome: `APPLIED`, appliedAt: `2026-12-02T10:00:0${copy % 10}.000Z` };
};

describe('applyReceipts', () => {
  it('confirms each delivery once however its receipts are duplicated, reordered or lost', async () => {
    // Per delivery: how many copies of its receipt arrive (0 = lost), then all copies in a random order.
    const copiesPerDelivery = fc.array(fc.nat({ max: 3 }), {
      minLength: deliveryKeys.length,
      maxLength: deliveryKeys.length,
    });
    const arrivals = copiesPerDelivery.chain((copies) => {
      const receipts = deliveryKeys.flatMap((key, i) =>
        Array.from({ length: copies[i] as number }, (_, copy) => receiptOf(key, copy)),
      );
      return fc.tuple(fc.constant(copies), fc.shuffledSubarray(receipts, { minLength: receipts.length }));
    });
    await fc.assert(
      fc.asyncProperty(arrivals, fc.integer({ min: 1, max: 4 }), async ([copies, receipts], concurrency) => {
        const outbox = new DeliveriesModel(deliveryKeys);

        const results = await applyReceipts(receipts, outbox, concurrency);

        const counts = countReceipts(results);
        const delivered = deliveryKeys.filter((_, i) => (copies[i] as number) > 0);
        expect(counts.CONFIRMED).toBe(delivered.length);
        expect(counts.ALREADY_CONFIRMED).toBe(receipts.length - delivered.length);
        expect([...outbox.confirmed.keys()].sort()).toEqual([...delivered].sort());
        // A lost receipt leaves its delivery unconfirmed (the sweeper resends it to that subscriber alone).
        expect(results.map((r) => r.receipt)).toEqual(receipts);
      }),
      RUNS,
    );
  });

  it("confirms one subscriber's delivery without touching another's", async () => {
    const outbox = new DeliveriesModel(deliveryKeys);
    const [first] = MESSAGES as [string];

    await applyReceipts(
      [
        {
          messageId: first,
          subscriber: 'loyalty',
          outcome: 'AWARDED',
          appliedAt: '2026-12-02T10:00:00.000Z',
        },
      ],
      outbox,
    );

    expect([...outbox.confirmed]).toEqual([
      [`loyalty/${first}`, { outcome: 'AWARDED', appliedAt: '2026-12-02T10:00:00.000Z' }],
    ]);
  });

  it('reports a receipt whose apply failed with its error, and still applies the others', async () => {
    const outbox = new DeliveriesModel(deliveryKeys);
    const receipts = deliveryKeys.slice(0, 3).map((key) => receiptOf(key, 0));
    outbox.failNextFor(deliveryKeys[1] as string);

    const results = await applyReceipts(receipts, outbox);

    expect(results.map((r) => ('outcome' in r ? r.outcome : String((r.error as Error).message)))).toEqual([
      'CONFIRMED',
      `throttled: ${deliveryKeys[1]}`,
      'CONFIRMED',
    ]);
    expect(countReceipts(results)).toMatchObject({ CONFIRMED: 2, ERROR: 1 });
  });

  it('says NOT_FOUND for a receipt of a subscriber the outbox does not deliver to', async () => {
    const outbox = new DeliveriesModel(deliveryKeys);

    const results = await applyReceipts(
      [
        {
          messageId: MESSAGES[0] as string,
          subscriber: 'billing',
          outcome: 'APPLIED',
          appliedAt: '2026-12-02T10:00:00.000Z',
        },
      ],
      outbox,
    );

    expect(results).toMatchObject([{ outcome: 'NOT_FOUND' }]);
    expect(outbox.confirmed.size).toBe(0);
  });

  it('refuses a concurrency that is not a positive integer', async () => {
    await expect(applyReceipts([], new DeliveriesModel([]), 0)).rejects.toThrow(RangeError);
  });
});
