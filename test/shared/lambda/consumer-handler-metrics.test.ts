import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { createConsumerHandler } from '../../../shared/lambda/consumer-handler.ts';
import { OutboxMetricName } from '../../../shared/observability/metric-names.ts';
import {
  decrementPlan,
  envelope,
  FIXED_NOW,
  lambdaContext,
  sqsRecord,
  testMessageId,
  transactionCanceled,
} from '../../support/factories.ts';
import { ddb, HANDLER_ENV, resetHandlerMocks } from '../../support/sqs-consumer-fixtures.ts';
import { byTopic, captureEmf, type EmfCapture } from './emf-output.ts';

const env = {
  ...HANDLER_ENV,
  INBOX_TABLE: 'inbox-table',
  OUTBOX_TABLE: 'outbox-table',
  POWERTOOLS_SERVICE_NAME: 'inventory',
};

/** One conditional decrement per message; REJECTED when its condition fails. */
const plan = (): PlanEffect =>
  decrementPlan({ table: 'stock-table', guarded: true, onConditionFailure: 'REJECTED' });

const handler = createConsumerHandler({ plan });
let emf: EmfCapture;

beforeEach(() => {
  resetHandlerMocks();
  // The messages were created at FIXED_NOW; the consumer confirms them 1.5 s later.
  vi.useFakeTimers({ now: FIXED_NOW.getTime() + 1_500, toFake: ['Date'] });
  emf = captureEmf();
});

afterEach(() => {
  emf.restore();
  vi.useRealTimers();
});

describe('createConsumerHandler metrics', () => {
  it('publishes MessagesApplied per topic and ConfirmLatencyMs from createdAt to the confirmation', async () => {
    const orders = [1, 2].map((n) => envelope({ messageId: testMessageId(n) }));
    const payment = envelope({ messageId: testMessageId(3), topic: 'payment.captured' });

    await handler.withEnv(env)({ Records: [...orders, payment].map((m) => sqsRecord(m)) }, lambdaContext());

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_APPLIED))).toEqual({
      'order.created': 2,
      'payment.captured': 1,
    });
    const latencies = emf.values(OutboxMetricName.CONFIRM_LATENCY_MS);
    expect(latencies.map((v) => [v.topic, v.value, v.unit])).toEqual([
      ['order.created', 1_500, 'Milliseconds'],
      ['order.created', 1_500, 'Milliseconds'],
      ['payment.captured', 1_500, 'Milliseconds'],
    ]);
    expect(latencies[0]).toMatchObject({ service: 'inventory', dimensions: [['service', 'topic']] });
  });

  it('counts a second delivery of an applied message as DuplicatesSuppressed, not as applied', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(
        transactionCanceled([{ Code: 'ConditionalCheckFailed', Item: { outcome: { S: 'APPLIED' } } }, {}]),
      );

    await handler.withEnv(env)({ Records: [sqsRecord()] }, lambdaContext());

    expect(byTopic(emf.values(OutboxMetricName.DUPLICATES_SUPPRESSED))).toEqual({ 'order.created': 1 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_APPLIED))).toEqual({ 'order.created': 0 });
  });

  it('counts a failed business condition as a BusinessRejection', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]))
      .resolves({});

    await handler.withEnv(env)({ Records: [sqsRecord()] }, lambdaContext());

    expect(byTopic(emf.values(OutboxMetricName.BUSINESS_REJECTIONS))).toEqual({ 'order.created': 1 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_APPLIED))).toEqual({ 'order.created': 0 });
  });

  it('counts an ordered message that arrives before its predecessor as MessagesParked, not applied nor confirmed', async () => {
    // The cursor refuses seq 3 (there is none yet); the park then commits.
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(
        transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }]),
      )
      .resolves({});
    const early = envelope({ messageId: testMessageId(1), orderKey: 'order#order-1', seq: 3 });

    await handler.withEnv(env)({ Records: [sqsRecord(early)] }, lambdaContext());

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_PARKED))).toEqual({ 'order.created': 1 });
    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_APPLIED))).toEqual({ 'order.created': 0 });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(emf.values(OutboxMetricName.CONFIRM_LATENCY_MS)).toEqual([]);
  });

  it('counts a poison message as DeadLettered under the topic its attributes name', async () => {
    const poison = sqsRecord(envelope({ topic: 'payment.captured' }), { rawBody: '{"messageId":' });

    await handler.withEnv(env)({ Records: [poison] }, lambdaContext());

    expect(byTopic(emf.values(OutboxMetricName.DEAD_LETTERED))).toEqual({ 'payment.captured': 1 });
    expect(emf.values(OutboxMetricName.CONFIRM_LATENCY_MS)).toEqual([]);
  });

  it('publishes no latency when the message was confirmed before (an earlier delivery confirmed it)', async () => {
    ddb.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: { messageId: { S: testMessageId(1) }, status: { S: 'CONFIRMED' } },
      }),
    );

    await handler.withEnv(env)(
      { Records: [sqsRecord(envelope({ messageId: testMessageId(1) }))] },
      lambdaContext(),
    );

    expect(byTopic(emf.values(OutboxMetricName.MESSAGES_APPLIED))).toEqual({ 'order.created': 1 });
    expect(emf.values(OutboxMetricName.CONFIRM_LATENCY_MS)).toEqual([]);
  });
});
