import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import type { AdminDeps } from '../../../shared/admin/admin-deps.ts';
import type {
  AdminQueues,
  OutgoingQueueMessage,
  QueueDepth,
  ReceivedQueueMessage,
} from '../../../shared/admin/admin-queues.ts';
import type { AuditRow } from '../../../shared/admin/audit-trail.ts';
import { AUDIT_KEYS } from '../../../shared/aws/audit-table.ts';
import { type DynamoAdminDepsOptions, dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { OUTBOX_KEYS } from '../../../shared/aws/outbox-table.ts';
import type { ConsumeResult, PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import {
  MemoryDocumentClient,
  type MemoryTableSchema,
} from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { attentionKeyOf, dueShardOf, type OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweepReport, sweep } from '../../../shared/sweeper/sweep.ts';
import { type ManualClock, manualClock, outboxItem } from '../../support/factories.ts';

/**
 * The outbox with its four indexes (each holding what the table's indexes hold), the audit table, an inbox and the
 * stock of the example's consumer.
 */
export const ADMIN_TABLE_SCHEMAS = {
  outbox: {
    partitionKey: OUTBOX_KEYS.partitionKey,
    globalIndexes: [
      {
        name: OUTBOX_KEYS.dueIndex.name,
        partitionKey: OUTBOX_KEYS.dueIndex.partitionKey,
        sortKey: OUTBOX_KEYS.dueIndex.sortKey,
        projection: OUTBOX_KEYS.dueIndex.projection,
      },
      {
        name: OUTBOX_KEYS.aggregateIndex.name,
        partitionKey: OUTBOX_KEYS.aggregateIndex.partitionKey,
        sortKey: OUTBOX_KEYS.aggregateIndex.sortKey,
        projection: OUTBOX_KEYS.aggregateIndex.projection,
      },
      {
        name: OUTBOX_KEYS.attentionIndex.name,
        partitionKey: OUTBOX_KEYS.attentionIndex.partitionKey,
        sortKey: OUTBOX_KEYS.attentionIndex.sortKey,
        projection: OUTBOX_KEYS.attentionIndex.projection,
      },
      {
        name: OUTBOX_KEYS.orderIndex.name,
        partitionKey: OUTBOX_KEYS.orderIndex.partitionKey,
        sortKey: OUTBOX_KEYS.orderIndex.sortKey,
        projection: OUTBOX_KEYS.orderIndex.projection,
      },
    ],
  },
  audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
  inbox: { partitionKey: 'messageId' },
  paymentsInbox: { partitionKey: 'messageId' },
  inventory: { partitionKey: 'sku' },
} as const satisfies Record<string, MemoryTableSchema>;

const SQS = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
export const ORDER_QUEUE = `${SQS}/order-events`;
export const ORDER_DLQ = `${SQS}/order-events-dlq`;
export const PAYMENT_QUEUE = `${SQS}/payment-events`;
export const PAYMENT_DLQ = `${SQS}/payment-events-dlq`;
export const SHARDS = 4;

/** {@link AdminQueues} on the in-memory SQS, as the SQS adapter behaves on the real one. */
export class MemoryAdminQueues implements AdminQueues {
  readonly #queues: MemoryQueues;

  constructor(queues: MemoryQueues) {
    this.#queues = queues;
  }

  async receive(
    queueUrl: string,
    options: { readonly maxMessages: number; readonly visibilityTimeoutSeconds: number },
  ): Promise<ReceivedQueueMessage[]> {
    return this.#queues
      .receiveMessages(queueUrl, {
        max: options.maxMessages,
        visibilityTimeoutMs: options.visibilityTimeoutSeconds * 1_000,
      })
      .map((message) => ({
        sqsMessageId: message.messageId,
        receiptHandle: message.receiptHandle,
        body: message.body,
        attributes: message.attributes,
        ...(message.groupId === undefined ? {} : { groupId: message.groupId }),
        receiveCount: message.receiveCount,
      }));
  }

  async send(queueUrl: string, message: OutgoingQueueMessage): Promise<void> {
    this.#queues.send(queueUrl, {
      body: message.body,
      attributes: message.attributes,
      ...(message.groupId === undefined ? {} : { groupId: message.groupId }),
      ...(message.deduplicationId === undefined ? {} : { deduplicationId: message.deduplicationId }),
    });
  }

  async delete(queueUrl: string, receiptHandle: string): Promise<void> {
    this.#queues.deleteMessage(queueUrl, receiptHandle);
  }

  async changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    this.#queues.changeMessageVisibility(queueUrl, receiptHandle, seconds);
  }

  async depth(queueUrl: string): Promise<QueueDepth> {
    const { visible, inFlight } = this.#queues.counts(queueUrl);
    return { visible, inFlight };
  }
}

/** Everything a test of the admin core works with. */
export interface AdminFixture {
  readonly db: MemoryDocumentClient;
  readonly queues: MemoryQueues;
  readonly clock: ManualClock;
  /** Every Document-client command the admin sent, in order. */
  readonly commands: unknown[];
  /** Every pause the admin asked for, in ms. */
  readonly sleeps: number[];
  /** What `deps` is built from: a test builds its own deps from these with another client. */
  readonly options: DynamoAdminDepsOptions;
  readonly deps: AdminDeps;
}

/** The admin core over in-memory tables and queues, with a recording client and a clock that moves on sleep. */
export function adminFixture(overrides: Partial<DynamoAdminDepsOptions> = {}): AdminFixture {
  const clock = manualClock();
  const db = new MemoryDocumentClient(ADMIN_TABLE_SCHEMAS, { clock: clock.now });
  const queues = new MemoryQueues(
    {
      [ORDER_QUEUE]: { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, deadLetterQueueUrl: ORDER_DLQ },
      [ORDER_DLQ]: { visibilityTimeoutMs: 30_000, retentionMs: 14 * 86_400_000 },
      [PAYMENT_QUEUE]: { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, deadLetterQueueUrl: PAYMENT_DLQ },
      [PAYMENT_DLQ]: { visibilityTimeoutMs: 30_000, retentionMs: 14 * 86_400_000 },
    },
    clock.now,
  );
  const commands: unknown[] = [];
  const sleeps: number[] = [];
  const inner = db.asDocumentClient();
  const client = {
    send: (command: unknown) => {
      commands.push(command);
      return inner.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
  const nextId = monotonicFactory();
  const options: DynamoAdminDepsOptions = {
    client,
    queues: new MemoryAdminQueues(queues),
    outboxTable: 'outbox',
    auditTable: 'audit',
    topicQueues: {
      'order.created': ORDER_QUEUE,
      'order.cancelled': ORDER_QUEUE,
      'payment.captured': PAYMENT_QUEUE,
    },
    deadLetterQueues: {
      'order.created': ORDER_DLQ,
      'order.cancelled': ORDER_DLQ,
      'payment.captured': PAYMENT_DLQ,
    },
    deliveryInboxes: {
      'order.created': 'inbox',
      'order.cancelled': 'inbox',
      'payment.captured': 'paymentsInbox',
    },
    dueShards: SHARDS,
    retentionDays: 30,
    clock: clock.now,
    newId: () => nextId(clock.now().getTime()),
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.advance(ms);
    },
    ...overrides,
  };
  return { db, queues, clock, commands, sleeps, options, deps: dynamoAdminDeps(options) };
}

/** Stores a message as the library leaves it in `status`: index keys, history and TTL as the transitions set them. */
export async function storeMessage(
  fixture: AdminFixture,
  overrides: Partial<OutboxItem> & { readonly messageId: string },
): Promise<OutboxItem> {
  const status = overrides.status ?? MessageStatus.PENDING;
  const { dueShard: _shard, nextAttemptAt: _next, ...base } = outboxItem(overrides);
  const withWork = status === MessageStatus.PENDING || status === MessageStatus.SENT;
  const attention = status === MessageStatus.FAILED || status === MessageStatus.CANCELLED;
  const item: OutboxItem = {
    ...base,
    status,
    ...(withWork
      ? {
          dueShard: overrides.dueShard ?? dueShardOf(overrides.messageId, SHARDS),
          nextAttemptAt: overrides.nextAttemptAt ?? fixture.clock.now().toISOString(),
        }
      : {}),
    ...(attention ? { attentionKey: attentionKeyOf(status, overrides.messageId, SHARDS) } : {}),
    ...(status === MessageStatus.FAILED ? { lastError: overrides.lastError ?? 'QueueDoesNotExist' } : {}),
    ...(status === MessageStatus.CONFIRMED || status === MessageStatus.CANCELLED
      ? { expiresAt: Math.floor(fixture.clock.now().getTime() / 1000) + 30 * 86_400 }
      : {}),
    ...(overrides.history === undefined ? {} : { history: overrides.history }),
  };
  await fixture.db.send(new PutCommand({ TableName: 'outbox', Item: { ...item } }));
  return item;
}

/** The stored outbox item, read consistently. */
export async function storedMessage(
  fixture: AdminFixture,
  messageId: string,
): Promise<Record<string, unknown> | undefined> {
  return (await fixture.db.send(new GetCommand({ TableName: 'outbox', Key: { messageId } }))).Item as
    | Record<string, unknown>
    | undefined;
}

/** Every audit row of `subject`. */
export async function auditRows(fixture: AdminFixture, subject: string): Promise<AuditRow[]> {
  const result = await fixture.db.send(
    new QueryCommand({
      TableName: 'audit',
      KeyConditionExpression: '#subject = :subject',
      ExpressionAttributeNames: { '#subject': 'subject' },
      ExpressionAttributeValues: { ':subject': subject },
    }),
  );
  return (result.Items ?? []) as AuditRow[];
}

/**
 * The fixture's client with `before` run ahead of every command: a test makes another actor act just before
 * the admin's write lands, or makes a call fail.
 */
export function interceptedClient(
  fixture: AdminFixture,
  before: (command: unknown) => Promise<void> | void,
): DynamoDBDocumentClient {
  const inner = fixture.options.client;
  return {
    send: async (command: unknown) => {
      await before(command);
      return inner.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
}

/** Names of the commands the admin sent (`QueryCommand`, `GetCommand`…). */
export function commandNames(fixture: AdminFixture): string[] {
  return fixture.commands.map((command) => (command as object).constructor.name);
}

/** The example's effect: the order's lines taken from the stock, or OUT_OF_STOCK. */
export const reserveStock: PlanEffect = (message) => {
  const { items } = message.payload as { items: { sku: string; quantity: number }[] };
  return {
    apply: items.map((line) => ({
      Update: {
        TableName: 'inventory',
        Key: { sku: line.sku },
        UpdateExpression: 'SET available = available - :quantity',
        ConditionExpression: 'available >= :quantity',
        ExpressionAttributeValues: { ':quantity': line.quantity },
      },
    })),
    onConditionFailure: 'OUT_OF_STOCK',
  };
};

/** The real sweeper and consumer cores on the fixture's tables and queues. */
export interface Pipeline {
  /** One sweeper round over every shard. */
  sweepOnce(): Promise<SweepReport>;
  /** Receives everything visible on the order queue and consumes it (deleting each message). */
  deliverAll(): Promise<ConsumeResult[]>;
  /** Consumes one envelope as the consumer would (a copy in flight). */
  consume(envelope: Envelope): Promise<ConsumeResult>;
}

/** A pipeline over the fixture, the library's stores acting as `sweeper` and `consumer`. */
export function pipeline(fixture: AdminFixture): Pipeline {
  const client = fixture.db.asDocumentClient();
  const store = (actor: string) =>
    new DynamoOutboxStore({ client, tableName: 'outbox', dueShards: SHARDS, actor });
  const consume = (envelope: Envelope) =>
    consumeMessage(envelope, reserveStock, {
      client,
      inboxTable: 'inbox',
      confirmer: store('consumer'),
      clock: fixture.clock.now,
    });
  return {
    sweepOnce: () => {
      let rounds = 0;
      return sweep({
        publisher: fixture.queues,
        store: store('sweeper'),
        queueFor: (topic) => fixture.deps.topicQueues[topic],
        retryPolicyFor: () => DEFAULT_RETRY_POLICY,
        clock: fixture.clock.now,
        random: () => 0.5,
        owner: 'sweeper-run-1',
        deliveryCheckFor: () => undefined,
        remainingMs: () => (rounds++ < 1 ? 60_000 : 0),
        sleep: async () => {},
        settings: { ...DEFAULT_SWEEPER_SETTINGS, dueShards: SHARDS },
      });
    },
    deliverAll: async () => {
      const results: ConsumeResult[] = [];
      for (const record of fixture.queues.receive(ORDER_QUEUE, 10)) {
        results.push(await consume(JSON.parse(record.body) as Envelope));
        fixture.queues.delete(ORDER_QUEUE, record.receiptHandle);
      }
      return results;
    },
    consume,
  };
}
