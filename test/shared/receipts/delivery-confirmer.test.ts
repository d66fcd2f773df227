import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoDeliveryConfirmer } from '../../../shared/aws/outbox-table/delivery-confirmer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { CONTROL_TOPICS, ControlTopic } from '../../../shared/message/control-topics.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { historyOf } from '../../../shared/outbox/history.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { applyReceipts, countReceipts } from '../../../shared/receipts/apply-receipts.ts';
import type { Receipt } from '../../../shared/receipts/receipt.ts';
import { MEMORY_TABLE_SCHEMAS, outboxItem, testMessageId } from '../../support/factories.ts';

const APPLIED_AT = '2026-12-02T10:00:05.000Z';
/** The producer's clock, a minute behind the subscriber's: the confirmation takes the producer's time. */
const PRODUCER_NOW = new Date('2026-12-02T09:59:05.000Z');
let db: MemoryDocumentClient;
let confirmer: DynamoDeliveryConfirmer;

/**
 * Stores `subscriber`'s delivery of a message of `topic` in `status`, as the writer does for a topic with
 * subscribers, and gives the message back.
 */
async function put(
  { messageId, topic, status }: Pick<OutboxItem, 'messageId' | 'topic' | 'status'>,
  subscriber = 'inventory',
): Promise<OutboxItem> {
  const message = outboxItem({ messageId, topic, status });
  const delivery = { ...message, messageId: deliveryIdOf(messageId, subscriber), subscriber };
  await db.asDocumentClient().send(new PutCommand({ TableName: 'outbox', Item: delivery }));
  return message;
}

async function stored(
  messageId: string,
  subscriber = 'inventory',
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.asDocumentClient().send(
    new GetCommand({
      TableName: 'outbox',
      Key: { messageId: deliveryIdOf(messageId, subscriber) },
      ConsistentRead: true,
    }),
  );
  return Item;
}

const receipt = (messageId: string, subscriber = 'inventory', outcome = 'RESERVED'): Receipt => ({
  messageId,
  subscriber,
  outcome,
  appliedAt: APPLIED_AT,
});

beforeEach(() => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  confirmer = new DynamoDeliveryConfirmer({
    client: db.asDocumentClient(),
    tableName: 'outbox',
    subscribers: { inventory: ['order.created', 'order.cancelled'], loyalty: ['order.placed'] },
    clock: () => PRODUCER_NOW,
  });
});

describe('DynamoDeliveryConfirmer', () => {
  it('confirms a SENT message with the receipt’s outcome at the producer’s time, and names the subscriber in its history', async () => {
    const message = await put({
      messageId: testMessageId(1),
      topic: 'order.created',
      status: MessageStatus.SENT,
    });

    await expect(confirmer.confirmDelivery(receipt(message.messageId))).resolves.toBe('CONFIRMED');

    const item = await stored(message.messageId);
    expect(item).toMatchObject({
      status: 'CONFIRMED',
      outcome: 'RESERVED',
      confirmedAt: PRODUCER_NOW.toISOString(),
    });
    expect(historyOf(item ?? {}).at(-1)).toMatchObject({ event: 'CONFIRMED', by: 'receipt:inventory' });
  });

  it('takes duplicated and reordered receipts: one confirmation, the first outcome kept', async () => {
    const message = await put({
      messageId: testMessageId(2),
      topic: 'order.created',
      status: MessageStatus.SENT,
    });
    const copies = [receipt(message.messageId), receipt(message.messageId, 'inventory', 'LATE_COPY')];

    const results = await applyReceipts([...copies, copies[0] as Receipt], confirmer);

    expect(countReceipts(results)).toMatchObject({ CONFIRMED: 1, ALREADY_CONFIRMED: 2 });
    expect(await stored(message.messageId)).toMatchObject({ status: 'CONFIRMED', outcome: 'RESERVED' });
  });

  it("refuses a receipt of a subscriber not declared for the message's topic, and changes nothing", async () => {
    const message = await put({
      messageId: testMessageId(3),
      topic: 'order.cancelled',
      status: MessageStatus.SENT,
    });
    // A delivery row of a subscriber not declared for the topic: its receipt still confirms nothing.
    await put(
      { messageId: testMessageId(3), topic: 'order.cancelled', status: MessageStatus.SENT },
      'loyalty',
    );

    await expect(confirmer.confirmDelivery(receipt(message.messageId, 'loyalty'))).resolves.toBe('NOT_FOUND');
    await expect(confirmer.confirmDelivery(receipt(message.messageId, 'billing'))).resolves.toBe('NOT_FOUND');
    await expect(confirmer.confirmDelivery(receipt(message.messageId, 'constructor'))).resolves.toBe(
      'NOT_FOUND',
    );

    expect(await stored(message.messageId)).toMatchObject({ status: 'SENT' });
    expect(await stored(message.messageId, 'loyalty')).toMatchObject({ status: 'SENT' });
  });

  it("confirms only the signing subscriber's delivery, never another subscriber's of the same message", async () => {
    const message = await put(
      { messageId: testMessageId(6), topic: 'order.created', status: MessageStatus.SENT },
      'inventory',
    );
    await put({ messageId: testMessageId(6), topic: 'order.created', status: MessageStatus.SENT }, 'loyalty');
    confirmer = new DynamoDeliveryConfirmer({
      client: db.asDocumentClient(),
      tableName: 'outbox',
      subscribers: { inventory: ['order.created'], loyalty: ['order.created'] },
      clock: () => PRODUCER_NOW,
    });

    await expect(confirmer.confirmDelivery(receipt(message.messageId, 'inventory'))).resolves.toBe(
      'CONFIRMED',
    );

    expect(await stored(message.messageId, 'inventory')).toMatchObject({ status: 'CONFIRMED' });
    expect(await stored(message.messageId, 'loyalty')).toMatchObject({ status: 'SENT' });
  });

  it.each(CONTROL_TOPICS)(
    'confirms a declared subscriber’s delivery of the outbox’s own %s, which no subscription names',
    async (topic) => {
      const control = await put(
        { messageId: testMessageId(7), topic, status: MessageStatus.SENT },
        'loyalty',
      );

      await expect(confirmer.confirmDelivery(receipt(control.messageId, 'loyalty', 'ERASED'))).resolves.toBe(
        'CONFIRMED',
      );
      expect(await stored(control.messageId, 'loyalty')).toMatchObject({
        status: 'CONFIRMED',
        outcome: 'ERASED',
      });
    },
  );

  it('refuses a control receipt of a subscriber the producer does not declare, and of a topic outside both lists', async () => {
    const control = await put(
      { messageId: testMessageId(8), topic: ControlTopic.ERASE, status: MessageStatus.SENT },
      'billing',
    );
    const other = await put(
      { messageId: testMessageId(9), topic: 'order.shipped', status: MessageStatus.SENT },
      'loyalty',
    );

    await expect(confirmer.confirmDelivery(receipt(control.messageId, 'billing'))).resolves.toBe('NOT_FOUND');
    await expect(confirmer.confirmDelivery(receipt(other.messageId, 'loyalty'))).resolves.toBe('NOT_FOUND');
    expect(await stored(control.messageId, 'billing')).toMatchObject({ status: 'SENT' });
    expect(await stored(other.messageId, 'loyalty')).toMatchObject({ status: 'SENT' });
  });

  it('says NOT_FOUND for a receipt of a message the outbox no longer holds', async () => {
    await expect(confirmer.confirmDelivery(receipt(testMessageId(4)))).resolves.toBe('NOT_FOUND');
    expect(await stored(testMessageId(4))).toBeUndefined();
  });

  it('records a late receipt of a cancelled message without leaving CANCELLED', async () => {
    const message = await put({
      messageId: testMessageId(5),
      topic: 'order.created',
      status: MessageStatus.CANCELLED,
    });

    await expect(confirmer.confirmDelivery(receipt(message.messageId))).resolves.toBe('APPLIED_AFTER_CANCEL');
    expect(await stored(message.messageId)).toMatchObject({ status: 'CANCELLED', outcome: 'RESERVED' });
  });
});
