import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { SqsPublisher } from '../../../shared/aws/sqs-publisher.ts';
import { relayStreamBatch, relayStreamEvent } from '../../../shared/lambda/relay-stream-batch.ts';
import type { RelayDeps } from '../../../shared/relay/relay-messages.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import { FIXED_NOW, outboxItem, streamRecord, testMessageId } from '../../support/factories.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

const deps: RelayDeps = {
  publisher: new SqsPublisher(new SQSClient({ region: 'eu-west-1' })),
  store: new DynamoOutboxStore({
    client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
    tableName: 'outbox',
  }),
  queueFor: (topic) => (topic === 'order.created' ? QUEUE : undefined),
  retryPolicyFor: () => DEFAULT_RETRY_POLICY,
  clock: () => FIXED_NOW,
  random: () => 0.5,
};

const logger = { info: vi.fn(), warn: vi.fn() };

function sequenceNumber(n: number): string {
  return String(100_000_000_000_000_000_000n + BigInt(n));
}

/** A stream batch announcing `count` fresh PENDING messages, record n carrying testMessageId(n). */
function insertBatch(count: number): DynamoDBStreamEvent {
  return {
    Records: Array.from({ length: count }, (_, i) =>
      streamRecord(outboxItem({ messageId: testMessageId(i + 1) }), {
        sequenceNumber: sequenceNumber(i + 1),
      }),
    ),
  };
}

/** SQS accepts every entry except those whose id is in `rejected`. */
function sqsAccepts(rejected: ReadonlySet<string> = new Set()) {
  sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => ({
    Successful: (input.Entries ?? [])
      .filter((e) => !rejected.has(e.Id ?? ''))
      .map((e) => ({ Id: e.Id, MessageId: `sqs-${e.Id}`, MD5OfMessageBody: 'x' })),
    Failed: (input.Entries ?? [])
      .filter((e) => rejected.has(e.Id ?? ''))
      .map((e) => ({ Id: e.Id, SenderFault: true, Code: 'InvalidParameterValue', Message: 'rejected' })),
  }));
}

function updates(): UpdateCommandInput[] {
  return ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
}

function updatesTo(status: string): string[] {
  return updates()
    .filter((input) => input.ExpressionAttributeValues?.[':to'] === status)
    .map((input) => String(input.Key?.messageId))
    .sort();
}

function sentMessageIds(): string[] {
  return sqs
    .commandCalls(SendMessageBatchCommand)
    .flatMap((call) => call.args[0].input.Entries ?? [])
    .map((entry) => entry.Id ?? '')
    .sort();
}

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  logger.info.mockReset();
  logger.warn.mockReset();
  ddb.on(UpdateCommand).resolves({});
});

describe('relayStreamBatch', () => {
  it('forwards 25 inserted messages in SendMessageBatch calls of 10, 10 and 5 and marks them all SENT', async () => {
    sqsAccepts();

    const response = await relayStreamBatch(insertBatch(25), deps, logger);

    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((call) => call.args[0].input.Entries?.length)).toEqual([10, 10, 5]);
    for (const call of calls) {
      expect(call.args[0].input.QueueUrl).toBe(QUEUE);
      for (const entry of call.args[0].input.Entries ?? []) {
        expect(entry.MessageAttributes?.message_id?.StringValue).toBe(entry.Id);
        expect(entry.MessageAttributes?.topic?.StringValue).toBe('order.created');
      }
    }
    expect(updatesTo('SENT')).toHaveLength(25);
    expect(response).toEqual({ batchItemFailures: [] });
  });

  it('carries the traceparent header to the SQS message attributes', async () => {
    sqsAccepts();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

    await relayStreamBatch(
      { Records: [streamRecord(outboxItem({ headers: { traceparent } }))] },
      deps,
      logger,
    );

    const entry = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries?.[0];
    expect(entry?.MessageAttributes?.traceparent).toEqual({ DataType: 'String', StringValue: traceparent });
  });

  it('issues the SendMessageBatch calls in parallel', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const releases: (() => void)[] = [];
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((release) => releases.push(release));
      inFlight -= 1;
      return {
        Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: 'x' })),
      };
    });

    const relayed = relayStreamBatch(insertBatch(25), deps, logger);
    await vi.waitFor(() => expect(releases).toHaveLength(3));
    for (const release of releases) release();

    await expect(relayed).resolves.toEqual({ batchItemFailures: [] });
    expect(maxInFlight).toBe(3);
  });

  it('marks each message SENT before the send, and undoes the mark of an entry SQS rejected, failing no record', async () => {
    const rejected = testMessageId(2);
    sqsAccepts(new Set([rejected]));

    const response = await relayStreamBatch(insertBatch(3), deps, logger);

    expect(updatesTo('SENT')).toEqual([testMessageId(1), testMessageId(2), testMessageId(3)]);
    const failure = updates().find(
      (input) => input.Key?.messageId === rejected && input.ExpressionAttributeValues?.[':to'] === 'PENDING',
    );
    expect(failure?.ConditionExpression).toContain('#sentAt = :markedAt');
    expect(failure?.ExpressionAttributeValues).toMatchObject({
      ':to': 'PENDING',
      ':attempts': 1,
      ':markedAt': FIXED_NOW.toISOString(),
      ':error': 'InvalidParameterValue: rejected',
      // Full jitter with random 0.5 on the first 2 s ceiling.
      ':next': new Date(FIXED_NOW.getTime() + 1_000).toISOString(),
    });
    expect(response).toEqual({ batchItemFailures: [] });
  });

  it('returns the sequence number of a record whose SENT mark could not be written, and does not send it', async () => {
    sqsAccepts();
    ddb
      .on(UpdateCommand, { Key: { messageId: testMessageId(2) } })
      .rejects(new Error('DynamoDB unavailable'));

    const response = await relayStreamBatch(insertBatch(3), deps, logger);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumber(2) }] });
    expect(updatesTo('SENT')).toEqual([testMessageId(1), testMessageId(2), testMessageId(3)]);
    const sent = sqs
      .commandCalls(SendMessageBatchCommand)
      .flatMap((call) => call.args[0].input.Entries ?? [])
      .map((entry) => entry.Id);
    expect(sent).toHaveLength(2);
  });

  it('treats a message already advanced by someone else as settled, not as a failure', async () => {
    sqsAccepts();
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));

    await expect(relayStreamBatch(insertBatch(2), deps, logger)).resolves.toEqual({ batchItemFailures: [] });
  });

  it('sends a message whose insert appears twice in the batch only once', async () => {
    sqsAccepts();
    const item = outboxItem({ messageId: testMessageId(5) });

    await relayStreamBatch(
      {
        Records: [
          streamRecord(item, { sequenceNumber: sequenceNumber(1) }),
          streamRecord(item, { sequenceNumber: sequenceNumber(2) }),
        ],
      },
      deps,
      logger,
    );

    expect(sentMessageIds()).toEqual([testMessageId(5)]);
    expect(updatesTo('SENT')).toEqual([testMessageId(5)]);
  });

  it('records a clear error on a message whose topic has no queue, and sends nothing', async () => {
    const item = outboxItem({ messageId: testMessageId(1), topic: 'payment.captured' });

    const response = await relayStreamBatch({ Records: [streamRecord(item)] }, deps, logger);

    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    expect(updates()).toHaveLength(1);
    expect(updates()[0]?.ExpressionAttributeValues?.[':error']).toBe(
      'no queue is routed for topic "payment.captured"',
    );
    expect(response).toEqual({ batchItemFailures: [] });
  });

  it('skips modifications, removals, non-PENDING inserts and records that are not outbox messages', async () => {
    sqsAccepts();
    const event: DynamoDBStreamEvent = {
      Records: [
        streamRecord(outboxItem({ messageId: testMessageId(1), status: 'SENT' }), { eventName: 'MODIFY' }),
        streamRecord(outboxItem({ messageId: testMessageId(2) }), { eventName: 'REMOVE' }),
        streamRecord(outboxItem({ messageId: testMessageId(3), status: 'CONFIRMED' })),
        streamRecord({ orderId: 'order-1', customerId: 'c' }),
        streamRecord(outboxItem({ messageId: testMessageId(4) }), { newImage: null }),
      ],
    };

    const response = await relayStreamBatch(event, deps, logger);

    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    expect(ddb.calls()).toHaveLength(0);
    expect(response).toEqual({ batchItemFailures: [] });
    // The two records that are not outbox messages are worth a warning; status changes are not.
    expect(logger.warn).toHaveBeenCalledTimes(2);
  });

  it('records FAILED, with the reason, a PENDING outbox item that can never be sent, and relays the rest', async () => {
    sqsAccepts();
    ddb.on(UpdateCommand).resolves({});
    const event: DynamoDBStreamEvent = {
      Records: [
        streamRecord(outboxItem({ messageId: 'not-a-ulid' }), { sequenceNumber: sequenceNumber(1) }),
        streamRecord(outboxItem({ messageId: testMessageId(2) }), { sequenceNumber: sequenceNumber(2) }),
      ],
    };

    const response = await relayStreamBatch(event, deps, logger);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(
      sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? []),
    ).toHaveLength(1);
    const failed = updates().find((u) => u.Key?.messageId === 'not-a-ulid');
    expect(failed?.ExpressionAttributeValues).toMatchObject({
      ':to': 'FAILED',
      ':error': expect.stringContaining('messageId'),
    });
  });

  it('fails alone a record whose stored payload holds a number JavaScript cannot read back', async () => {
    sqsAccepts();
    ddb.on(UpdateCommand).resolves({});
    const bad = streamRecord(outboxItem({ messageId: testMessageId(1) }), {
      sequenceNumber: sequenceNumber(1),
    });
    const image = bad.dynamodb?.NewImage;
    if (image === undefined) throw new Error('no image');
    image.payload = { M: { total: { N: '123456789012345678901234567890' } } };
    const event: DynamoDBStreamEvent = {
      Records: [
        bad,
        streamRecord(outboxItem({ messageId: testMessageId(2) }), { sequenceNumber: sequenceNumber(2) }),
      ],
    };

    const response = await relayStreamBatch(event, deps, logger);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(
      sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? []),
    ).toHaveLength(1);
    const failed = updates().find((u) => u.Key?.messageId === testMessageId(1));
    expect(failed?.ExpressionAttributeValues?.[':to']).toBe('FAILED');
    expect(failed?.ExpressionAttributeValues?.[':error']).toContain('123456789012345678901234567890');
  });

  it('forwards the PENDING inserts of a batch that also holds records to skip', async () => {
    sqsAccepts();
    const event: DynamoDBStreamEvent = {
      Records: [
        streamRecord(outboxItem({ messageId: testMessageId(1), status: 'SENT' }), { eventName: 'MODIFY' }),
        streamRecord(outboxItem({ messageId: testMessageId(2) }), { sequenceNumber: sequenceNumber(2) }),
        streamRecord({ garbage: true }),
      ],
    };

    await relayStreamBatch(event, deps, logger);

    expect(sentMessageIds()).toEqual([testMessageId(2)]);
  });

  it('records every entry as failed when the whole SendMessageBatch call throws', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('connect ETIMEDOUT'));

    const response = await relayStreamBatch(insertBatch(3), deps, logger);

    // Marked for the send, then each mark undone with the error.
    expect(updatesTo('SENT')).toEqual([testMessageId(1), testMessageId(2), testMessageId(3)]);
    expect(updatesTo('PENDING')).toEqual([testMessageId(1), testMessageId(2), testMessageId(3)]);
    expect(
      updates()
        .filter((input) => input.ExpressionAttributeValues?.[':to'] === 'PENDING')
        .every((input) => String(input.ExpressionAttributeValues?.[':error']).includes('ETIMEDOUT')),
    ).toBe(true);
    expect(response).toEqual({ batchItemFailures: [] });
  });

  it('adds MessageGroupId = aggregateId and MessageDeduplicationId = messageId-round for a FIFO queue', async () => {
    sqsAccepts();
    const fifoDeps: RelayDeps = { ...deps, queueFor: () => `${QUEUE}.fifo` };
    const item = outboxItem({ messageId: testMessageId(8), aggregateId: 'order-8' });

    await relayStreamBatch({ Records: [streamRecord(item)] }, fifoDeps, logger);

    const input = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input;
    expect(input?.QueueUrl).toBe(`${QUEUE}.fifo`);
    expect(input?.Entries?.[0]).toMatchObject({
      MessageGroupId: 'order-8',
      MessageDeduplicationId: `${testMessageId(8)}-0`,
    });
  });
  it('sends an order key’s messages in seq order when the stream delivers them reversed, grouped by order key', async () => {
    sqsAccepts();
    ddb.on(UpdateCommand).resolves({});
    const fifoDeps: RelayDeps = { ...deps, queueFor: () => `${QUEUE}.fifo` };
    const records = [3, 2, 1].map((seq) =>
      streamRecord(
        outboxItem({
          messageId: testMessageId(10 + seq),
          aggregateId: 'order-7',
          orderKey: 'order#order-7',
          seq,
        }),
        { sequenceNumber: sequenceNumber(4 - seq) },
      ),
    );

    await relayStreamBatch({ Records: records }, fifoDeps, logger);

    const entries = sqs
      .commandCalls(SendMessageBatchCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(entries.map((entry) => [entry.Id, entry.MessageGroupId])).toEqual([
      [testMessageId(11), 'order#order-7'],
      [testMessageId(12), 'order#order-7'],
      [testMessageId(13), 'order#order-7'],
    ]);
  });
  it('logs each message held behind a failed one of its order key, and counts them in the summary', async () => {
    sqsAccepts(new Set([testMessageId(3)]));
    ddb.on(UpdateCommand).resolves({});
    const records = Array.from({ length: 12 }, (_, i) =>
      streamRecord(outboxItem({ messageId: testMessageId(i + 1), orderKey: 'order#order-1', seq: i + 1 }), {
        sequenceNumber: sequenceNumber(i + 1),
      }),
    );

    const response = await relayStreamBatch({ Records: records }, deps, logger);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(sentMessageIds()).not.toContain(testMessageId(11));
    for (const n of [11, 12]) {
      expect(logger.warn).toHaveBeenCalledWith('message not sent', {
        messageId: testMessageId(n),
        topic: 'order.created',
        aggregateId: 'order-1',
        orderKey: 'order#order-1',
        seq: n,
        outcome: 'HELD',
        error: expect.stringContaining('seq 3 of order#order-1'),
      });
    }
    expect(logger.info).toHaveBeenCalledWith(
      'relayed stream batch',
      expect.objectContaining({ held: 2, sent: 9 }),
    );
  });
});

describe('relayStreamEvent', () => {
  it('logs each message SQS refused with its id, topic and aggregate, and reports it per topic', async () => {
    sqsAccepts(new Set([testMessageId(2)]));
    ddb.on(UpdateCommand).resolves({});

    const { response, report } = await relayStreamEvent(insertBatch(3), deps, logger);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(report.topics).toEqual({
      'order.created': { accepted: 2, sendFailures: 1, retryScheduled: 1, failed: 0 },
    });
    expect(logger.warn).toHaveBeenCalledWith('message not sent', {
      messageId: testMessageId(2),
      topic: 'order.created',
      aggregateId: 'order-1',
      outcome: 'RETRY_SCHEDULED',
      error: expect.stringContaining('rejected'),
    });
  });
});
