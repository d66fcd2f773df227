import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/loyalty/apply-order/handler.ts';
import { lambdaContext, sqsRecord } from '../../../support/factories.ts';
import {
  CONSUMER_ENV,
  cancelled,
  created,
  type Line,
  type LoyaltyTables,
  loyaltyTables,
} from '../loyalty-tables.ts';

/**
 * The loyalty consumer under concurrency, on tables where a transaction stays in flight for a few turns of the
 * event loop and one that touches an item another has in flight is cancelled with TransactionConflict, as
 * DynamoDB does: the records of one customer in a batch never race (their conflict key), and two invocations
 * applying one customer's orders at once do race, and every award and revocation still lands once.
 */

let tables: LoyaltyTables;
const consume = handler.withEnv(CONSUMER_ENV);

beforeAll(() => {
  tables = loyaltyTables({ contention: 3 });
});

beforeEach(() => {
  tables.reset();
});

afterAll(() => {
  tables.restore();
});

function batch(prefix: string, messages: ReturnType<typeof created>[]) {
  return {
    Records: messages.map((message, index) => sqsRecord(message, { messageId: `${prefix}-${index}` })),
  };
}

const one = (quantity: number): Line[] => [{ sku: 'SKU-1', quantity }];

describe('the loyalty consumer, concurrently', () => {
  it("applies one customer's orders in a batch one after another, and other customers' beside them", async () => {
    const response = await consume(
      batch('a', [
        created(1, 'c-1', one(1)),
        created(2, 'c-2', one(2)),
        created(3, 'c-1', one(3)),
        created(4, 'c-1', one(4)),
      ]),
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(tables.conflicts()).toBe(0);
    expect(tables.points()).toEqual({ 'c-1': 80, 'c-2': 20 });
  });

  it("adds up two invocations awarding and revoking one customer's orders at once, each once", async () => {
    await consume(batch('earlier', [created(9, 'c-1', one(7))]), lambdaContext());

    const responses = await Promise.all([
      consume(
        batch('a', [created(1, 'c-1', one(1)), created(2, 'c-1', one(2)), created(3, 'c-1', one(3))]),
        lambdaContext(),
      ),
      consume(
        batch('b', [created(4, 'c-1', one(4)), cancelled(9, 'c-1', one(7)), created(5, 'c-1', one(5))]),
        lambdaContext(),
      ),
    ]);

    expect(responses).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    // The two invocations did race on the customer's row, and the transactions that lost were retried.
    expect(tables.conflicts()).toBeGreaterThan(0);
    expect(tables.points()).toEqual({ 'c-1': 150 });
    expect(
      tables
        .receipts()
        .map((receipt) => receipt.outcome)
        .sort(),
    ).toEqual([...Array(6).fill('AWARDED'), 'REVOKED']);
  });
});
