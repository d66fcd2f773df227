import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoConsumerInbox } from '../../../shared/aws/inbox-table.ts';
import { DynamoDeliveryConfirmer } from '../../../shared/aws/outbox-table/delivery-confirmer.ts';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { DynamoOutboxConfirmer } from '../../../shared/aws/outbox-table/outbox-confirmer.ts';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import { consumeMessage } from '../../../shared/consumer/consume-message.ts';
import { applyReceiptEvent } from '../../../shared/lambda/receipts-handler.ts';
import { relayRouting } from '../../../shared/lambda/relay-handler.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { createMessage, type Envelope, parseEnvelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { ReceiptConfirmer } from '../../../shared/receipts/receipt-confirmer.ts';
import { relayMessages } from '../../../shared/relay/relay-messages.ts';
import { decrementPlan, FIXED_NOW, MEMORY_TABLE_SCHEMAS, sqsRecord } from '../../support/factories.ts';

/**
 * An outbox upgraded from one queue per topic to subscribers, as the README's rollout does it: the old queue stays,
 * `drainOnly`, beside the subscribers' queues. What was written before (one row, no subscriber) still goes to the
 * old queue and its consumer, which confirms in the outbox as it always did; what is written after is one delivery
 * per subscriber, confirmed by receipt. Nothing is lost, nothing is applied twice, nothing goes to the wrong queue.
 */

const OLD_QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111111111111/orders-orderEvents';
const INVENTORY_QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111111111111/Orders-Outbox-inventory';
const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

describe('upgrading a topic from one queue to subscribers', () => {
  it('delivers a message written before the upgrade to the old consumer, and one written after to the subscriber, each once', async () => {
    const db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const client = db.asDocumentClient();
    await client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 10 } }));
    const queues = new MemoryQueues(
      { [OLD_QUEUE]: { visibilityTimeoutMs: 30_000 }, [INVENTORY_QUEUE]: { visibilityTimeoutMs: 30_000 } },
      () => FIXED_NOW,
    );
    const write = async (subscribers: Readonly<Record<string, readonly string[]>>) => {
      const message = createMessage({
        topic: 'order.created',
        aggregateId: 'SKU-1',
        payload: { sku: 'SKU-1' },
      });
      await writeWithOutbox(
        { client, outboxTable: 'outbox', subscribers, clock: () => FIXED_NOW },
        { actions: [], messages: [message] },
      );
      return message;
    };
    // Before: the topic has its one queue. The message is written; the relay has not sent it yet (it is being
    // deployed, say).
    const before = await write({});
    // After, with the old queue draining: TOPIC_QUEUES still names it, SUBSCRIPTIONS names the subscriber.
    const after = await write({ 'order.created': ['inventory'] });
    const routing = relayRouting({
      OUTBOX_TABLE: 'outbox',
      TOPIC_QUEUES: JSON.stringify({ 'order.created': OLD_QUEUE }),
      SUBSCRIPTIONS: JSON.stringify({ 'order.created': { inventory: INVENTORY_QUEUE } }),
      AWS_REGION: 'eu-west-1',
    });
    const pending = (await client.send(new ScanCommand({ TableName: 'outbox', ConsistentRead: true })))
      .Items as OutboxItem[];
    expect(pending.map((row) => [row.messageId, row.subscriber])).toEqual(
      expect.arrayContaining([
        [before.messageId, undefined],
        [deliveryIdOf(after.messageId, 'inventory'), 'inventory'],
      ]),
    );
    await relayMessages(
      pending.map((message) => ({ recordId: message.messageId, message })),
      {
        ...routing,
        publisher: queues,
        clock: () => FIXED_NOW,
        store: new DynamoOutboxStore({ client, tableName: 'outbox' }),
      },
    );

    const plan = decrementPlan({
      table: 'inventory',
      guarded: true,
      onConditionFailure: 'REJECTED_OUT_OF_STOCK',
    });
    const consumeAll = async (
      queue: string,
      consumer: Parameters<typeof consumeMessage>[2],
    ): Promise<Envelope[]> => {
      const taken: Envelope[] = [];
      for (const copy of queues.receive(queue, 10)) {
        const message = parseEnvelope(JSON.parse(copy.body));
        taken.push(message);
        await consumeMessage(message, plan, consumer);
        queues.deleteMessage(queue, copy.receiptHandle);
      }
      return taken;
    };
    // The old consumer, as it was: its inbox keyed by message id, confirming in the outbox.
    const oldTaken = await consumeAll(OLD_QUEUE, {
      inbox: new DynamoConsumerInbox({ client, inboxTable: 'inbox' }),
      confirmer: new DynamoOutboxConfirmer({ client, tableName: 'outbox' }),
      clock: () => FIXED_NOW,
    });
    // The subscriber: its inbox keyed per subscriber, confirming by receipt.
    const receipts: string[] = [];
    const newTaken = await consumeAll(INVENTORY_QUEUE, {
      inbox: new DynamoConsumerInbox({ client, inboxTable: 'inbox', subscriber: 'inventory' }),
      confirmer: new ReceiptConfirmer({
        subscriber: 'inventory',
        queue: {
          sendBodies: async (bodies) => {
            receipts.push(...bodies);
            return bodies.map(() => undefined);
          },
        },
        setTimer: (run) => run(),
      }),
      clock: () => FIXED_NOW,
    });
    await applyReceiptEvent(
      { Records: receipts.map((body, n) => ({ ...sqsRecord(), messageId: `receipt-${n}`, body })) },
      {
        confirmer: new DynamoDeliveryConfirmer({
          client,
          tableName: 'outbox',
          subscribers: { inventory: ['order.created'] },
        }),
        logger: quiet,
      },
    );

    // Each message went to one queue only, the one of its time.
    expect(oldTaken.map((message) => message.messageId)).toEqual([before.messageId]);
    expect(newTaken.map((message) => message.messageId)).toEqual([after.messageId]);
    const status = async (key: string) =>
      (
        await client.send(
          new GetCommand({ TableName: 'outbox', Key: { messageId: key }, ConsistentRead: true }),
        )
      ).Item;
    expect(await status(before.messageId)).toMatchObject({
      status: MessageStatus.CONFIRMED,
      outcome: 'APPLIED',
    });
    expect(await status(deliveryIdOf(after.messageId, 'inventory'))).toMatchObject({
      status: MessageStatus.CONFIRMED,
      outcome: 'APPLIED',
    });
    // Applied once each.
    const stock = await client.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
    expect(stock.Item?.available).toBe(8);
  });
});
