/**
 * A producer delivering `order.created` to two subscribers on the in-memory backend — inventory reserves stock,
 * loyalty awards points — whose consumers share one inbox table, with switches for the faults the fan-out must
 * survive: a subscriber's receipts lost, a subscriber's queue down. It logs what each queue was sent, what each
 * consumer received and reported (and what each plan was handed), and every receipt body applied, for property tests
 * to check and replay. The operator's admin runs over the producer's tables, with its SUBSCRIPTIONS.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import { OutboxAdmin } from '../../shared/admin/outbox-admin.ts';
import { AUDIT_KEYS } from '../../shared/aws/audit-table.ts';
import { dynamoAdminDeps } from '../../shared/aws/dynamo-admin-deps.ts';
import { DynamoConsumerInbox } from '../../shared/aws/inbox-table.ts';
import { DynamoDeliveryConfirmer } from '../../shared/aws/outbox-table/delivery-confirmer.ts';
import { DynamoOutboxStore } from '../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { writeWithOutbox } from '../../shared/aws/outbox-writer.ts';
import { consumeMessage } from '../../shared/consumer/consume-message.ts';
import type { ConsumeResult, PlanEffect } from '../../shared/consumer/consume-types.ts';
import { applyReceiptEvent } from '../../shared/lambda/receipts-handler.ts';
import { MemoryDocumentClient } from '../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../shared/memory/memory-queues.ts';
import { deliveryIdOf } from '../../shared/message/delivery-id.ts';
import { createMessage, type Envelope, parseEnvelope } from '../../shared/message/envelope.ts';
import { MessageStatus } from '../../shared/message/message-status.ts';
import { DEFAULT_GAP_TIMEOUT_MS, type OrderedTopic } from '../../shared/ordering/ordering.ts';
import type { OutboxItem } from '../../shared/outbox/outbox-item.ts';
import { type Subscriptions, subscriberQueueOf } from '../../shared/outbox/subscriptions.ts';
import { ReceiptConfirmer, type ReceiptQueue } from '../../shared/receipts/receipt-confirmer.ts';
import type { MessagePublisher } from '../../shared/relay/message-publisher.ts';
import { relayMessages } from '../../shared/relay/relay-messages.ts';
import { retryPolicyLookup } from '../../shared/retry/topic-policies.ts';
import { DEFAULT_SWEEPER_SETTINGS, sweep } from '../../shared/sweeper/sweep.ts';
import type { TransactWriteAction } from '../../shared/transaction/transaction-limits.ts';
import { MemoryAdminQueues } from '../shared/admin/admin-fixture.ts';
import { decrementPlan, MEMORY_TABLE_SCHEMAS, manualClock, sqsRecord, testMessageId } from './factories.ts';

export const SUBSCRIBERS = ['inventory', 'loyalty'] as const;
export type Subscriber = (typeof SUBSCRIBERS)[number];
export const queueOf = (subscriber: string) => `memory://${subscriber}-orders`;
/** The producer's SUBSCRIPTIONS: `order.created` to both subscribers, each on its own queue. */
export const SUBSCRIPTIONS: Subscriptions = {
  'order.created': Object.fromEntries(SUBSCRIBERS.map((s) => [s, queueOf(s)])),
};
const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

/** The receipt queue as the producer sees it: what arrived, with a switch that loses a subscriber's receipts. */
class ReceiptChannel {
  readonly arrived: string[] = [];
  /** Every body `applyReceipts` has applied, in order: copies of them may be put back on `arrived`. */
  readonly applied: string[] = [];
  readonly losing = new Set<Subscriber>();

  from(subscriber: Subscriber): ReceiptQueue {
    return {
      sendBodies: async (bodies) => {
        if (!this.losing.has(subscriber)) this.arrived.push(...bodies);
        return bodies.map(() => undefined);
      },
    };
  }
}

/** The ordering of `order.created` in an {@link WorldOptions.ordered} world: per aggregate, in scope `order`. */
export const ORDERED_ORDER_CREATED: OrderedTopic = { scope: 'order', gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS };

/** Options of {@link world}; each defaults to the plain world the pipeline tests use. */
export interface WorldOptions {
  /** The retry policy's attempts (and delivery rounds). @default 4 */
  readonly maxAttempts?: number;
  /**
   * Per subscriber, the attempts of its own retry policy (as `subscribers.<name>.retryPolicy` sets), through the
   * relay's and sweeper's real lookup; a subscriber not named takes the topic's. @default {}
   */
  readonly subscriberMaxAttempts?: Partial<Record<Subscriber, number>>;
  /** Due entries the sweeper reads per due partition and round. @default 25 (the shipped default) */
  readonly sweeperPageSize?: number;
  /**
   * `order.created` is ordered per aggregate ({@link ORDERED_ORDER_CREATED}), numbered from the `sequences`
   * table; each subscriber's plan also appends the seq it applied to its row of the `ledger` table (`seqs`).
   * @default false
   */
  readonly ordered?: boolean;
  /**
   * Each send logged in `sends` also records the status of the delivery row it sends, read just before it goes
   * to the queue (undefined when no such row exists). @default false
   */
  readonly auditSends?: boolean;
}

/** One delivery handed to a subscriber's queue (a queue that is down is not sent to, and logs nothing). */
export interface SendRecord {
  readonly subscriber: Subscriber;
  /** The message id on the wire. */
  readonly messageId: string;
  /** With `auditSends`: the status of `<messageId>#<subscriber>` as the send found it. */
  readonly rowStatus?: string;
  /** With `auditSends`: the subscriber that row names. */
  readonly rowSubscriber?: string;
}

/** One message a subscriber's consumer placed: one received, or a parked one drained after its predecessor. */
export interface ConsumeRecord {
  readonly subscriber: Subscriber;
  readonly messageId: string;
  readonly seq?: number;
  readonly kind: ConsumeResult['kind'];
  readonly drained: boolean;
}

/**
 * Orders delivers `order.created` to two subscribers — inventory reserves stock, loyalty awards points — whose
 * consumers share one inbox table; every hop runs on the in-memory backend.
 */
export function world(options: WorldOptions = {}) {
  const policy = {
    baseDelayMs: 1_000,
    multiplier: 2,
    maxDelayMs: 60_000,
    maxAttempts: options.maxAttempts ?? 4,
  };
  const ordered = options.ordered === true;
  const ordering = ordered ? { 'order.created': ORDERED_ORDER_CREATED } : undefined;
  const clock = manualClock();
  const db = new MemoryDocumentClient({
    ...MEMORY_TABLE_SCHEMAS,
    points: { partitionKey: 'customerId' },
    audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
    ...(ordered ? { ledger: { partitionKey: 'subscriber' } } : {}),
  });
  const client = db.asDocumentClient();
  const queues = new MemoryQueues(
    Object.fromEntries(SUBSCRIBERS.map((s) => [queueOf(s), { visibilityTimeoutMs: 30_000 }])),
    clock.now,
  );
  const channel = new ReceiptChannel();
  /** Subscribers whose queue refuses every send (an outage on their side). */
  const down = new Set<Subscriber>();
  const sends: SendRecord[] = [];
  const audit = async (subscriber: Subscriber, messageId: string): Promise<SendRecord> => {
    if (options.auditSends !== true) return { subscriber, messageId };
    const { Item: row } = await client.send(
      new GetCommand({ TableName: 'outbox', Key: { messageId: deliveryIdOf(messageId, subscriber) } }),
    );
    return { subscriber, messageId, rowStatus: row?.status, rowSubscriber: row?.subscriber };
  };
  const publisher: MessagePublisher = {
    publishBatch: async (queueUrl, messages, publishOptions) => {
      const subscriber = SUBSCRIBERS.find((s) => queueOf(s) === queueUrl);
      if (subscriber !== undefined && down.has(subscriber)) {
        return {
          sent: [],
          failed: messages.map((m) => ({ messageId: m.messageId, error: 'ServiceUnavailable' })),
        };
      }
      if (subscriber !== undefined) {
        for (const message of messages) sends.push(await audit(subscriber, message.messageId));
      }
      return queues.publishBatch(queueUrl, messages, publishOptions);
    },
  };
  const basePlans: Record<Subscriber, PlanEffect> = {
    inventory: decrementPlan({
      table: 'inventory',
      guarded: true,
      onConditionFailure: 'REJECTED_OUT_OF_STOCK',
    }),
    loyalty: () => ({
      apply: [
        {
          Update: {
            TableName: 'points',
            Key: { customerId: 'c-1' },
            UpdateExpression: 'ADD #p :ten',
            ExpressionAttributeNames: { '#p': 'points' },
            ExpressionAttributeValues: { ':ten': 10 },
          },
        },
      ],
      onConditionFailure: 'NOT_AWARDED',
      outcome: 'AWARDED',
    }),
  };
  // Ordered: each apply also appends its seq to the subscriber's ledger row, in the same transaction.
  const ledgerAppend = (subscriber: Subscriber, seq: number | undefined): TransactWriteAction => ({
    Update: {
      TableName: 'ledger',
      Key: { subscriber },
      UpdateExpression: 'SET #seqs = list_append(if_not_exists(#seqs, :none), :seq)',
      ExpressionAttributeNames: { '#seqs': 'seqs' },
      ExpressionAttributeValues: { ':none': [], ':seq': [seq ?? 0] },
    },
  });
  const withLedger =
    (subscriber: Subscriber): PlanEffect =>
    (message) => {
      const decided = basePlans[subscriber](message);
      return 'apply' in decided
        ? { ...decided, apply: [...decided.apply, ledgerAppend(subscriber, message.seq)] }
        : decided;
    };
  /** Every message each subscriber's plan was handed, in order. */
  const planned: Record<Subscriber, Envelope[]> = { inventory: [], loyalty: [] };
  const logged =
    (subscriber: Subscriber, plan: PlanEffect): PlanEffect =>
    (message) => {
      planned[subscriber].push(message);
      return plan(message);
    };
  const plans: Record<Subscriber, PlanEffect> = ordered
    ? {
        inventory: logged('inventory', withLedger('inventory')),
        loyalty: logged('loyalty', withLedger('loyalty')),
      }
    : { inventory: logged('inventory', basePlans.inventory), loyalty: logged('loyalty', basePlans.loyalty) };
  const consumers = Object.fromEntries(
    SUBSCRIBERS.map((subscriber) => [
      subscriber,
      {
        // One inbox table for both: the rows are keyed per subscriber.
        inbox: new DynamoConsumerInbox({ client, inboxTable: 'inbox', subscriber }),
        confirmer: new ReceiptConfirmer({
          subscriber,
          queue: channel.from(subscriber),
          setTimer: (run) => run(),
        }),
        clock: clock.now,
      },
    ]),
  ) as unknown as Record<Subscriber, Parameters<typeof consumeMessage>[2]>;
  const producer = new DynamoDeliveryConfirmer({
    client,
    tableName: 'outbox',
    subscribers: { inventory: ['order.created'], loyalty: ['order.created'] },
    clock: clock.now,
  });
  const routing = {
    publisher,
    queueFor: (topic: string, subscriber?: string) =>
      subscriber === undefined ? undefined : subscriberQueueOf(SUBSCRIPTIONS, topic, subscriber),
    retryPolicyFor: retryPolicyLookup(
      { 'order.created': policy },
      Object.fromEntries(
        Object.entries(options.subscriberMaxAttempts ?? {}).map(([name, maxAttempts]) => [
          name,
          { ...policy, maxAttempts },
        ]),
      ),
    ),
    clock: clock.now,
    random: () => 0.5,
  };
  const rows = async (): Promise<OutboxItem[]> =>
    ((await client.send(new ScanCommand({ TableName: 'outbox' }))).Items ?? []) as OutboxItem[];
  /** What each consumer placed, in order: every message received, and each parked one drained after it. */
  const consumed: ConsumeRecord[] = [];
  /** The body of every message each consumer received, in order: copies of them may be delivered again. */
  const received: Record<Subscriber, string[]> = { inventory: [], loyalty: [] };
  const placed = (
    subscriber: Subscriber,
    message: Envelope,
    how: Pick<ConsumeRecord, 'kind' | 'drained'>,
  ) => ({
    subscriber,
    messageId: message.messageId,
    ...(message.seq === undefined ? {} : { seq: message.seq }),
    ...how,
  });
  /** One body consumed by `subscriber`'s consumer, as SQS would hand it over; logged in `consumed`. */
  const deliver = async (subscriber: Subscriber, body: string): Promise<ConsumeResult> => {
    received[subscriber].push(body);
    const message = parseEnvelope(JSON.parse(body));
    const result = await consumeMessage(message, plans[subscriber], consumers[subscriber]);
    consumed.push(placed(subscriber, message, { kind: result.kind, drained: false }));
    for (const drained of result.drained ?? []) {
      consumed.push(placed(subscriber, drained.message, { kind: drained.kind, drained: true }));
    }
    return result;
  };
  return {
    clock,
    client,
    queues,
    channel,
    down,
    rows,
    /** Every delivery handed to a subscriber's queue, in order (see {@link WorldOptions.auditSends}). */
    sends,
    consumed,
    received,
    /** Every message each subscriber's plan was handed (a control message never is). */
    planned,
    deliver,
    /** Receives (and deletes) every message `subscriber`'s queue holds visible now: their bodies, in queue order. */
    take(subscriber: Subscriber): string[] {
      const bodies: string[] = [];
      for (let batch = queues.receive(queueOf(subscriber), 10); batch.length > 0; ) {
        for (const message of batch) {
          bodies.push(message.body);
          queues.deleteMessage(queueOf(subscriber), message.receiptHandle);
        }
        batch = queues.receive(queueOf(subscriber), 10);
      }
      return bodies;
    },
    /** The operator's admin over the producer's tables. */
    admin() {
      return new OutboxAdmin(
        dynamoAdminDeps({
          client,
          outboxTable: 'outbox',
          auditTable: 'audit',
          queues: new MemoryAdminQueues(queues),
          topicQueues: {},
          deadLetterQueues: {},
          deliveryInboxes: {},
          subscriptions: SUBSCRIPTIONS,
          ...(ordering === undefined ? {} : { orderedTopics: ordering }),
          dueShards: 8,
          retentionDays: 30,
          clock: clock.now,
          newId: monotonicFactory(),
          sleep: async () => {},
        }),
      );
    },
    /** Order `orderId` (unless it exists) and message `n` of it, in one transaction. */
    async write(n: number, orderId = `o-${n}`) {
      const message = createMessage({
        messageId: testMessageId(n),
        topic: 'order.created',
        aggregateId: 'SKU-1',
        payload: { orderId },
      });
      await writeWithOutbox(
        {
          client,
          outboxTable: 'outbox',
          subscribers: { 'order.created': [...SUBSCRIBERS] },
          clock: clock.now,
          ...(ordering === undefined ? {} : { ordering, sequenceTable: 'sequences' }),
        },
        {
          actions: [
            {
              Put: {
                TableName: 'orders',
                Item: { orderId },
                ConditionExpression: 'attribute_not_exists(orderId)',
              },
            },
          ],
          messages: [message],
        },
      );
      return message;
    },
    /** The stream relay, given every new row. */
    async relay() {
      const fresh = (await rows()).filter((row) => row.status === MessageStatus.PENDING);
      return relayMessages(
        fresh.map((message) => ({ recordId: message.messageId, message })),
        { ...routing, store: new DynamoOutboxStore({ client, tableName: 'outbox' }) },
      );
    },
    /** Each subscriber's consumer takes what its queue holds; returns the kinds it reported. */
    async consume(subscriber: Subscriber) {
      const results = [];
      for (const message of queues.receive(queueOf(subscriber), 10)) {
        results.push(await deliver(subscriber, message.body));
        queues.deleteMessage(queueOf(subscriber), message.receiptHandle);
      }
      return results;
    },
    async applyReceipts() {
      const bodies = channel.arrived.splice(0);
      channel.applied.push(...bodies);
      await applyReceiptEvent(
        { Records: bodies.map((body, n) => ({ ...sqsRecord(), messageId: `receipt-${n}`, body })) },
        { confirmer: producer, logger: quiet },
      );
    },
    async sweep() {
      let rounds = 0;
      return sweep({
        ...routing,
        store: new DynamoOutboxStore({ client, tableName: 'outbox' }),
        owner: 'sweeper-a',
        deliveryCheckFor: () => {
          throw new Error("a subscriber's delivery is never checked by reading its inbox");
        },
        remainingMs: () => (rounds++ < 1 ? 60_000 : 0),
        sleep: async () => {},
        settings: {
          ...DEFAULT_SWEEPER_SETTINGS,
          subscribers: SUBSCRIBERS,
          pageSize: options.sweeperPageSize ?? DEFAULT_SWEEPER_SETTINGS.pageSize,
        },
        ...(ordering === undefined
          ? {}
          : {
              orderingFor: (topic: string) => (topic === 'order.created' ? ORDERED_ORDER_CREATED : undefined),
            }),
      });
    },
  };
}
