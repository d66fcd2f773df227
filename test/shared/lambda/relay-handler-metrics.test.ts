import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { createRelayHandler } from '../../../shared/lambda/relay-handler.ts';
import { deliveryIdOf } from '../../../shared/message/delivery-id.ts';
import { DEFAULT_METRICS_NAMESPACE, OutboxMetricName } from '../../../shared/observability/metric-names.ts';
import {
  FIXED_NOW,
  lambdaContext,
  outboxItem,
  streamRecord,
  testMessageId,
} from '../../support/factories.ts';
import { bySubscriber, byTopic, captureEmf, type EmfCapture } from './emf-output.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const ORDERS = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const PAYMENTS = 'https://sqs.eu-west-1.amazonaws.com/123456789012/payment-captured';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const env = {
  OUTBOX_TABLE: 'outbox-table',
  TOPIC_QUEUES: JSON.stringify({ 'order.created': ORDERS, 'payment.captured': PAYMENTS }),
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_SERVICE_NAME: 'orders-relay',
};
const handler = createRelayHandler();
let emf: EmfCapture;

/** SQS accepts every entry of every batch. */
function sqsAcceptsAll(): void {
  sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
    Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: 'x' })),
  }));
}

/** Three order.created messages and one payment.captured, as stream inserts. */
function mixedBatch() {
  return {
    Records: [1, 2, 3, 4].map((n) =>
      streamRecord(
        outboxItem({ messageId: testMessageId(n), topic: n === 4 ? 'payment.captured' : 'order.created' }),
        { sequenceNumber: String(n) },
      ),
    ),
  };
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

describe('createRelayHandler metrics', () => {
  it('publishes MessagesSent per topic, in the default namespace, with service and topic as dimensions', async () => {
    sqsAcceptsAll();

    await handler.withEnv(env)(mixedBatch(), lambdaContext());

    const sent = emf.values(OutboxMetricName.MESSAGES_SENT);
    expect(byTopic(sent)).toEqual({ 'order.created': 3, 'payment.captured': 1 });
    for (const value of sent) {
      expect(value).toMatchObject({
        namespace: DEFAULT_METRICS_NAMESPACE,
        service: 'orders-relay',
        unit: 'Count',
        dimensions: [['service', 'topic']],
      });
    }
    expect(byTopic(emf.values(OutboxMetricName.SEND_FAILURES))).toEqual({
      'order.created': 0,
      'payment.captured': 0,
    });
    // One document per topic: EMF gives a document one dimension set.
    expect(emf.documents()).toHaveLength(2);
  });

  it('publishes in the namespace POWERTOOLS_METRICS_NAMESPACE names', async () => {
    sqsAcceptsAll();

    await handler.withEnv({ ...env, POWERTOOLS_METRICS_NAMESPACE: 'Shop/Outbox' })(
      mixedBatch(),
      lambdaContext(),
    );

    expect(emf.values(OutboxMetricName.MESSAGES_SENT).map((v) => v.namespace)).toEqual([
      'Shop/Outbox',
      'Shop/Outbox',
    ]);
  });

  it('counts an entry SQS refused as a send failure and a scheduled retry', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
      Failed: (input.Entries ?? []).map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError' })),
    }));
    ddb.on(UpdateCommand).resolves({ Attributes: { status: 'PENDING' } });

    await handler.withEnv(env)({ Records: [streamRecord(outboxItem())] }, lambdaContext());

    expect(byTopic(emf.values(OutboxMetricName.SEND_FAILURES))).toEqual({ 'order.created': 1 });
    expect(byTopic(emf.values(OutboxMetricName.RETRIES_SCHEDULED))).toEqual({ 'order.created': 1 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_SENT))).toEqual({ 'order.created': 0 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({ 'order.created': 0 });
  });

  it('counts a message that became FAILED on its last attempt as MessagesFailed', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
      Failed: (input.Entries ?? []).map((e) => ({
        Id: e.Id,
        SenderFault: true,
        Code: 'InvalidParameterValue',
      })),
    }));
    const policies = {
      'order.created': { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 10_000, maxAttempts: 1 },
    };

    await handler.withEnv({ ...env, RETRY_POLICIES: JSON.stringify(policies) })(
      { Records: [streamRecord(outboxItem())] },
      lambdaContext(),
    );

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({ 'order.created': 1 });
    expect(byTopic(emf.values(OutboxMetricName.RETRIES_SCHEDULED))).toEqual({ 'order.created': 0 });
  });

  it('publishes nothing, and warns of nothing, for a batch with no outbox message', async () => {
    await handler.withEnv(env)({ Records: [] }, lambdaContext());

    expect(emf.documents()).toEqual([]);
  });

  it.each([
    ['POWERTOOLS_METRICS_DISABLED', 'true'],
    ['POWERTOOLS_DEV', 'true'],
  ])('publishes nothing when %s is %s', async (name, value) => {
    sqsAcceptsAll();

    await handler.withEnv({ ...env, [name]: value })(mixedBatch(), lambdaContext());

    expect(emf.documents()).toEqual([]);
  });

  it('publishes when POWERTOOLS_METRICS_DISABLED is false, even with POWERTOOLS_DEV set', async () => {
    sqsAcceptsAll();

    await handler.withEnv({ ...env, POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false' })(
      mixedBatch(),
      lambdaContext(),
    );

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_SENT))).toEqual({
      'order.created': 3,
      'payment.captured': 1,
    });
  });

  it.each([
    ['POWERTOOLS_METRICS_DISABLED', 'maybe'],
    ['POWERTOOLS_METRICS_NAMESPACE', ' '],
  ])('fails loudly at start with a ConfigError naming %s when it is "%s"', (name, value) => {
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(name);
  });
});

describe('createRelayHandler metrics per subscriber', () => {
  const INVENTORY = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Orders-Outbox-inventory';
  const LOYALTY = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Orders-Outbox-loyalty';
  const subscribed = {
    ...env,
    TOPIC_QUEUES: '{}',
    SUBSCRIPTIONS: JSON.stringify({
      'order.created': { inventory: INVENTORY, loyalty: LOYALTY },
      'order.cancelled': { inventory: INVENTORY },
    }),
  };
  /** `subscriber`'s delivery of message `n`, as the writer stores it, as a stream insert. */
  const delivery = (n: number, subscriber: string, topic = 'order.created') =>
    streamRecord(outboxItem({ messageId: deliveryIdOf(testMessageId(n), subscriber), subscriber, topic }), {
      sequenceNumber: `${n}${subscriber}`,
    });

  it('publishes each subscriber’s sends per topic and over its topics, beside the topic’s own', async () => {
    // Loyalty's queue refuses everything; inventory's accepts.
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) =>
      input.QueueUrl === LOYALTY
        ? {
            Failed: (input.Entries ?? []).map((e) => ({
              Id: e.Id,
              SenderFault: false,
              Code: 'InternalError',
            })),
          }
        : {
            Successful: (input.Entries ?? []).map((e) => ({
              Id: e.Id,
              MessageId: 'm',
              MD5OfMessageBody: 'x',
            })),
          },
    );
    ddb.on(UpdateCommand).resolves({ Attributes: { status: 'PENDING' } });

    await handler.withEnv(subscribed)(
      {
        Records: [
          delivery(1, 'inventory'),
          delivery(1, 'loyalty'),
          delivery(2, 'inventory'),
          delivery(3, 'inventory', 'order.cancelled'),
        ],
      },
      lambdaContext(),
    );

    // The topic counts every delivery, as before.
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_SENT))).toEqual({
      'order.cancelled': 1,
      'order.created': 2,
    });
    expect(bySubscriber(emf.values(OutboxMetricName.MESSAGES_SENT))).toEqual({
      inventory: 3,
      'inventory order.cancelled': 1,
      'inventory order.created': 2,
      loyalty: 0,
      'loyalty order.created': 0,
    });
    expect(bySubscriber(emf.values(OutboxMetricName.SEND_FAILURES))).toEqual({
      inventory: 0,
      'inventory order.cancelled': 0,
      'inventory order.created': 0,
      loyalty: 1,
      'loyalty order.created': 1,
    });
    expect(bySubscriber(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({
      inventory: 0,
      'inventory order.cancelled': 0,
      'inventory order.created': 0,
      loyalty: 0,
      'loyalty order.created': 0,
    });
    expect(bySubscriber(emf.values(OutboxMetricName.RETRIES_SCHEDULED))).toEqual({});
    const dimensionsOf = (subscriber: string, topic?: string) =>
      emf
        .values(OutboxMetricName.SEND_FAILURES)
        .filter((value) => value.subscriber === subscriber && value.topic === topic)
        .map((value) => ({ service: value.service, unit: value.unit, dimensions: value.dimensions }));
    expect(dimensionsOf('loyalty')).toEqual([
      { service: 'orders-relay', unit: 'Count', dimensions: [['service', 'subscriber']] },
    ]);
    expect(dimensionsOf('loyalty', 'order.created')).toEqual([
      { service: 'orders-relay', unit: 'Count', dimensions: [['service', 'topic', 'subscriber']] },
    ]);
    expect(
      emf.values(OutboxMetricName.MESSAGES_SENT).filter((value) => value.subscriber === undefined),
    ).toEqual([
      expect.objectContaining({ topic: 'order.cancelled', dimensions: [['service', 'topic']] }),
      expect.objectContaining({ topic: 'order.created', dimensions: [['service', 'topic']] }),
    ]);
  });

  it('counts a delivery that became FAILED on its last attempt as its subscriber’s MessagesFailed', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
      Failed: (input.Entries ?? []).map((e) => ({
        Id: e.Id,
        SenderFault: true,
        Code: 'InvalidParameterValue',
      })),
    }));
    const policies = { loyalty: { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 10_000, maxAttempts: 1 } };

    await handler.withEnv({ ...subscribed, SUBSCRIBER_RETRY_POLICIES: JSON.stringify(policies) })(
      { Records: [delivery(1, 'inventory'), delivery(1, 'loyalty')] },
      lambdaContext(),
    );

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({ 'order.created': 1 });
    expect(bySubscriber(emf.values(OutboxMetricName.MESSAGES_FAILED))).toEqual({
      inventory: 0,
      'inventory order.created': 0,
      loyalty: 1,
      'loyalty order.created': 1,
    });
  });
});

describe('createRelayHandler tracing', () => {
  it('sends AWSTraceHeader for a message with a valid traceparent, and none for one without', async () => {
    sqsAcceptsAll();
    const traced = outboxItem({ messageId: testMessageId(1), headers: { traceparent: TRACEPARENT } });
    const untraced = outboxItem({ messageId: testMessageId(2), headers: { traceparent: 'not-a-trace' } });

    await handler.withEnv(env)(
      {
        Records: [
          streamRecord(traced, { sequenceNumber: '1' }),
          streamRecord(untraced, { sequenceNumber: '2' }),
        ],
      },
      lambdaContext(),
    );

    const entries = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries ?? [];
    expect(entries.map((entry) => [entry.Id, entry.MessageSystemAttributes])).toEqual([
      [
        testMessageId(1),
        {
          AWSTraceHeader: {
            DataType: 'String',
            StringValue: 'Root=1-0af76519-16cd43dd8448eb211c80319c;Parent=b7ad6b7169203331;Sampled=1',
          },
        },
      ],
      [testMessageId(2), undefined],
    ]);
  });
});
