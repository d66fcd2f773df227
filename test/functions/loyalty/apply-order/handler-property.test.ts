import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/loyalty/apply-order/handler.ts';
import { lambdaContext, sqsRecord, testMessageId } from '../../../support/factories.ts';
import {
  CONSUMER_ENV,
  cancelled,
  created,
  type Line,
  type LoyaltyTables,
  loyaltyTables,
} from '../loyalty-tables.ts';

/**
 * The loyalty consumer, as deployed, fed random deliveries of a few customers' orders: creations and
 * cancellations (of orders it saw and of orders it never did), each delivered once or several times, sometimes a
 * second message for one order, in batches of which two run at once on tables where concurrent transactions on
 * one item conflict. Whatever the interleaving: no batch fails, every balance is exactly what its customer's
 * unrevoked awards add up to (so a revocation took back exactly what its order awarded) and never below zero, an
 * order awards at most once and is revoked at most once, and each delivery is answered with the outcome its
 * message recorded.
 */

const RUNS = { numRuns: 40, seed: 20_260_311 } as const;
const CUSTOMERS = ['c-1', 'c-2'];

/** An order the generator may deliver: its number, customer and lines. */
interface PlannedOrder {
  readonly n: number;
  readonly customerId: string;
  readonly items: readonly Line[];
}

const orders = fc.uniqueArray(
  fc.record({
    n: fc.integer({ min: 1, max: 8 }),
    customerId: fc.constantFrom(...CUSTOMERS),
    items: fc.array(
      fc.record({ sku: fc.constantFrom('SKU-1', 'SKU-2'), quantity: fc.integer({ min: 1, max: 5 }) }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
  { minLength: 1, maxLength: 5, selector: (order) => order.n },
);

type Delivery = ReturnType<typeof created>;

/** The messages that may be delivered for some orders: each creation and cancellation, and copies under new ids. */
const deliveries = orders.chain((planned: PlannedOrder[]) => {
  const messages: Delivery[] = planned.flatMap(({ n, customerId, items }) => [
    created(n, customerId, items),
    cancelled(n, customerId, items),
    // Another message for the same order (a producer retried with a new id).
    { ...created(n, customerId, items), messageId: testMessageId(2_000 + n) },
    { ...cancelled(n, customerId, items), messageId: testMessageId(3_000 + n) },
  ]);
  return fc.tuple(
    fc.constant(planned),
    fc.array(fc.array(fc.constantFrom(...messages), { minLength: 1, maxLength: 6 }), {
      minLength: 1,
      maxLength: 4,
    }),
  );
});

let tables: LoyaltyTables;
const consume = handler.withEnv(CONSUMER_ENV);

beforeAll(() => {
  tables = loyaltyTables({ contention: 1 });
});

afterAll(() => {
  tables.restore();
});

function pointsOf(items: readonly Line[]): number {
  return items.reduce((sum, { quantity }) => sum + quantity * 10, 0);
}

describe('the loyalty consumer, on random deliveries', () => {
  it('keeps every balance equal to its unrevoked awards, awards and revokes each order at most once, and answers every delivery', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(deliveries, async ([planned, batches]) => {
        tables.reset();

        // Two batches at a time, like two consumer instances reading one queue.
        for (let index = 0; index < batches.length; index += 2) {
          const running = batches.slice(index, index + 2).map((messages, b) =>
            consume(
              {
                Records: messages.map((message, r) =>
                  sqsRecord(message, { messageId: `sqs-${index + b}-${r}` }),
                ),
              },
              lambdaContext(),
            ),
          );
          for (const response of await Promise.all(running))
            expect(response).toEqual({ batchItemFailures: [] });
        }

        const awards = tables.awards();
        const balances = tables.points();
        for (const customerId of CUSTOMERS) {
          const unrevoked = Object.values(awards)
            .filter((award) => award.customerId === customerId && award.revokedAt === undefined)
            .reduce((sum, award) => sum + Number(award.points), 0);
          const balance = balances[customerId];
          if (balance === undefined) expect(unrevoked).toBe(0);
          else expect(balance).toBe(unrevoked);
          expect(Number(balance ?? 0)).toBeGreaterThanOrEqual(0);
        }

        const delivered = batches.flat();
        const inbox = tables.inbox();
        for (const { n, customerId, items } of planned) {
          const ofOrder = delivered.filter(
            (message) => (message.payload as { orderId: string }).orderId === `order-${n}`,
          );
          const outcomes = ofOrder.map((message) => inbox[`${message.messageId}#loyalty`]);
          const creations = ofOrder.filter((message) => message.topic === 'order.created');
          // An order awards once, what its lines are worth, to its customer; only once it was created here.
          expect(awards[`order-${n}`]).toEqual(
            creations.length === 0
              ? undefined
              : expect.objectContaining({ customerId, points: pointsOf(items) }),
          );
          const awarded = new Set(
            ofOrder.filter((_, i) => outcomes[i] === 'AWARDED').map((m) => m.messageId),
          );
          const revoked = new Set(
            ofOrder.filter((_, i) => outcomes[i] === 'REVOKED').map((m) => m.messageId),
          );
          expect(awarded.size).toBe(creations.length === 0 ? 0 : 1);
          expect(revoked.size).toBe(awards[`order-${n}`]?.revokedAt === undefined ? 0 : 1);
          for (const outcome of outcomes) seen.add(String(outcome));
        }

        // Every delivery is answered, each with the outcome its message recorded the first time.
        const receipts = tables.receipts();
        expect(receipts).toHaveLength(delivered.length);
        for (const receipt of receipts) expect(receipt.outcome).toBe(inbox[`${receipt.messageId}#loyalty`]);
      }),
      RUNS,
    );
    // The runs reached every outcome the consumer records.
    expect([...seen].sort()).toEqual(['ALREADY_AWARDED', 'AWARDED', 'NOTHING_TO_REVOKE', 'REVOKED']);
  }, 60_000);
});
