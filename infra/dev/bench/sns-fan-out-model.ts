/**
 * The SNS alternative to a row per delivery, modelled on the bench's doubles so its writes are counted from real
 * items: one outbox row per message that also keeps each subscriber's delivery state in a map (`deliveries`), one
 * SNS publish per relayed batch that SNS copies into every subscriber's queue (raw message delivery), and a
 * receipts function that confirms a receipt's subscriber in the map and, with the last one, the message itself.
 * The writer, the relay and the consumers stay the production ones; what is modelled is named here and in the
 * section's notes.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { DynamoOutboxStore } from '../../../shared/index.ts';
import type { MemoryQueues, MessagePublisher } from '../../../shared/memory/index.ts';
import { pause } from './simulated-latency.ts';

/** The SNS topic every subscribed topic is published to, written where the relay expects a queue URL. */
export const SNS_TOPIC_URL = 'https://sns.us-east-1.amazonaws.com/000000000000/order-events';

/** The map attribute a message row keeps its deliveries in, and its count of confirmed ones. */
export const DELIVERY_MAP = { attribute: 'deliveries', confirmed: 'confirmedDeliveries' } as const;

/** What the SNS model counts. */
export interface SnsCounts {
  /** PublishBatch requests (up to 10 messages each, like SendMessageBatch). */
  publishes: number;
  /** Messages SNS put into subscriber queues. */
  deliveries: number;
}

/** Options of {@link snsTopicPublisher}. */
export interface SnsTopicOptions {
  readonly queues: MemoryQueues;
  /** The queue of each subscriber, all subscribed to the topic with raw message delivery. */
  readonly subscriberQueues: readonly string[];
  /** Latency of one publish, and of SNS's delivery into a queue after it, in milliseconds. */
  readonly publishMs: number;
  readonly deliveryMs: number;
  readonly counts: SnsCounts;
  /** Deliveries under way: a drain waits for them before it reads the queues. */
  readonly pending: Set<Promise<void>>;
}

/**
 * The relay's publisher on the SNS topic: a batch is one PublishBatch that returns once SNS has it; SNS then
 * copies each message into every subscriber queue (the same body and attributes SQS would have been sent) after
 * `deliveryMs`, in parallel, without holding up the relay.
 */
export function snsTopicPublisher(options: SnsTopicOptions): MessagePublisher {
  return {
    publishBatch: async (topicUrl, messages, publishOptions) => {
      if (topicUrl !== SNS_TOPIC_URL) throw new Error(`the SNS model publishes to ${SNS_TOPIC_URL} only`);
      options.counts.publishes += 1;
      await pause(options.publishMs);
      for (const queueUrl of options.subscriberQueues) {
        const delivery = (async () => {
          await pause(options.deliveryMs);
          const result = await options.queues.publishBatch(queueUrl, messages, publishOptions);
          options.counts.deliveries += result.sent.length;
        })();
        options.pending.add(delivery);
        void delivery.finally(() => options.pending.delete(delivery));
      }
      return { sent: messages.map((message) => message.messageId), failed: [] };
    },
  };
}

/**
 * `client` whose transactions give each new message row of a subscribed topic its delivery map, one PENDING entry
 * per subscriber: what an SNS design's writer stores so that receipts, resends and FAILED stay per subscriber.
 */
export function withDeliveryMaps(
  client: DynamoDBDocumentClient,
  options: {
    readonly outboxTable: string;
    readonly subscribers: Readonly<Record<string, readonly string[]>>;
  },
): DynamoDBDocumentClient {
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  const withMap = (command: TransactWriteCommand): TransactWriteCommand =>
    new TransactWriteCommand({
      ...command.input,
      TransactItems: (command.input.TransactItems ?? []).map((action) => {
        const put = action.Put;
        const subscribers = options.subscribers[String(put?.Item?.topic)];
        if (put?.TableName !== options.outboxTable || subscribers === undefined) return action;
        const deliveries = Object.fromEntries(subscribers.map((name) => [name, { status: 'PENDING' }]));
        return { ...action, Put: { ...put, Item: { ...put.Item, [DELIVERY_MAP.attribute]: deliveries } } };
      }),
    });
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (command: unknown) => send(command instanceof TransactWriteCommand ? withMap(command) : command);
    },
  });
}

/** Receipts of one record the shipped receipts function applies at once. */
const RECEIPT_CONCURRENCY = 10;

/** One receipt as the production consumers send it. */
interface Receipt {
  readonly messageId: string;
  readonly subscriber: string;
  readonly outcome: string;
  readonly appliedAt: string;
}

/** What applying a batch of receipts did. */
export interface SnsReceiptReport {
  readonly confirmedDeliveries: number;
  readonly confirmedMessages: number;
  readonly duplicates: number;
}

/**
 * The SNS design's receipts function, paced as the shipped one applies receipts (the records of a batch one after
 * another, up to 10 receipts of a record at once): per receipt, one conditional update of its subscriber's entry in
 * the message row's map (a duplicate fails the condition and changes nothing) that also counts the confirmed
 * entries; the receipt that completes the count confirms the message with the production confirmation (status,
 * due entry, TTL). `subscriberCount` is how many entries each message has.
 */
export async function applySnsReceipts(
  records: readonly SQSRecord[],
  deps: {
    readonly client: DynamoDBDocumentClient;
    readonly outboxTable: string;
    readonly subscriberCount: number;
    readonly clock: () => Date;
  },
): Promise<SnsReceiptReport> {
  const store = new DynamoOutboxStore({
    client: deps.client,
    tableName: deps.outboxTable,
    actor: 'receipts',
  });
  const report = { confirmedDeliveries: 0, confirmedMessages: 0, duplicates: 0 };
  const apply = async (receipt: Receipt): Promise<void> => {
    const now = deps.clock();
    let confirmed: number;
    try {
      const { Attributes } = await deps.client.send(
        new UpdateCommand({
          TableName: deps.outboxTable,
          Key: { messageId: receipt.messageId },
          UpdateExpression:
            'SET #map.#subscriber.#status = :confirmed, #map.#subscriber.#at = :at, #map.#subscriber.#outcome = :outcome ADD #count :one',
          ConditionExpression:
            'attribute_exists(#map.#subscriber) AND #map.#subscriber.#status <> :confirmed',
          ExpressionAttributeNames: {
            '#map': DELIVERY_MAP.attribute,
            '#subscriber': receipt.subscriber,
            '#status': 'status',
            '#at': 'confirmedAt',
            '#outcome': 'outcome',
            '#count': DELIVERY_MAP.confirmed,
          },
          ExpressionAttributeValues: {
            ':confirmed': 'CONFIRMED',
            ':at': now.toISOString(),
            ':outcome': receipt.outcome,
            ':one': 1,
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      confirmed = Number(Attributes?.[DELIVERY_MAP.confirmed] ?? 0);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      report.duplicates += 1;
      return;
    }
    report.confirmedDeliveries += 1;
    if (confirmed < deps.subscriberCount) return;
    await store.confirm(receipt.messageId, now, `confirmed by ${deps.subscriberCount} subscribers`);
    report.confirmedMessages += 1;
  };
  for (const record of records) {
    const receipts = [...(JSON.parse(record.body) as { receipts: Receipt[] }).receipts];
    const worker = async (): Promise<void> => {
      for (let receipt = receipts.shift(); receipt !== undefined; receipt = receipts.shift())
        await apply(receipt);
    };
    await Promise.all(Array.from({ length: RECEIPT_CONCURRENCY }, worker));
  }
  return report;
}
