import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsReceiptQueue } from '../../../shared/aws/sqs-receipt-queue.ts';

const sqs = mockClient(SQSClient);
const RECEIPTS = 'https://sqs.eu-west-1.amazonaws.com/111111111111/orders-receipts';
const queue = new SqsReceiptQueue({ client: new SQSClient({ region: 'eu-west-1' }), queueUrl: RECEIPTS });

beforeEach(() => sqs.reset());

describe('SqsReceiptQueue', () => {
  it('sends the bodies in SendMessageBatch calls of at most 10 entries to the receipt queue', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(({ Entries }) => ({
      Successful: Entries.map(({ Id }: { Id: string }) => ({
        Id,
        MessageId: `m-${Id}`,
        MD5OfMessageBody: '',
      })),
      Failed: [],
    }));
    const bodies = Array.from({ length: 23 }, (_, n) => `body ${n}`);

    const failures = await queue.sendBodies(bodies);

    expect(failures).toEqual(bodies.map(() => undefined));
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
    expect(calls.map((input) => input.Entries?.length)).toEqual([10, 10, 3]);
    expect(calls.every((input) => input.QueueUrl === RECEIPTS)).toBe(true);
    expect(calls.flatMap((input) => input.Entries?.map((entry) => entry.MessageBody))).toEqual(bodies);
  });

  it('starts a new call before a batch would pass 256 KiB', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async ({ Entries }) => ({
      Successful: Entries.map(({ Id }: { Id: string }) => ({
        Id,
        MessageId: `m-${Id}`,
        MD5OfMessageBody: '',
      })),
    }));
    const bodies = Array.from({ length: 4 }, (_, n) => `${n}`.padEnd(100 * 1024, 'x'));

    await expect(queue.sendBodies(bodies)).resolves.toEqual([undefined, undefined, undefined, undefined]);

    const sizes = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries?.length);
    expect(sizes).toEqual([2, 2]);
  });

  it('names why each body was not sent: an entry SQS refused, a call that failed, an entry it left unanswered', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: '0', MessageId: 'm-0', MD5OfMessageBody: '' }],
        Failed: [{ Id: '1', Code: 'InvalidParameterValue', Message: 'too long', SenderFault: true }],
      })
      .rejectsOnce(new Error('throttled'));
    const bodies = Array.from({ length: 12 }, (_, n) => `body ${n}`);

    const failures = await queue.sendBodies(bodies);

    expect(failures[0]).toBeUndefined();
    expect(failures[1]).toBe('InvalidParameterValue: too long');
    expect(failures[2]).toBe('SQS reported no result for it');
    expect(failures.slice(10)).toEqual(['Error: throttled', 'Error: throttled']);
  });
});
