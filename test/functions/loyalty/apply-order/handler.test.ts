import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/loyalty/apply-order/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { envelope, lambdaContext, sqsRecord, testMessageId } from '../../../support/factories.ts';
import {
  CONSUMER_ENV,
  cancelled,
  created,
  DLQ,
  INBOX,
  LOYALTY,
  type LoyaltyTables,
  loyaltyTables,
} from '../loyalty-tables.ts';

let tables: LoyaltyTables;

beforeAll(() => {
  tables = loyaltyTables();
});

beforeEach(() => {
  tables.reset();
});

afterAll(() => {
  tables.restore();
});

/** One invocation of the loyalty consumer, as deployed, on a batch of messages. */
function deliver(...messages: ReturnType<typeof envelope>[]) {
  // Each delivery is a record of its own (SQS gives a redelivered copy a new receipt).
  const records = messages.map((message, index) => sqsRecord(message, { messageId: `sqs-${index}` }));
  return handler.withEnv(CONSUMER_ENV)({ Records: records }, lambdaContext());
}

const LINES = [
  { sku: 'SKU-1', quantity: 2 },
  { sku: 'SKU-2', quantity: 1 },
];

describe('the loyalty consumer', () => {
  it.each(['LOYALTY_TABLE', 'INBOX_TABLE', 'SOURCE_QUEUE_URL', 'DEAD_LETTER_QUEUE_URL', 'MAX_RECEIVE_COUNT'])(
    'fails loudly at start with a ConfigError naming %s',
    (setting) => {
      const incomplete = { ...CONSUMER_ENV, [setting]: undefined };

      expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
      expect(() => handler.withEnv(incomplete)).toThrow(`${setting} is not set`);
    },
  );

  it('awards the points in its own table, records the inbox row keyed for loyalty, and sends the producer a receipt', async () => {
    const message = created(1, 'c-1', LINES);

    const response = await deliver(message);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(tables.points()).toEqual({ 'c-1': 30 });
    expect(tables.inbox()).toEqual({ [`${message.messageId}#loyalty`]: 'AWARDED' });
    expect(tables.receipts()).toEqual([
      { messageId: message.messageId, subscriber: 'loyalty', outcome: 'AWARDED' },
    ]);
    expect(tables.awards()).toEqual({
      'order-1': expect.objectContaining({ customerId: 'c-1', points: 30 }),
    });
  });

  it('awards once on a duplicate delivery, in one batch or the next, and answers each copy with a receipt', async () => {
    const message = created(1, 'c-1', LINES);

    await deliver(message, message);
    await deliver(message);

    expect(tables.points()).toEqual({ 'c-1': 30 });
    expect(tables.receipts()).toEqual(
      [1, 2, 3].map(() => ({ messageId: message.messageId, subscriber: 'loyalty', outcome: 'AWARDED' })),
    );
  });

  it('revokes exactly what the order awarded when it is cancelled, once however often the cancellation comes', async () => {
    await deliver(created(1, 'c-1', LINES), created(2, 'c-1', [{ sku: 'SKU-3', quantity: 4 }]));

    await deliver(cancelled(1, 'c-1', LINES));
    await deliver(cancelled(1, 'c-1', LINES));

    expect(tables.points()).toEqual({ 'c-1': 40 });
    expect(tables.receipts().map((receipt) => receipt.outcome)).toEqual([
      'AWARDED',
      'AWARDED',
      'REVOKED',
      'REVOKED',
    ]);
  });

  it('answers the cancellation of an order it never saw with NOTHING_TO_REVOKE, and no balance changes', async () => {
    await deliver(created(1, 'c-1', LINES));

    await deliver(cancelled(2, 'c-1', LINES), cancelled(3, 'c-2', LINES));

    expect(tables.points()).toEqual({ 'c-1': 30 });
    expect(tables.receipts().slice(1)).toEqual([
      { messageId: testMessageId(1_002), subscriber: 'loyalty', outcome: 'NOTHING_TO_REVOKE' },
      { messageId: testMessageId(1_003), subscriber: 'loyalty', outcome: 'NOTHING_TO_REVOKE' },
    ]);
  });

  it('answers a second cancellation of one order (another message) with NOTHING_TO_REVOKE', async () => {
    await deliver(created(1, 'c-1', LINES), created(2, 'c-1', LINES));
    await deliver(cancelled(1, 'c-1', LINES));

    await deliver({ ...cancelled(1, 'c-1', LINES), messageId: testMessageId(5_000) });

    expect(tables.points()).toEqual({ 'c-1': 30 });
    expect(tables.receipts().at(-1)).toMatchObject({
      messageId: testMessageId(5_000),
      outcome: 'NOTHING_TO_REVOKE',
    });
  });

  it("applies an order's cancellation delivered before its creation once the creation is applied, on the ordered topic", async () => {
    const ordered = { orderKey: 'order#order-1' };
    const creation = { ...created(1, 'c-1', LINES), ...ordered, seq: 1 };
    const cancellation = { ...cancelled(1, 'c-1', LINES), ...ordered, seq: 2 };

    await deliver(cancellation);
    const parked = tables.points();
    await deliver(creation);

    expect(parked).toEqual({});
    expect(tables.points()).toEqual({ 'c-1': 0 });
    expect(tables.receipts().map(({ messageId, outcome }) => [messageId, outcome])).toEqual([
      [creation.messageId, 'AWARDED'],
      [cancellation.messageId, 'REVOKED'],
    ]);
  });

  it('dead-letters a message it cannot read as POISON, with no inbox row, no receipt and no points', async () => {
    const withoutCustomer = envelope({
      messageId: testMessageId(9),
      topic: 'order.cancelled',
      payload: { orderId: 'order-1', items: LINES },
    });

    const response = await deliver(
      withoutCustomer,
      envelope({ messageId: testMessageId(10), topic: 'order.paid' }),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(tables.deadLetters().map(({ queue, reason }) => [queue, reason])).toEqual([
      [DLQ, 'POISON'],
      [DLQ, 'POISON'],
    ]);
    expect(tables.memory.items(INBOX)).toEqual([]);
    expect(tables.memory.items(LOYALTY)).toEqual([]);
    expect(tables.receipts()).toEqual([]);
  });
});
