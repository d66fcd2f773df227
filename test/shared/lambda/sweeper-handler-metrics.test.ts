import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BACKLOG_GAUGE_MAX_PAGES, createSweeperHandler } from '../../../shared/lambda/sweeper-handler.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { OutboxMetricName } from '../../../shared/observability/metric-names.ts';
import { FIXED_NOW, lambdaContext, outboxItem, testMessageId } from '../../support/factories.ts';
import { bySubscriber, byTopic, captureEmf, type EmfCapture } from './emf-output.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const env = {
  OUTBOX_TABLE: 'outbox-table',
  TOPIC_QUEUES: JSON.stringify({
    'order.created': 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created',
    'payment.captured': 'https://sqs.eu-west-1.amazonaws.com/123456789012/payment-captured',
  }),
  DUE_SHARDS: '2',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_SERVICE_NAME: 'orders-sweeper',
};
const handler = createSweeperHandler();
let emf: EmfCapture;

const minutesAgo = (minutes: number) => new Date(FIXED_NOW.getTime() - minutes * 60_000).toISOString();

/** A context with time for exactly one round: the sweeper stops starting rounds 5 s before its timeout. */
function oneRoundContext(): Context {
  let calls = 0;
  return {
    ...lambdaContext(),
    getRemainingTimeInMillis: () => {
      calls += 1;
      return calls === 1 ? 6_000 : 4_000;
    },
  };
}

/**
 * The indexes as the backlog gauges read them (queries on `:pk`): in the due index, two PENDING order.created
 * messages (the older created 20 minutes ago) and one SENT; in the attention index, one FAILED payment.captured.
 * The sweep's own due queries (on `:shard`) get `due`.
 */
function indexesHold(due: readonly object[] = []): void {
  // A claim answers with the whole message, as the table stores it.
  const stored = new Map(due.map((item) => [(item as { messageId?: string }).messageId, item]));
  ddb
    .on(UpdateCommand)
    .callsFake(async (input: UpdateCommandInput) =>
      input.ReturnValues === 'ALL_NEW' ? { Attributes: stored.get(String(input.Key?.messageId)) } : {},
    );
  ddb.on(QueryCommand).callsFake(async (input: QueryCommandInput) => {
    const values = input.ExpressionAttributeValues ?? {};
    if (values[':shard'] !== undefined) return { Items: values[':shard'] === '0' ? due : [] };
    const partition = values[':pk'];
    if (input.IndexName === 'due' && partition === '0') {
      return {
        Items: [
          { topic: 'order.created', status: 'PENDING', createdAt: minutesAgo(20) },
          { topic: 'order.created', status: 'PENDING', createdAt: minutesAgo(1) },
          { topic: 'order.created', status: 'SENT', createdAt: minutesAgo(3), sentAt: minutesAgo(2) },
        ],
      };
    }
    if (partition === 'FAILED#1') return { Items: [{ topic: 'payment.captured', status: 'FAILED' }] };
    return { Items: [] };
  });
}

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  ddb.on(UpdateCommand).resolves({});
  vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] });
  emf = captureEmf();
});

afterEach(() => {
  emf.restore();
  vi.useRealTimers();
});

describe('createSweeperHandler metrics', () => {
  it('publishes the backlog gauges of every routed topic each run, zeros included', async () => {
    indexesHold();

    await handler.withEnv(env)({}, oneRoundContext());

    expect(byTopic(emf.values(OutboxMetricName.BACKLOG_PENDING))).toEqual({
      'order.created': 2,
      'payment.captured': 0,
    });
    expect(byTopic(emf.values(OutboxMetricName.BACKLOG_SENT_UNCONFIRMED))).toEqual({
      'order.created': 1,
      'payment.captured': 0,
    });
    expect(byTopic(emf.values(OutboxMetricName.OLDEST_PENDING_AGE_SECONDS))).toEqual({
      'order.created': 1_200,
      'payment.captured': 0,
    });
    expect(byTopic(emf.values(OutboxMetricName.FAILED_MESSAGES))).toEqual({
      'order.created': 0,
      'payment.captured': 1,
    });
    expect(emf.values(OutboxMetricName.OLDEST_PENDING_AGE_SECONDS)[0]).toMatchObject({
      namespace: 'ServerlessOutbox',
      service: 'orders-sweeper',
      unit: 'Seconds',
      dimensions: [['service', 'topic']],
    });
  });

  it('publishes what it sent per topic with the gauges, in one document per topic', async () => {
    const due = [1, 2].map((n) =>
      outboxItem({
        messageId: testMessageId(n),
        status: MessageStatus.PENDING,
        attempts: 1,
        dueShard: '0',
        nextAttemptAt: new Date(FIXED_NOW.getTime() - 1_000).toISOString(),
      }),
    );
    indexesHold(due);
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
      Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: 'x' })),
    }));

    const report = await handler.withEnv(env)({}, oneRoundContext());

    expect(report).toMatchObject({ claimed: 2, sent: 2 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_SENT))).toEqual({ 'order.created': 2 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({ 'order.created': 0 });
    expect(emf.documents().map((document) => document.topic)).toEqual(['order.created', 'payment.captured']);
  });

  it('counts a message it moved to FAILED after its last attempt as MessagesFailed', async () => {
    const exhausted = outboxItem({
      messageId: testMessageId(7),
      status: MessageStatus.PENDING,
      attempts: 10,
      dueShard: '0',
      nextAttemptAt: new Date(FIXED_NOW.getTime() - 1_000).toISOString(),
      lastError: 'queue missing',
    });
    indexesHold([exhausted]);
    const policies = {
      'order.created': { baseDelayMs: 100, multiplier: 2, maxDelayMs: 1_000, maxAttempts: 3 },
    };

    await handler.withEnv({ ...env, RETRY_POLICIES: JSON.stringify(policies) })({}, oneRoundContext());

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({ 'order.created': 1 });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('publishes OrderingGaps for each ordered topic: the gaps this run found, 0 for a topic without one', async () => {
    const orderKey = 'order#order-1';
    // Seq 2 is SENT and overdue; its consumer parked it 10 minutes ago, waiting for seq 1, which is FAILED.
    const parked = outboxItem({
      messageId: testMessageId(2),
      status: MessageStatus.SENT,
      attempts: 1,
      dueShard: '0',
      nextAttemptAt: minutesAgo(1),
      confirmBy: minutesAgo(1),
      orderKey,
      seq: 2,
    });
    indexesHold([parked]);
    ddb.on(QueryCommand, { IndexName: 'byOrderKey' }).resolves({
      Items: [{ messageId: testMessageId(1), orderKey, seq: 1 }],
    });
    ddb.on(GetCommand).callsFake(async (input: GetCommandInput) => {
      const key = String(input.Key?.messageId);
      if (input.TableName === 'outbox-table' && key === testMessageId(1)) {
        return { Item: { messageId: key, orderKey, seq: 1, status: 'FAILED', topic: 'order.created' } };
      }
      if (key === `cursor#${orderKey}`) return { Item: { messageId: key, lastSeq: 0 } };
      if (key === `parked#${orderKey}#2`) return { Item: { messageId: key, parkedAt: minutesAgo(10) } };
      return {};
    });
    const ordered = {
      ...env,
      DELIVERY_INBOXES: JSON.stringify({ 'order.created': 'inventory-inbox' }),
      ORDERED_TOPICS: JSON.stringify({
        'order.created': { scope: 'order', gapTimeoutMs: 300_000 },
        'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000 },
      }),
    };

    const report = await handler.withEnv(ordered)({}, oneRoundContext());

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, sent: 0 });
    expect(report.problems).toEqual([
      expect.objectContaining({ messageId: testMessageId(1), orderKey, seq: 1, outcome: 'GAP' }),
    ]);
    expect(byTopic(emf.values(OutboxMetricName.ORDERING_GAPS))).toEqual({
      'order.created': 1,
      'order.cancelled': 0,
    });
    expect(emf.values(OutboxMetricName.ORDERING_GAPS)[0]).toMatchObject({ unit: 'Count' });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('publishes no OrderingGaps when no topic is ordered', async () => {
    indexesHold();

    await handler.withEnv(env)({}, oneRoundContext());

    expect(emf.values(OutboxMetricName.ORDERING_GAPS)).toEqual([]);
  });

  it('reads at most the page budget of index pages for the gauges, and still publishes them', async () => {
    let gaugePages = 0;
    ddb.on(QueryCommand).callsFake(async (input: QueryCommandInput) => {
      if (input.ExpressionAttributeValues?.[':shard'] !== undefined) return { Items: [] };
      gaugePages += 1;
      // An endless due index: every page promises another.
      return {
        Items: [{ topic: 'order.created', status: 'PENDING', createdAt: minutesAgo(5) }],
        LastEvaluatedKey: { messageId: `m${gaugePages}` },
      };
    });

    await handler.withEnv(env)({}, oneRoundContext());

    expect(gaugePages).toBe(BACKLOG_GAUGE_MAX_PAGES);
    // A lower bound: each due-index page read counted one PENDING message.
    const pending = emf.values(OutboxMetricName.BACKLOG_PENDING).find((v) => v.topic === 'order.created');
    expect(pending?.value).toBeGreaterThan(0);
    expect(pending?.value).toBeLessThan(BACKLOG_GAUGE_MAX_PAGES);
  });

  it('sweeps and publishes its sends when the indexes cannot be read for the gauges', async () => {
    ddb.on(QueryCommand).callsFake(async (input: QueryCommandInput) => {
      if (input.ExpressionAttributeValues?.[':shard'] !== undefined) return { Items: [] };
      throw new Error('ProvisionedThroughputExceededException');
    });

    const report = await handler.withEnv(env)({}, oneRoundContext());

    expect(report).toMatchObject({ rounds: 1, errors: 0 });
    expect(emf.values(OutboxMetricName.BACKLOG_PENDING)).toEqual([]);
  });
});

describe('createSweeperHandler metrics per subscriber', () => {
  const INVENTORY = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Orders-Outbox-inventory';
  const LOYALTY = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Orders-Outbox-loyalty';
  const subscribed = {
    ...env,
    SUBSCRIPTIONS: JSON.stringify({ 'order.created': { inventory: INVENTORY, loyalty: LOYALTY } }),
  };
  const deliveryId = (n: number, subscriber: string) => deliveryIdOf(testMessageId(n), subscriber);

  /**
   * The indexes as the gauges read them. The due index holds no `subscriber` (the table's projection), only the
   * key: inventory's delivery of message 1, written 30 minutes ago and resent a minute ago, still SENT; its delivery
   * of message 2, PENDING for 4 minutes; message 3 of order.created, without a subscriber, SENT an hour ago. The
   * attention index (every attribute) holds loyalty's FAILED delivery of message 1. The sweep's own due queries get
   * `due`.
   */
  function deliveriesHeld(due: readonly object[] = []): void {
    const stored = new Map(due.map((item) => [(item as { messageId?: string }).messageId, item]));
    ddb
      .on(UpdateCommand)
      .callsFake(async (input: UpdateCommandInput) =>
        input.ReturnValues === 'ALL_NEW' ? { Attributes: stored.get(String(input.Key?.messageId)) } : {},
      );
    ddb.on(QueryCommand).callsFake(async (input: QueryCommandInput) => {
      const values = input.ExpressionAttributeValues ?? {};
      if (values[':shard'] !== undefined) return { Items: values[':shard'] === '0' ? due : [] };
      if (input.IndexName === 'due' && values[':pk'] === '0') {
        return {
          Items: [
            {
              messageId: deliveryId(1, 'inventory'),
              topic: 'order.created',
              status: 'SENT',
              createdAt: minutesAgo(30),
              sentAt: minutesAgo(1),
            },
            {
              messageId: deliveryId(2, 'inventory'),
              topic: 'order.created',
              status: 'PENDING',
              createdAt: minutesAgo(4),
            },
            {
              messageId: testMessageId(3),
              topic: 'order.created',
              status: 'SENT',
              createdAt: minutesAgo(60),
              sentAt: minutesAgo(60),
            },
          ],
        };
      }
      if (values[':pk'] === 'FAILED#1') {
        return {
          Items: [
            {
              messageId: deliveryId(1, 'loyalty'),
              subscriber: 'loyalty',
              topic: 'order.created',
              status: 'FAILED',
            },
          ],
        };
      }
      return { Items: [] };
    });
  }

  it('publishes each subscriber’s gauges per topic and over its topics, zeros included', async () => {
    deliveriesHeld();

    await handler.withEnv(subscribed)({}, oneRoundContext());

    const gauge = (name: string) => bySubscriber(emf.values(name));
    expect(gauge(OutboxMetricName.BACKLOG_PENDING)).toEqual({
      inventory: 1,
      'inventory order.created': 1,
      loyalty: 0,
      'loyalty order.created': 0,
    });
    expect(gauge(OutboxMetricName.BACKLOG_SENT_UNCONFIRMED)).toEqual({
      inventory: 1,
      'inventory order.created': 1,
      loyalty: 0,
      'loyalty order.created': 0,
    });
    expect(gauge(OutboxMetricName.OLDEST_PENDING_AGE_SECONDS)).toEqual({
      inventory: 240,
      'inventory order.created': 240,
      loyalty: 0,
      'loyalty order.created': 0,
    });
    // Waiting for inventory's receipt since it was written, whatever its last send.
    expect(gauge(OutboxMetricName.OLDEST_UNCONFIRMED_AGE_SECONDS)).toEqual({
      inventory: 1_800,
      'inventory order.created': 1_800,
      loyalty: 0,
      'loyalty order.created': 0,
    });
    expect(gauge(OutboxMetricName.FAILED_MESSAGES)).toEqual({
      inventory: 0,
      'inventory order.created': 0,
      loyalty: 1,
      'loyalty order.created': 1,
    });
    const published = (subscriber: string, topic?: string) =>
      emf
        .values(OutboxMetricName.OLDEST_UNCONFIRMED_AGE_SECONDS)
        .filter((value) => value.subscriber === subscriber && value.topic === topic)
        .map(({ namespace, service, unit, dimensions }) => ({ namespace, service, unit, dimensions }));
    expect(published('inventory')).toEqual([
      {
        namespace: 'ServerlessOutbox',
        service: 'orders-sweeper',
        unit: 'Seconds',
        dimensions: [['service', 'subscriber']],
      },
    ]);
    expect(published('inventory', 'order.created')).toEqual([
      {
        namespace: 'ServerlessOutbox',
        service: 'orders-sweeper',
        unit: 'Seconds',
        dimensions: [['service', 'topic', 'subscriber']],
      },
    ]);
  });

  it('keeps the topic’s gauges counting every row, a message without a subscriber included', async () => {
    deliveriesHeld();

    await handler.withEnv(subscribed)({}, oneRoundContext());

    expect(byTopic(emf.values(OutboxMetricName.BACKLOG_SENT_UNCONFIRMED))).toEqual({
      'order.created': 2,
      'payment.captured': 0,
    });
    expect(byTopic(emf.values(OutboxMetricName.OLDEST_UNCONFIRMED_AGE_SECONDS))).toEqual({
      'order.created': 3_600,
      'payment.captured': 0,
    });
    expect(byTopic(emf.values(OutboxMetricName.FAILED_MESSAGES))).toEqual({
      'order.created': 1,
      'payment.captured': 0,
    });
    expect(
      emf.values(OutboxMetricName.FAILED_MESSAGES).find((v) => v.topic === 'order.created'),
    ).toMatchObject({
      dimensions: [['service', 'topic']],
    });
  });

  it('counts a delivery it moved to FAILED after its last attempt as its subscriber’s MessagesFailed', async () => {
    const exhausted = outboxItem({
      messageId: deliveryId(7, 'loyalty'),
      subscriber: 'loyalty',
      status: MessageStatus.PENDING,
      attempts: 10,
      dueShard: '0',
      nextAttemptAt: new Date(FIXED_NOW.getTime() - 1_000).toISOString(),
      lastError: 'queue missing',
    });
    deliveriesHeld([exhausted]);

    const report = await handler.withEnv(subscribed)({}, oneRoundContext());

    expect(report.problems).toEqual([
      expect.objectContaining({
        messageId: deliveryId(7, 'loyalty'),
        subscriber: 'loyalty',
        outcome: 'FAILED',
      }),
    ]);
    expect(bySubscriber(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({
      loyalty: 1,
      'loyalty order.created': 1,
    });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({ 'order.created': 1 });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });
});
