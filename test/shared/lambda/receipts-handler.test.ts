import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoDeliveryConfirmer } from '../../../shared/aws/outbox-table/delivery-confirmer.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { applyReceiptEvent, createReceiptsHandler } from '../../../shared/lambda/receipts-handler.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import type { DeliveryConfirmer } from '../../../shared/receipts/apply-receipts.ts';
import { type Receipt, receiptBody } from '../../../shared/receipts/receipt.ts';
import { MEMORY_TABLE_SCHEMAS, outboxItem, sqsRecord, testMessageId } from '../../support/factories.ts';

const warnings: { message: string; fields: Record<string, unknown> }[] = [];
const logger = {
  debug: () => {},
  info: () => {},
  warn: (message: string, fields: Record<string, unknown> = {}) => warnings.push({ message, fields }),
};
let db: MemoryDocumentClient;
let confirmer: DynamoDeliveryConfirmer;

const receipt = (n: number, subscriber = 'inventory'): Receipt => ({
  messageId: testMessageId(n),
  subscriber,
  outcome: 'RESERVED',
  appliedAt: '2026-12-02T10:00:05.000Z',
});

function receiptRecord(id: string, body: string) {
  return { ...sqsRecord(), messageId: id, body };
}

async function statusOf(n: number): Promise<unknown> {
  const { Item } = await db.asDocumentClient().send(
    new GetCommand({
      TableName: 'outbox',
      Key: { messageId: deliveryIdOf(testMessageId(n), 'inventory') },
      ConsistentRead: true,
    }),
  );
  return Item?.status;
}

beforeEach(async () => {
  warnings.length = 0;
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  confirmer = new DynamoDeliveryConfirmer({
    client: db.asDocumentClient(),
    tableName: 'outbox',
    subscribers: { inventory: ['order.created'] },
  });
  for (const n of [1, 2, 3]) {
    const item = outboxItem({
      messageId: testMessageId(n),
      topic: 'order.created',
      status: MessageStatus.SENT,
    });
    // Inventory's delivery of it, as the writer stores one for a topic with subscribers.
    const delivery = {
      ...item,
      messageId: deliveryIdOf(item.messageId, 'inventory'),
      subscriber: 'inventory',
    };
    await db.asDocumentClient().send(new PutCommand({ TableName: 'outbox', Item: delivery }));
  }
});

describe('applyReceiptEvent', () => {
  it('confirms every delivery its receipts name, duplicates included, and acknowledges the batch', async () => {
    const event: SQSEvent = {
      Records: [
        receiptRecord('r-1', receiptBody([receipt(1), receipt(2)])),
        receiptRecord('r-2', receiptBody([receipt(2), receipt(3)])),
      ],
    };

    const { response, report } = await applyReceiptEvent(event, { confirmer, logger });

    expect(response).toEqual({ batchItemFailures: [] });
    expect(report.counts).toMatchObject({ CONFIRMED: 3, ALREADY_CONFIRMED: 1, ERROR: 0 });
    expect(await Promise.all([1, 2, 3].map(statusOf))).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);
  });

  it('drops a body it cannot read with a warning, and still applies the others', async () => {
    const event: SQSEvent = {
      Records: [receiptRecord('r-bad', 'not json'), receiptRecord('r-good', receiptBody([receipt(1)]))],
    };

    const { response, report } = await applyReceiptEvent(event, { confirmer, logger });

    expect(response).toEqual({ batchItemFailures: [] });
    expect(report.unreadable).toBe(1);
    expect(warnings[0]).toMatchObject({
      message: 'unreadable receipt body dropped',
      fields: { sqsMessageId: 'r-bad' },
    });
    expect(await statusOf(1)).toBe('CONFIRMED');
  });

  it('fails the record of a receipt whose apply failed, so SQS redelivers it', async () => {
    const flaky: DeliveryConfirmer = {
      confirmDelivery: (r) =>
        r.messageId === testMessageId(2)
          ? Promise.reject(new Error('throttled'))
          : confirmer.confirmDelivery(r),
    };
    const event: SQSEvent = {
      Records: [
        receiptRecord('r-1', receiptBody([receipt(1)])),
        receiptRecord('r-2', receiptBody([receipt(2), receipt(3)])),
      ],
    };

    const { response } = await applyReceiptEvent(event, { confirmer: flaky, logger });

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'r-2' }] });
    expect(await Promise.all([1, 2, 3].map(statusOf))).toEqual(['CONFIRMED', 'SENT', 'CONFIRMED']);
  });

  it('warns of a receipt of a subscriber not declared for the topic, and confirms nothing for it', async () => {
    const { response } = await applyReceiptEvent(
      { Records: [receiptRecord('r-1', receiptBody([receipt(1, 'loyalty')]))] },
      { confirmer, logger },
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(warnings).toMatchObject([
      { message: 'receipt matches no delivery', fields: { subscriber: 'loyalty' } },
    ]);
    expect(await statusOf(1)).toBe('SENT');
  });
});

describe('createReceiptsHandler', () => {
  it('refuses to start without OUTBOX_TABLE, and with a malformed SUBSCRIPTIONS, naming the variable', () => {
    const handler = createReceiptsHandler();
    const env = { AWS_REGION: 'eu-west-1', OUTBOX_TABLE: 'orders-outbox', POWERTOOLS_LOG_LEVEL: 'SILENT' };

    expect(() => handler.withEnv({ ...env, OUTBOX_TABLE: undefined })).toThrow('OUTBOX_TABLE is not set');
    const malformed = {
      ...env,
      SUBSCRIPTIONS: '{"order.created":{"Inventory":"https://sqs.eu-west-1.amazonaws.com/1/q"}}',
    };
    expect(() => handler.withEnv(malformed)).toThrow(ConfigError);
    expect(() => handler.withEnv(malformed)).toThrow('SUBSCRIPTIONS');
    expect(() => handler.withEnv(env)).not.toThrow();
  });
});
