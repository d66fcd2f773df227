import { describe, expect, it } from 'vitest';
import { outboxItemFromStreamRecord } from '../../../shared/relay/stream-records.ts';
import { outboxItem, streamRecord, testMessageId } from '../../support/factories.ts';

describe('outboxItemFromStreamRecord', () => {
  it('reads the outbox item of an INSERT of a PENDING message, bookkeeping included', () => {
    const item = outboxItem({ messageId: testMessageId(3), headers: { traceparent: 't' } });

    expect(outboxItemFromStreamRecord(streamRecord(item))).toEqual(item);
  });

  it.each([
    ['MODIFY', 'NOT_AN_INSERT'],
    ['REMOVE', 'NOT_AN_INSERT'],
  ] as const)('skips a %s record as %s', (eventName, skipped) => {
    expect(outboxItemFromStreamRecord(streamRecord(outboxItem(), { eventName }))).toEqual({ skipped });
  });

  it.each(['SENT', 'CONFIRMED', 'FAILED', 'CANCELLED'] as const)(
    'skips an INSERT of a %s message',
    (status) => {
      expect(outboxItemFromStreamRecord(streamRecord(outboxItem({ status })))).toEqual({
        skipped: 'NOT_PENDING',
      });
    },
  );

  it('skips, with the reason, an item that is not an outbox message', () => {
    const result = outboxItemFromStreamRecord(streamRecord({ orderId: 'order-1' }));

    expect(result).toMatchObject({ skipped: 'NOT_AN_OUTBOX_ITEM' });
    expect(result).toHaveProperty('detail', expect.stringContaining('messageId'));
  });

  it('skips a record without a new image (wrong stream view type)', () => {
    expect(outboxItemFromStreamRecord(streamRecord(outboxItem(), { newImage: null }))).toMatchObject({
      skipped: 'NOT_AN_OUTBOX_ITEM',
    });
  });

  it('skips a message with a negative attempt count', () => {
    expect(outboxItemFromStreamRecord(streamRecord(outboxItem({ attempts: -1 })))).toMatchObject({
      skipped: 'NOT_AN_OUTBOX_ITEM',
    });
  });
});
