import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoConsumerInbox } from '../../../shared/aws/inbox-table.ts';
import { DynamoDeliveryConfirmer } from '../../../shared/aws/outbox-table/delivery-confirmer.ts';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { consumeMessage } from '../../../shared/consumer/consume-message.ts';
import { applyReceiptEvent } from '../../../shared/lambda/receipts-handler.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { parseEnvelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { ReceiptConfirmer, type ReceiptQueue } from '../../../shared/receipts/receipt-confirmer.ts';
import { DEFAULT_SWEEPER_SETTINGS, sweep } from '../../../shared/sweeper/sweep.ts';
import {
  decrementPlan,
  FIXED_NOW,
  MEMORY_TABLE_SCHEMAS,
  outboxItem,
  sqsRecord,
  testMessageId,
} from '../../support/factories.ts';

const QUEUE = 'memory://inventory-order-created';
const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

/** A receipt queue whose first `lose` bodies vanish in transit (SQS took them; the producer never sees them). */
class LossyReceiptQueue implements ReceiptQueue {
  readonly arrived: string[] = [];
  #lose: number;

  constructor(lose: number) {
    this.#lose = lose;
  }

  async sendBodies(bodies: readonly string[]): Promise<readonly (string | undefined)[]> {
    for (const body of bodies) {
      if (this.#lose > 0) this.#lose -= 1;
      else this.arrived.push(body);
    }
    return bodies.map(() => undefined);
  }
}

describe('receipts, end to end on the in-memory backend', () => {
  it('a lost receipt costs one redelivery: the sweeper resends, the inbox dedupes, the second receipt confirms', async () => {
    const db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const client = db.asDocumentClient();
    const queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, () => FIXED_NOW);
    await client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
    const message = outboxItem({ messageId: testMessageId(1), topic: 'order.created', aggregateId: 'SKU-1' });
    // As the relay leaves it: sent, its confirmation deadline passed without a confirmation.
    const overdue = new Date(FIXED_NOW.getTime() - 1_000).toISOString();
    await client.send(
      new PutCommand({
        TableName: 'outbox',
        // Inventory's delivery of it, as the writer stores one for a topic with subscribers.
        Item: {
          ...message,
          messageId: deliveryIdOf(message.messageId, 'inventory'),
          subscriber: 'inventory',
          status: MessageStatus.SENT,
          attempts: 1,
          nextAttemptAt: overdue,
          confirmBy: overdue,
        },
      }),
    );
    const plan = decrementPlan({
      table: 'inventory',
      guarded: true,
      onConditionFailure: 'REJECTED_OUT_OF_STOCK',
    });
    const receipts = new LossyReceiptQueue(1);
    const consumer = {
      inbox: new DynamoConsumerInbox({ client, inboxTable: 'inbox', subscriber: 'inventory' }),
      confirmer: new ReceiptConfirmer({ subscriber: 'inventory', queue: receipts, setTimer: (run) => run() }),
      clock: () => FIXED_NOW,
    };
    const producer = new DynamoDeliveryConfirmer({
      client,
      tableName: 'outbox',
      subscribers: { inventory: ['order.created'] },
    });
    const applyArrived = async () => {
      const bodies = receipts.arrived.splice(0);
      await applyReceiptEvent(
        { Records: bodies.map((body, n) => ({ ...sqsRecord(), messageId: `receipt-${n}`, body })) },
        { confirmer: producer, logger: quiet },
      );
    };
    const status = async () =>
      (
        await client.send(
          new GetCommand({
            TableName: 'outbox',
            Key: { messageId: deliveryIdOf(message.messageId, 'inventory') },
            ConsistentRead: true,
          }),
        )
      ).Item?.status;

    // The first delivery: applied, its receipt lost.
    const first = await consumeMessage(message, plan, consumer);
    await applyArrived();
    expect(first).toMatchObject({ kind: 'APPLIED', confirmation: 'RECEIPT_SENT' });
    expect(await status()).toBe(MessageStatus.SENT);

    // The sweeper never reads the subscriber's inbox: past the deadline it resends.
    let rounds = 0;
    const report = await sweep({
      publisher: queues,
      store: new DynamoOutboxStore({ client, tableName: 'outbox' }),
      queueFor: () => QUEUE,
      retryPolicyFor: () => ({ baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 60_000, maxAttempts: 4 }),
      clock: () => FIXED_NOW,
      random: () => 0.5,
      owner: 'sweeper-a',
      deliveryCheckFor: () => undefined,
      remainingMs: () => (rounds++ < 1 ? 60_000 : 0),
      sleep: async () => {},
      settings: { ...DEFAULT_SWEEPER_SETTINGS, subscribers: ['inventory'] },
    });
    expect(report).toMatchObject({ requeued: 1, sent: 1 });

    // The copy is a duplicate to the inbox; its receipt arrives and confirms the message.
    const [copy] = queues.receive(QUEUE, 10);
    const second = await consumeMessage(parseEnvelope(JSON.parse(copy?.body ?? '')), plan, consumer);
    await applyArrived();

    expect(second).toMatchObject({ kind: 'DUPLICATE', outcome: 'APPLIED', confirmation: 'RECEIPT_SENT' });
    expect(await status()).toBe(MessageStatus.CONFIRMED);
    const stock = await client.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
    expect(stock.Item?.available).toBe(4);
  });
});
