import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsPublisher } from '../../../shared/aws/sqs-publisher.ts';
import { messageBody, messageSizeBytes } from '../../../shared/relay/wire-format.ts';
import { envelope, testMessageId } from '../../support/factories.ts';

const sqs = mockClient(SQSClient);
const publisher = new SqsPublisher(new SQSClient({ region: 'eu-west-1' }));
const STANDARD = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const FIFO = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created.fifo';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

beforeEach(() => {
  sqs.reset();
});

function sentInput() {
  const calls = sqs.commandCalls(SendMessageBatchCommand);
  expect(calls).toHaveLength(1);
  const input = calls[0]?.args[0].input;
  if (input === undefined) throw new Error('no SendMessageBatch sent');
  return input;
}

describe('SqsPublisher', () => {
  it('sends the envelope as the body, message_id, topic and traceparent as attributes, and the X-Ray trace header', async () => {
    const message = envelope({ messageId: testMessageId(1), headers: { traceparent: TRACEPARENT } });
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });

    await publisher.publishBatch(STANDARD, [message]);

    expect(sentInput()).toEqual({
      QueueUrl: STANDARD,
      Entries: [
        {
          Id: message.messageId,
          MessageBody: messageBody(message),
          MessageAttributes: {
            message_id: { DataType: 'String', StringValue: message.messageId },
            topic: { DataType: 'String', StringValue: 'order.created' },
            traceparent: { DataType: 'String', StringValue: TRACEPARENT },
          },
          MessageSystemAttributes: {
            AWSTraceHeader: {
              DataType: 'String',
              StringValue: 'Root=1-0af76519-16cd43dd8448eb211c80319c;Parent=b7ad6b7169203331;Sampled=1',
            },
          },
        },
      ],
    });
    expect(JSON.parse(sentInput().Entries?.[0]?.MessageBody ?? '')).toEqual(message);
  });

  it('leaves out the traceparent attribute and the trace header when the message has none', async () => {
    sqs.on(SendMessageBatchCommand).resolves({});

    await publisher.publishBatch(STANDARD, [envelope()]);

    expect(Object.keys(sentInput().Entries?.[0]?.MessageAttributes ?? {}).sort()).toEqual([
      'message_id',
      'topic',
    ]);
    expect(sentInput().Entries?.[0]).not.toHaveProperty('MessageSystemAttributes');
  });

  it('sets the trace header on each entry whose traceparent is valid, and only on those', async () => {
    sqs.on(SendMessageBatchCommand).resolves({});
    const traced = envelope({ messageId: testMessageId(1), headers: { traceparent: TRACEPARENT } });
    const unsampled = envelope({
      messageId: testMessageId(2),
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00' },
    });
    const zeroTraceId = envelope({
      messageId: testMessageId(3),
      headers: { traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` },
    });

    await publisher.publishBatch(STANDARD, [traced, unsampled, zeroTraceId]);

    expect(
      sentInput().Entries?.map((entry) => entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue),
    ).toEqual([
      'Root=1-0af76519-16cd43dd8448eb211c80319c;Parent=b7ad6b7169203331;Sampled=1',
      'Root=1-0af76519-16cd43dd8448eb211c80319c;Parent=b7ad6b7169203331;Sampled=0',
      undefined,
    ]);
  });

  it('leaves out an empty traceparent, which SQS would refuse on every retry', async () => {
    sqs.on(SendMessageBatchCommand).resolves({});

    await publisher.publishBatch(STANDARD, [envelope({ headers: { traceparent: '' } })]);

    expect(sentInput().Entries?.[0]?.MessageAttributes).not.toHaveProperty('traceparent');
  });

  it('gives FIFO entries the aggregate as message group and messageId-0 as deduplication id by default', async () => {
    const message = envelope({ messageId: testMessageId(3), aggregateId: 'order-42' });
    sqs.on(SendMessageBatchCommand).resolves({});

    await publisher.publishBatch(FIFO, [message]);

    expect(sentInput().Entries?.[0]).toMatchObject({
      MessageGroupId: 'order-42',
      MessageDeduplicationId: `${message.messageId}-0`,
    });
  });

  it('gives an ordered FIFO entry its order key as message group', async () => {
    const message = envelope({ aggregateId: 'order-42', orderKey: 'order#order-42', seq: 2 });
    sqs.on(SendMessageBatchCommand).resolves({});

    await publisher.publishBatch(FIFO, [message]);

    expect(sentInput().Entries?.[0]?.MessageGroupId).toBe('order#order-42');
  });

  it('keeps one deduplication id per delivery round: a retry in the round repeats it, a new round changes it', async () => {
    const message = envelope({ messageId: testMessageId(5) });
    sqs.on(SendMessageBatchCommand).resolves({});
    const dedupIdOf = async (round: number) => {
      sqs.resetHistory();
      await publisher.publishBatch(FIFO, [message], {
        deliveryRounds: new Map([[message.messageId, round]]),
      });
      return sentInput().Entries?.[0]?.MessageDeduplicationId;
    };

    const first = await dedupIdOf(0);
    const retried = await dedupIdOf(0);
    const resent = await dedupIdOf(1);
    const replayedAfterResend = await dedupIdOf(2);

    expect(retried).toBe(first);
    expect(new Set([first, resent, replayedAfterResend]).size).toBe(3);
    expect(resent).toBe(`${message.messageId}-1`);
  });

  it('sets no FIFO fields on a standard queue, ordered message or not', async () => {
    sqs.on(SendMessageBatchCommand).resolves({});

    await publisher.publishBatch(
      STANDARD,
      [envelope(), envelope({ messageId: testMessageId(2), orderKey: 'order#order-1', seq: 1 })],
      { deliveryRounds: new Map([[testMessageId(2), 3]]) },
    );

    for (const entry of sentInput().Entries ?? []) {
      expect(entry).not.toHaveProperty('MessageGroupId');
      expect(entry).not.toHaveProperty('MessageDeduplicationId');
    }
    expect(sentInput().Entries).toHaveLength(2);
  });

  it('reports the entries SQS accepted and the ones it rejected, with the reason', async () => {
    const [a, b] = [envelope({ messageId: testMessageId(1) }), envelope({ messageId: testMessageId(2) })];
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: a.messageId, MessageId: 'sqs-1', MD5OfMessageBody: 'x' }],
      Failed: [{ Id: b.messageId, SenderFault: true, Code: 'InvalidParameterValue', Message: 'too long' }],
    });

    await expect(publisher.publishBatch(STANDARD, [a, b])).resolves.toEqual({
      sent: [a.messageId],
      failed: [{ messageId: b.messageId, error: 'InvalidParameterValue: too long' }],
    });
  });

  it('fails every entry when the whole call throws', async () => {
    const messages = [envelope({ messageId: testMessageId(1) }), envelope({ messageId: testMessageId(2) })];
    const throttled = new Error('Rate exceeded');
    throttled.name = 'ThrottlingException';
    sqs.on(SendMessageBatchCommand).rejects(throttled);

    await expect(publisher.publishBatch(STANDARD, messages)).resolves.toEqual({
      sent: [],
      failed: messages.map((m) => ({ messageId: m.messageId, error: 'ThrottlingException: Rate exceeded' })),
    });
  });
});

describe('messageSizeBytes', () => {
  it('counts the body and every attribute name, type and value, as SQS does', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const message = envelope({ headers: { traceparent } });
    const attributes =
      'message_id'.length +
      'String'.length +
      message.messageId.length +
      'topic'.length +
      'String'.length +
      'order.created'.length +
      'traceparent'.length +
      'String'.length +
      traceparent.length;

    expect(messageSizeBytes(message)).toBe(Buffer.byteLength(messageBody(message)) + attributes);
  });
});
