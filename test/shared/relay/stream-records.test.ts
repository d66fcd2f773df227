import { describe, expect, it } from 'vitest';
import { readStreamRecord } from '../../../shared/aws/stream-records.ts';
import { UnreadableNumber } from '../../../shared/message/dynamo-numbers.ts';
import { outboxItem, streamRecord, testMessageId } from '../../support/factories.ts';

describe('readStreamRecord', () => {
  it('reads the outbox item of an INSERT of a PENDING message, bookkeeping included', () => {
    const item = outboxItem({
      messageId: testMessageId(3),
      headers: { traceparent: 't' },
      resends: 0,
      refusals: 0,
    });

    expect(readStreamRecord(streamRecord(item))).toEqual({ kind: 'message', message: item });
  });

  it.each([
    ['MODIFY', 'NOT_AN_INSERT'],
    ['REMOVE', 'NOT_AN_INSERT'],
  ] as const)('skips a %s record as %s', (eventName, reason) => {
    expect(readStreamRecord(streamRecord(outboxItem(), { eventName }))).toEqual({ kind: 'skipped', reason });
  });

  it.each(['SENT', 'CONFIRMED', 'FAILED', 'CANCELLED'] as const)(
    'skips an INSERT of a %s message',
    (status) => {
      expect(readStreamRecord(streamRecord(outboxItem({ status })))).toEqual({
        kind: 'skipped',
        reason: 'NOT_PENDING',
      });
    },
  );

  it('skips, with the reason, an item that is not an outbox message', () => {
    const result = readStreamRecord(streamRecord({ orderId: 'order-1' }));

    expect(result).toMatchObject({ kind: 'skipped', reason: 'NOT_AN_OUTBOX_ITEM' });
    expect(result).toHaveProperty('detail', expect.stringContaining('messageId'));
  });

  it('skips a record without a new image (wrong stream view type)', () => {
    expect(readStreamRecord(streamRecord(outboxItem(), { newImage: null }))).toMatchObject({
      kind: 'skipped',
      reason: 'NOT_AN_OUTBOX_ITEM',
    });
  });

  it('reads a PENDING message written without bookkeeping fields with their defaults', () => {
    const {
      attempts: _attempts,
      updatedAt: _updatedAt,
      ...bare
    } = outboxItem({ messageId: testMessageId(4) });

    const result = readStreamRecord(streamRecord(bare));

    expect(result).toMatchObject({
      kind: 'message',
      message: { attempts: 0, resends: 0, messageId: testMessageId(4) },
    });
  });

  it('reports a PENDING message with a negative attempt count as unsendable, naming the field', () => {
    expect(readStreamRecord(streamRecord(outboxItem({ attempts: -1 })))).toMatchObject({
      kind: 'unsendable',
      messageId: outboxItem().messageId,
      attempts: 0,
      reason: expect.stringContaining('attempts'),
    });
  });

  it('reads, instead of throwing, a PENDING message whose payload holds a number JavaScript cannot read', () => {
    const record = streamRecord(outboxItem({ attempts: 2 }));
    const image = record.dynamodb?.NewImage;
    if (image === undefined) throw new Error('no image');
    // Written by another tool: a non-integer N beyond the safe range, which the SDK's default unmarshall throws on.
    image.payload = { M: { total: { N: '1e20' } } };

    const result = readStreamRecord(record);

    // The number stays in its own item as an UnreadableNumber; the relay then fails that message alone.
    expect(result).toMatchObject({ kind: 'message', message: { attempts: 2 } });
    const total =
      result.kind === 'message' ? (result.message.payload as { total: unknown }).total : undefined;
    expect(total).toEqual(new UnreadableNumber('1e20'));
  });
});
