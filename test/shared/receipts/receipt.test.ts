import { describe, expect, it } from 'vitest';
import { InvalidReceiptError } from '../../../shared/errors.ts';
import {
  checkedReceiptBody,
  MAX_RECEIPTS_PER_BODY,
  type Receipt,
  readReceiptBody,
  receiptBodies,
  receiptBody,
  subscriberNameSchema,
} from '../../../shared/receipts/receipt.ts';
import { safeParse } from '../../../shared/validation/safe-parse.ts';
import { testMessageId } from '../../support/factories.ts';

const receipt = (overrides: Partial<Receipt> = {}): Receipt => ({
  messageId: '01JDQ3Z8W7M2K4N6P8R0S2T4V6',
  subscriber: 'inventory',
  outcome: 'APPLIED',
  appliedAt: '2026-12-02T10:00:00.000Z',
  ...overrides,
});

describe('receipt bodies', () => {
  it('carries receipts to the producer unchanged', () => {
    const receipts = [receipt(), receipt({ subscriber: 'loyalty', outcome: 'AWARDED' })];

    expect(readReceiptBody(receiptBody(receipts))).toEqual({ receipts, invalid: [] });
  });

  it('cuts many receipts into bodies of at most 100, in order', () => {
    const receipts = Array.from({ length: 2 * MAX_RECEIPTS_PER_BODY + 1 }, (_, n) =>
      receipt({ messageId: testMessageId(n + 1) }),
    );

    const bodies = receiptBodies(receipts);

    expect(bodies).toHaveLength(3);
    expect(bodies.flatMap((body) => readReceiptBody(body).receipts)).toEqual(receipts);
    expect(receiptBodies(receipts.slice(0, 5), 2)).toHaveLength(3);
  });

  it('refuses to send a receipt the producer could not read, naming the field', () => {
    expect(() => receiptBody([receipt(), receipt({ subscriber: 'Inventory Service' })])).toThrow(
      new InvalidReceiptError(
        'receipts[1].subscriber',
        'must be a lowercase name of at most 40 letters, digits and -, e.g. inventory',
      ),
    );
    expect(() => receiptBody([receipt({ appliedAt: 'yesterday' })])).toThrow(InvalidReceiptError);
    expect(() => receiptBody([])).toThrow(RangeError);
    expect(() => receiptBodies([receipt()], 0)).toThrow(RangeError);
  });

  it('builds the same body from receipts checked already, holding them to the same 1 to 100', () => {
    const receipts = [receipt(), receipt({ subscriber: 'loyalty', outcome: 'AWARDED' })];
    const tooMany = Array.from({ length: MAX_RECEIPTS_PER_BODY + 1 }, (_, n) =>
      receipt({ messageId: testMessageId(n + 1) }),
    );

    expect(checkedReceiptBody(receipts)).toBe(receiptBody(receipts));
    expect(() => checkedReceiptBody([])).toThrow(RangeError);
    expect(() => checkedReceiptBody(tooMany)).toThrow(RangeError);
  });

  it('reads the good receipts of a body with a bad one, and names the bad one', () => {
    const body = JSON.stringify({
      schemaVersion: 1,
      receipts: [receipt(), { ...receipt(), messageId: 'not-a-ulid' }, receipt({ subscriber: 'loyalty' })],
    });

    const read = readReceiptBody(body);

    expect(read.receipts.map((r) => r.subscriber)).toEqual(['inventory', 'loyalty']);
    expect(read.invalid.map((error) => error.path)).toEqual(['receipts[1].messageId']);
    expect(read.invalid[0]?.message).toBe('receipt receipts[1].messageId: must be a ULID');
  });

  it('reads a body from a newer sender, ignoring the fields it does not know', () => {
    const body = JSON.stringify({
      schemaVersion: 2,
      region: 'eu-west-1',
      receipts: [{ ...receipt(), retries: 3 }],
    });

    expect(readReceiptBody(body).receipts).toEqual([receipt()]);
  });

  it.each([
    ['not JSON', '{receipts', 'body'],
    ['not an object', '[]', 'body'],
    ['without receipts', JSON.stringify({ schemaVersion: 1, receipts: [] }), 'receipts'],
    ['without a version', JSON.stringify({ receipts: [receipt()] }), 'schemaVersion'],
  ])('refuses a body %s with an InvalidReceiptError naming where', (_, body, path) => {
    try {
      readReceiptBody(body);
      expect.unreachable('the body was read');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidReceiptError);
      expect((error as InvalidReceiptError).path).toBe(path);
    }
  });

  it.each([
    ['inventory', true],
    ['loyalty-points', true],
    ['a', true],
    ['a'.repeat(40), true],
    ['a'.repeat(41), false],
    ['Inventory', false],
    ['1inventory', false],
    ['inventory#2', false],
    ['', false],
  ])('takes %j as a subscriber name: %s', (name, valid) => {
    expect(safeParse(subscriberNameSchema, name).success).toBe(valid);
  });
});
