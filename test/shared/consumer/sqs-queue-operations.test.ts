import {
  ChangeMessageVisibilityCommand,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsQueueOperations } from '../../../shared/aws/sqs-queue-operations.ts';
import { DEAD_LETTER_ATTRIBUTES } from '../../../shared/consumer/dead-letter-cause.ts';
import { envelope, sqsRecord, testMessageId, withReceiveCount } from '../../support/factories.ts';

const sqs = mockClient(SQSClient);
const operations = new SqsQueueOperations(new SQSClient({ region: 'eu-west-1' }));
const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const DLQ = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created-dlq';
const message = envelope({ messageId: testMessageId(5) });

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'dlq-1' });
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
});

function sentToDlq(): SendMessageCommandInput {
  const calls = sqs.commandCalls(SendMessageCommand);
  expect(calls).toHaveLength(1);
  const input = calls[0]?.args[0].input;
  if (!input) throw new Error('no SendMessageCommand');
  return input;
}

/** Attribute name → string value of a sent message. */
function attributesOf(input: SendMessageCommandInput): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(input.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue]),
  );
}

describe('SqsQueueOperations.changeVisibility', () => {
  it('sends ChangeMessageVisibility for the receipt on the queue with the timeout in seconds', async () => {
    await operations.changeVisibility(SOURCE, 'receipt-abc', 40);

    expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((call) => call.args[0].input)).toEqual([
      { QueueUrl: SOURCE, ReceiptHandle: 'receipt-abc', VisibilityTimeout: 40 },
    ]);
  });
});

describe('SqsQueueOperations.deadLetter', () => {
  it('keeps the body byte for byte, whatever it holds', async () => {
    const body = ' {"messageId": "x", "note": "é 😀 \\u0000"}\n\t';
    const record = sqsRecord(message, { rawBody: body });

    await operations.deadLetter({
      queueUrl: DLQ,
      record: record,
      reason: 'POISON',
      lastError: 'PoisonMessageError: no envelope',
    });

    const input = sentToDlq();
    expect(input.QueueUrl).toBe(DLQ);
    expect(input.MessageBody).toBe(body);
    expect(Buffer.from(input.MessageBody ?? '').equals(Buffer.from(body))).toBe(true);
  });

  it('adds the reason, last error, receive count and source queue to the original message_id and topic', async () => {
    const record = withReceiveCount(sqsRecord(message), 5);

    await operations.deadLetter({
      queueUrl: DLQ,
      record: record,
      reason: 'MAX_RECEIVES',
      lastError: 'Error: DynamoDB unavailable',
    });

    expect(attributesOf(sentToDlq())).toEqual({
      [DEAD_LETTER_ATTRIBUTES.reason]: 'MAX_RECEIVES',
      [DEAD_LETTER_ATTRIBUTES.lastError]: 'Error: DynamoDB unavailable',
      [DEAD_LETTER_ATTRIBUTES.receiveCount]: '5',
      [DEAD_LETTER_ATTRIBUTES.sourceQueue]: record.eventSourceARN,
      message_id: message.messageId,
      topic: 'order.created',
    });
    expect(DEAD_LETTER_ATTRIBUTES).toEqual({
      reason: 'dead_letter_reason',
      lastError: 'last_error',
      receiveCount: 'receive_count',
      sourceQueue: 'source_queue',
    });
  });

  it('keeps the data type of the original attributes and skips binary ones', async () => {
    const base = sqsRecord(message);
    const record: SQSRecord = {
      ...base,
      messageAttributes: {
        ...base.messageAttributes,
        priority: { dataType: 'Number', stringValue: '3' },
        blob: { dataType: 'Binary', binaryValue: 'AAEC' },
      },
    };

    await operations.deadLetter({ queueUrl: DLQ, record: record, reason: 'POISON', lastError: 'bad' });

    const attributes = sentToDlq().MessageAttributes ?? {};
    expect(attributes.priority).toEqual({ DataType: 'Number', StringValue: '3' });
    expect(attributes).not.toHaveProperty('blob');
  });

  it('replaces the reason of an earlier dead-lettering instead of keeping the stale one', async () => {
    const base = sqsRecord(message);
    const record: SQSRecord = {
      ...base,
      messageAttributes: {
        ...base.messageAttributes,
        dead_letter_reason: { dataType: 'String', stringValue: 'MAX_RECEIVES' },
      },
    };

    await operations.deadLetter({ queueUrl: DLQ, record: record, reason: 'POISON', lastError: 'bad' });

    expect(attributesOf(sentToDlq()).dead_letter_reason).toBe('POISON');
  });

  it('never sends more than 10 attributes, and never drops the reason ones', async () => {
    const base = sqsRecord(message);
    const extra = Object.fromEntries(
      Array.from({ length: 9 }, (_, n) => [`extra_${n}`, { dataType: 'String', stringValue: `v${n}` }]),
    );
    const record: SQSRecord = { ...base, messageAttributes: { ...base.messageAttributes, ...extra } };

    await operations.deadLetter({ queueUrl: DLQ, record: record, reason: 'POISON', lastError: 'bad' });

    const names = Object.keys(sentToDlq().MessageAttributes ?? {});
    expect(names).toHaveLength(10);
    expect(names).toEqual(expect.arrayContaining(Object.values(DEAD_LETTER_ATTRIBUTES)));
    expect(names).toEqual(expect.arrayContaining(['message_id', 'topic']));
  });

  it('truncates a long last error to 1 000 characters and never sends an empty value', async () => {
    await operations.deadLetter({
      queueUrl: DLQ,
      record: sqsRecord(message),
      reason: 'POISON',
      lastError: 'x'.repeat(5_000),
    });
    await operations.deadLetter({
      queueUrl: DLQ,
      record: sqsRecord(message),
      reason: 'POISON',
      lastError: '',
    });

    const [long, empty] = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(long?.MessageAttributes?.last_error?.StringValue).toHaveLength(1_000);
    expect(empty?.MessageAttributes?.last_error?.StringValue).toBe('-');
  });

  it('sends no FIFO fields to a standard queue', async () => {
    await operations.deadLetter({
      queueUrl: DLQ,
      record: sqsRecord(message),
      reason: 'POISON',
      lastError: 'bad',
    });

    const input = sentToDlq();
    expect(input).not.toHaveProperty('MessageGroupId');
    expect(input).not.toHaveProperty('MessageDeduplicationId');
  });

  it('keeps the message group on a FIFO dead-letter queue, which refuses a send without one', async () => {
    const base = sqsRecord(message, { messageId: 'sqs-fifo-1' });
    const record: SQSRecord = { ...base, attributes: { ...base.attributes, MessageGroupId: 'order-1' } };

    await operations.deadLetter({
      queueUrl: `${DLQ}.fifo`,
      record: record,
      reason: 'POISON',
      lastError: 'bad',
    });

    expect(sentToDlq()).toMatchObject({ MessageGroupId: 'order-1', MessageDeduplicationId: 'sqs-fifo-1' });
  });

  it('lets an SQS failure escape so the record is not acknowledged', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('AccessDenied'));

    await expect(
      operations.deadLetter({
        queueUrl: DLQ,
        record: sqsRecord(message),
        reason: 'POISON',
        lastError: 'bad',
      }),
    ).rejects.toThrow('AccessDenied');
  });
});

describe('SqsQueueOperations.requeue', () => {
  it('sends a fresh copy of the body and its attributes back to the queue after the delay', async () => {
    const record = withReceiveCount(sqsRecord(message), 4);

    await operations.requeue(SOURCE, record, 7);

    const input = sentToDlq();
    expect(input).toMatchObject({ QueueUrl: SOURCE, MessageBody: record.body, DelaySeconds: 7 });
    expect(attributesOf(input)).toEqual({ message_id: message.messageId, topic: message.topic });
  });

  it('caps the delay at the 15 minutes SQS allows', async () => {
    await operations.requeue(SOURCE, sqsRecord(message), 5_000);

    expect(sentToDlq().DelaySeconds).toBe(900);
  });

  it('keeps the message group on a FIFO queue, without a delay, and dedupes on the received copy', async () => {
    const record = {
      ...sqsRecord(message),
      attributes: { ...sqsRecord(message).attributes, MessageGroupId: 'order-1' },
    };

    await operations.requeue(`${SOURCE}.fifo`, record, 7);

    const input = sentToDlq();
    expect(input).toMatchObject({ MessageGroupId: 'order-1', MessageDeduplicationId: record.messageId });
    expect(input).not.toHaveProperty('DelaySeconds');
  });
});

describe('SqsQueueOperations.deadLetter at the size limit', () => {
  /** What SQS answers when body and attributes together pass the queue's maximum message size. */
  const tooLong = () =>
    Object.assign(
      new Error('One or more parameters are invalid. Reason: Message must be shorter than 262144 bytes.'),
      { name: 'InvalidParameterValue' },
    );

  it('resends the body with only the reason and a short error when the full attributes do not fit', async () => {
    sqs.on(SendMessageCommand).rejectsOnce(tooLong()).resolves({ MessageId: 'dlq-2' });
    const record = sqsRecord(message);
    await operations.deadLetter({ queueUrl: DLQ, record, reason: 'POISON', lastError: 'x'.repeat(900) });

    const calls = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(calls).toHaveLength(2);
    const [, resent] = calls;
    if (resent === undefined) throw new Error('no second send');
    expect(resent.MessageBody).toBe(record.body);
    expect(attributesOf(resent)).toEqual({
      [DEAD_LETTER_ATTRIBUTES.reason]: 'POISON',
      [DEAD_LETTER_ATTRIBUTES.lastError]: 'x'.repeat(200),
    });
  });

  it('does not retry other refusals: the error reaches the caller, which leaves the record to the queue', async () => {
    sqs
      .on(SendMessageCommand)
      .rejects(Object.assign(new Error('Access to the resource is denied'), { name: 'AccessDenied' }));
    await expect(
      operations.deadLetter({
        queueUrl: DLQ,
        record: sqsRecord(message),
        reason: 'POISON',
        lastError: 'bad',
      }),
    ).rejects.toThrow('Access to the resource is denied');
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
  });
});
