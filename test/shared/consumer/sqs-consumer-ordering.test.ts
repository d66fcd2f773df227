import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it, type Mock, vi } from 'vitest';
import { parkedKeyOf } from '../../../shared/aws/inbox-table.ts';
import { CLAIM_CHECK_PREFIX, checkIn } from '../../../shared/claim-check/claim-check-reference.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import type { FailureHandling, QueueOperations } from '../../../shared/consumer/failure-handling.ts';
import { consumeSqsEvent, type SqsConsumer } from '../../../shared/lambda/consumer-handler.ts';
import type { ConsumeDeps } from '../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryObjectStore } from '../../../shared/memory/memory-object-store.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { consumeMetrics } from '../../../shared/observability/report-metrics.ts';
import type { ConfirmOutcome } from '../../../shared/outbox/outbox-store.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  MEMORY_TABLE_SCHEMAS,
  sqsRecord,
  testMessageId,
} from '../../support/factories.ts';

const FIFO_ARN = 'arn:aws:sqs:eu-west-1:123456789012:orders.fifo';
const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
const BUCKET = 'shop-claims';

/** Message `seq` of order `aggregate` (ordered in scope `order`). */
function ordered(aggregate: string, seq: number): Envelope {
  return envelope({
    messageId: testMessageId(aggregate.charCodeAt(0) * 100 + seq),
    aggregateId: aggregate,
    orderKey: `order#${aggregate}`,
    seq,
    payload: { step: `${aggregate}${seq}` },
  });
}

/** A record as a FIFO queue delivers it: its message group is the order key. */
function fifoRecord(message: Envelope): SQSRecord {
  const record = sqsRecord(message);
  return {
    ...record,
    eventSourceARN: FIFO_ARN,
    attributes: { ...record.attributes, MessageGroupId: message.orderKey ?? message.aggregateId },
  };
}

/** Appends the message's step to its aggregate's history, so the order of the applies shows. */
const plan: PlanEffect = (message) => ({
  apply: [
    {
      Update: {
        TableName: 'orders',
        Key: { orderId: message.aggregateId },
        UpdateExpression: 'SET #history = list_append(if_not_exists(#history, :none), :step)',
        ExpressionAttributeNames: { '#history': 'history' },
        ExpressionAttributeValues: { ':none': [], ':step': [(message.payload as { step: string }).step] },
      },
    },
  ],
  onConditionFailure: 'REJECTED',
});

/** The order key a transaction moves or checks the cursor of, if any. */
function cursorOrderKey(command: TransactWriteCommand): string | undefined {
  for (const action of command.input.TransactItems ?? []) {
    const key = (action.Update?.Key ?? action.ConditionCheck?.Key)?.messageId;
    if (typeof key === 'string' && key.startsWith('cursor#')) return key.slice('cursor#'.length);
  }
  return undefined;
}

let memory: MemoryDocumentClient;
let confirmed: string[];
let inFlight: Map<string, number>;
let mostInFlight: Map<string, number>;
let overlaps: number;
let failTransactionOf: Set<string>;
let logger: { info: Mock; warn: Mock };

/** The in-memory tables behind a client whose transactions take a few turns of the event loop, observed. */
function observedClient(): ConsumeDeps['client'] {
  return {
    send: async (command: unknown) => {
      if (!(command instanceof TransactWriteCommand)) return memory.send(command);
      const orderKey = cursorOrderKey(command) ?? '(none)';
      const messageId = String(command.input.TransactItems?.[0]?.Put?.Item?.messageId);
      const others = [...inFlight.entries()].filter(([key, count]) => key !== orderKey && count > 0);
      if (others.length > 0) overlaps += 1;
      inFlight.set(orderKey, (inFlight.get(orderKey) ?? 0) + 1);
      mostInFlight.set(orderKey, Math.max(mostInFlight.get(orderKey) ?? 0, inFlight.get(orderKey) ?? 0));
      try {
        for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setTimeout(resolve, 1));
        if (failTransactionOf.has(messageId)) throw new Error(`DynamoDB is unavailable for ${messageId}`);
        return await memory.send(command);
      } finally {
        inFlight.set(orderKey, (inFlight.get(orderKey) ?? 1) - 1);
      }
    },
  } as unknown as ConsumeDeps['client'];
}

function consumerWith(overrides: Partial<SqsConsumer> = {}, deps: Partial<ConsumeDeps> = {}): SqsConsumer {
  return {
    plan,
    logger,
    deps: {
      client: observedClient(),
      inboxTable: 'inbox',
      confirmer: {
        confirm: async (messageId: string): Promise<ConfirmOutcome> => {
          confirmed.push(messageId);
          return 'CONFIRMED';
        },
      },
      clock: () => FIXED_NOW,
      sleep: async () => {},
      ...deps,
    },
    ...overrides,
  };
}

async function history(aggregate: string): Promise<unknown> {
  const result = await memory.send(new GetCommand({ TableName: 'orders', Key: { orderId: aggregate } }));
  return (result.Item as { history?: unknown } | undefined)?.history ?? [];
}

beforeEach(() => {
  memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  confirmed = [];
  inFlight = new Map();
  mostInFlight = new Map();
  overlaps = 0;
  failTransactionOf = new Set();
  logger = { info: vi.fn(), warn: vi.fn() };
});

describe('consumeSqsEvent on an ordered topic', () => {
  it('applies one aggregate’s records in seq order whatever their batch order, beside the other aggregates', async () => {
    const plain = envelope({ messageId: testMessageId(9), aggregateId: 'C', payload: { step: 'C' } });
    const batch = [
      ordered('A', 3),
      ordered('B', 1),
      ordered('A', 1),
      plain,
      ordered('A', 2),
      ordered('B', 2),
    ];
    // Every record its own key: only the order key the consumer adds holds one aggregate's records in turn.
    const consumer = consumerWith({ conflictKeys: (message) => [message.messageId] });

    const { response, topics } = await consumeSqsEvent(
      { Records: batch.map((message) => sqsRecord(message)) },
      lambdaContext(),
      consumer,
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(await history('A')).toEqual(['A1', 'A2', 'A3']);
    expect(await history('B')).toEqual(['B1', 'B2']);
    expect(mostInFlight.get('order#A')).toBe(1);
    expect(overlaps).toBeGreaterThan(0);
    // A3 was parked, then applied when A2 drained it: counted once as parked, once as applied, and confirmed.
    expect(topics['order.created']).toMatchObject({ applied: 6, parked: 1, duplicates: 0, rejected: 0 });
    expect(topics['order.created']?.confirmLatenciesMs).toHaveLength(6);
    expect(consumeMetrics(topics)['order.created']).toMatchObject({ MessagesApplied: 6, MessagesParked: 1 });
    expect([...confirmed].sort()).toEqual(batch.map((message) => message.messageId).sort());
    expect(logger.info).toHaveBeenCalledWith(
      'consumed message',
      expect.objectContaining({
        messageId: ordered('A', 3).messageId,
        orderKey: 'order#A',
        seq: 3,
        kind: 'PARKED',
      }),
    );
    expect(logger.info).toHaveBeenCalledWith(
      'consumed parked message',
      expect.objectContaining({
        messageId: ordered('A', 3).messageId,
        kind: 'APPLIED',
        confirmation: 'CONFIRMED',
      }),
    );
  });

  it('publishes no MessagesParked for a topic that parked nothing', async () => {
    const { topics } = await consumeSqsEvent(
      { Records: [sqsRecord(ordered('A', 1))] },
      lambdaContext(),
      consumerWith(),
    );

    expect(consumeMetrics(topics)['order.created']).not.toHaveProperty('MessagesParked');
  });

  it('on a FIFO queue fails only the failing record’s group: its later records are not applied, the other groups are', async () => {
    failTransactionOf.add(ordered('A', 1).messageId);
    const batch = [ordered('A', 1), ordered('B', 1), ordered('A', 2), ordered('B', 2)];

    const { response } = await consumeSqsEvent(
      { Records: batch.map(fifoRecord) },
      lambdaContext(),
      consumerWith(),
    );

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      `sqs-${ordered('A', 1).messageId}`,
      `sqs-${ordered('A', 2).messageId}`,
    ]);
    expect(await history('B')).toEqual(['B1', 'B2']);
    expect(await history('A')).toEqual([]);
    // A2 was skipped, not parked: SQS redelivers it after A1.
    expect(memory.items('inbox').map((item) => item.messageId)).not.toContain(parkedKeyOf('order#A', 2));
  });

  it('puts a parked message that fails after its predecessor back on the queue as a copy of its own', async () => {
    const s3 = new MemoryObjectStore({ clock: () => FIXED_NOW });
    s3.createBucket(BUCKET, [{ prefix: CLAIM_CHECK_PREFIX, expireAfterDays: 47 }]);
    const { object, message: second } = checkIn(ordered('A', 2), { bucket: BUCKET });
    await s3.put(object);
    const queues = {
      changeVisibility: vi.fn<QueueOperations['changeVisibility']>(async () => {}),
      deadLetter: vi.fn<QueueOperations['deadLetter']>(async () => {}),
      requeue: vi.fn<QueueOperations['requeue']>(async () => {}),
    };
    const failures: FailureHandling = {
      queues,
      sourceQueueUrl: SOURCE,
      deadLetterQueueUrl: `${SOURCE}-dlq`,
      maxReceiveCount: 5,
      backoff: { baseSeconds: 10, maxSeconds: 900 },
      random: () => 0.5,
    };
    const consumer = consumerWith({ failures }, { claimCheck: { store: s3, bucket: BUCKET } });
    await consumeSqsEvent({ Records: [sqsRecord(second)] }, lambdaContext(), consumer);
    s3.delete(BUCKET, object.key);

    const first = sqsRecord(ordered('A', 1));
    const { response, topics } = await consumeSqsEvent({ Records: [first] }, lambdaContext(), consumer);

    // The predecessor was applied: its record succeeds.
    expect(response.batchItemFailures).toEqual([]);
    expect(await history('A')).toEqual(['A1']);
    expect(queues.requeue).toHaveBeenCalledTimes(1);
    const [queueUrl, copy, delaySeconds] = queues.requeue.mock.calls[0] ?? [];
    expect(queueUrl).toBe(SOURCE);
    expect(JSON.parse(copy?.body ?? '{}')).toEqual(second);
    expect(copy?.attributes.MessageGroupId).toBe('order#A');
    expect(copy?.messageAttributes.message_id?.stringValue).toBe(second.messageId);
    expect(delaySeconds).toBeGreaterThanOrEqual(1);
    expect(topics['order.created']).toMatchObject({ applied: 1, requeued: 1 });
    expect(logger.warn).toHaveBeenCalledWith(
      'parked message failed',
      expect.objectContaining({ messageId: second.messageId, seq: 2, disposition: 'REQUEUED' }),
    );

    // The copy arrives once the payload is back: the cursor stands at its predecessor, so it applies.
    await s3.put(object);
    const { response: later } = await consumeSqsEvent(
      { Records: [copy as SQSRecord] },
      lambdaContext(),
      consumer,
    );
    expect(later.batchItemFailures).toEqual([]);
    expect(await history('A')).toEqual(['A1', 'A2']);
  });

  it('keeps an unordered batch as before: no order key, no cursor rows', async () => {
    const plainA = envelope({ messageId: testMessageId(1), aggregateId: 'A', payload: { step: 'x' } });
    const plainB = envelope({ messageId: testMessageId(2), aggregateId: 'A', payload: { step: 'y' } });
    await memory.send(new PutCommand({ TableName: 'orders', Item: { orderId: 'A', history: [] } }));

    const { response, topics } = await consumeSqsEvent(
      { Records: [sqsRecord(plainA), sqsRecord(plainB)] },
      lambdaContext(),
      consumerWith(),
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(topics['order.created']).toMatchObject({ applied: 2, parked: 0 });
    expect(
      memory
        .items('inbox')
        .map((item) => item.messageId)
        .sort(),
    ).toEqual([plainA.messageId, plainB.messageId].sort());
    expect(logger.info).toHaveBeenCalledWith('consumed message', {
      messageId: plainA.messageId,
      topic: 'order.created',
      aggregateId: 'A',
      kind: 'APPLIED',
      outcome: 'APPLIED',
      confirmation: 'CONFIRMED',
    });
  });
});
