import { createHash } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  type Message,
  MessageNotInflight,
  PurgeQueueCommand,
  QueueDoesNotExist,
  ReceiptHandleIsInvalid,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EmbeddedClients, embeddedClients, rejectionOf } from './embedded-clients.ts';

let aws: EmbeddedClients;
let queueCount = 0;
let name: string;

beforeAll(async () => {
  aws = await embeddedClients();
});

afterAll(async () => {
  await aws?.close();
});

beforeEach(() => {
  queueCount += 1;
  name = `queue-${queueCount}`;
});

async function createQueue(queueName: string, attributes: Record<string, string> = {}): Promise<string> {
  const { QueueUrl } = await aws.sqs.send(
    new CreateQueueCommand({ QueueName: queueName, Attributes: attributes }),
  );
  return QueueUrl ?? '';
}

async function arnOf(queueUrl: string): Promise<string> {
  const { Attributes } = await aws.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn ?? '';
}

async function receive(
  queueUrl: string,
  input: Partial<ReceiveMessageCommandInput> = {},
): Promise<Message[]> {
  const { Messages } = await aws.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
      ...input,
    }),
  );
  return Messages ?? [];
}

async function send(queueUrl: string, body: string): Promise<string> {
  return (
    (await aws.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }))).MessageId ?? ''
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQS on the embedded backend', () => {
  it('creates a queue idempotently, finds it by name, lists it, and refuses other attributes or an unknown name', async () => {
    const url = await createQueue(name, { VisibilityTimeout: '60' });

    expect(url).toBe(`${aws.backend.endpoint}/123456789012/${name}`);
    expect(await createQueue(name, { VisibilityTimeout: '60' })).toBe(url);
    expect((await rejectionOf(createQueue(name, { VisibilityTimeout: '61' }))).name).toBe('QueueNameExists');
    expect((await aws.sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toBe(url);
    expect((await aws.sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls).toEqual([url]);
    const unknown = await rejectionOf(aws.sqs.send(new GetQueueUrlCommand({ QueueName: 'no-such-queue' })));
    expect(unknown).toBeInstanceOf(QueueDoesNotExist);
    expect(unknown.Code).toBe('AWS.SimpleQueueService.NonExistentQueue');
  });

  it('finds a queue by the name at the end of any URL of its account, such as the one AWS would give it', async () => {
    const url = await createQueue(name);
    // What a stack that does not create the queue builds from pseudo parameters and the queue's explicit name.
    const awsStyle = `https://sqs.us-east-1.amazonaws.com/123456789012/${name}`;

    await send(awsStyle, 'by its AWS URL');
    const [message] = await receive(url);
    const otherAccount = `https://sqs.us-east-1.amazonaws.com/000000000000/${name}`;

    expect(message?.Body).toBe('by its AWS URL');
    expect(await rejectionOf(send(otherAccount, 'nowhere'))).toBeInstanceOf(QueueDoesNotExist);
  });

  it('sends and receives a message with its attributes and the MD5 digests SQS computes', async () => {
    const url = await createQueue(name);
    const attributes = {
      topic: { DataType: 'String', StringValue: 'order.created' },
      count: { DataType: 'Number', StringValue: '42' },
      blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 255]) },
    };

    const sent = await aws.sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: 'hello', MessageAttributes: attributes }),
    );
    const [message] = await receive(url, { MessageAttributeNames: ['topic'] });

    // Digests as moto (and SQS) compute them for the same attributes.
    expect(sent.MD5OfMessageBody).toBe(createHash('md5').update('hello').digest('hex'));
    expect(sent.MD5OfMessageAttributes).toBe('3cbeabd018328ce9162a4f518ecad1b0');
    expect(message?.Body).toBe('hello');
    expect(message?.MessageId).toBe(sent.MessageId);
    expect(message?.MessageAttributes).toEqual({ topic: attributes.topic });
    expect(message?.MD5OfMessageAttributes).toBe('20dd3735c2593f953ef8acd22dcd30c8');
  });

  it('hides a received message for the visibility timeout and counts every receive', async () => {
    const url = await createQueue(name, { VisibilityTimeout: '1' });
    await send(url, 'once');

    const [first] = await receive(url);
    const hidden = await receive(url);
    await sleep(1_100);
    const [second] = await receive(url, { VisibilityTimeout: 0 });
    const [third] = await receive(url);

    expect(first?.Attributes).toMatchObject({ ApproximateReceiveCount: '1', SenderId: expect.any(String) });
    expect(hidden).toEqual([]);
    expect(second?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(third?.Attributes?.ApproximateReceiveCount).toBe('3');
    expect(third?.Attributes?.SentTimestamp).toBe(first?.Attributes?.SentTimestamp);
    expect(third?.Attributes?.ApproximateFirstReceiveTimestamp).toBe(
      first?.Attributes?.ApproximateFirstReceiveTimestamp,
    );
    expect(Number(first?.Attributes?.SentTimestamp)).toBeLessThanOrEqual(
      Number(first?.Attributes?.ApproximateFirstReceiveTimestamp),
    );
    expect(third?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
  });

  it('moves a message to the dead-letter queue on the receive after maxReceiveCount, unchanged', async () => {
    const deadLetters = await createQueue(`${name}-dlq`);
    const url = await createQueue(name, {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await arnOf(deadLetters), maxReceiveCount: 2 }),
    });
    const id = (
      await aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: 'poison',
          MessageAttributes: { topic: { DataType: 'String', StringValue: 't' } },
        }),
      )
    ).MessageId;

    const counts: string[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      for (const message of await receive(url, { VisibilityTimeout: 0 })) {
        counts.push(message.Attributes?.ApproximateReceiveCount ?? '');
      }
    }
    const [dead] = await receive(deadLetters);

    expect(counts).toEqual(['1', '2']);
    expect(dead).toMatchObject({
      MessageId: id,
      Body: 'poison',
      MessageAttributes: { topic: { StringValue: 't' } },
    });
    expect(dead?.Attributes?.DeadLetterQueueSourceArn).toBe(await arnOf(url));
  });

  it('changes the visibility of a message in flight, and refuses one that is not', async () => {
    const url = await createQueue(name, { VisibilityTimeout: '30' });
    await send(url, 'a');
    const [message] = await receive(url);
    const handle = message?.ReceiptHandle ?? '';

    await aws.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: 0 }),
    );
    const [again] = await receive(url);
    const change = (receiptHandle: string) =>
      aws.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: 0,
        }),
      );

    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect((await rejectionOf(change(handle))).name).toBe('InvalidParameterValue');
    expect(await rejectionOf(change('made-up'))).toBeInstanceOf(ReceiptHandleIsInvalid);
    await change(again?.ReceiptHandle ?? '');
    expect(await rejectionOf(change(again?.ReceiptHandle ?? ''))).toBeInstanceOf(MessageNotInflight);
  });

  it('deletes by the latest receipt handle, and reports each entry of a batch delete', async () => {
    const url = await createQueue(name, { VisibilityTimeout: '0' });
    await send(url, 'stale');
    const [first] = await receive(url);
    const [latest] = await receive(url);
    await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first?.ReceiptHandle }));
    const stillThere = await receive(url);
    await send(url, 'other');
    const messages = await receive(url);

    const batch = await aws.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          ...messages.map((message, index) => ({ Id: `ok-${index}`, ReceiptHandle: message.ReceiptHandle })),
          { Id: 'bad', ReceiptHandle: 'made-up' },
        ],
      }),
    );

    expect(latest?.Body).toBe('stale');
    expect(stillThere.map((message) => message.Body)).toEqual(['stale']);
    expect(batch.Successful?.map((entry) => entry.Id)).toEqual(['ok-0', 'ok-1']);
    expect(batch.Failed).toEqual([
      expect.objectContaining({ Id: 'bad', Code: 'ReceiptHandleIsInvalid', SenderFault: true }),
    ]);
    expect(await receive(url)).toEqual([]);
  });

  it('long-polls until a message arrives, or answers empty when the wait ends', async () => {
    const url = await createQueue(name);
    const started = Date.now();

    const waiting = receive(url, { WaitTimeSeconds: 5 });
    setTimeout(() => void send(url, 'late'), 200);
    const [message] = await waiting;
    const gotIt = Date.now() - started;
    const emptyStarted = Date.now();
    const nothing = await receive(url, { WaitTimeSeconds: 1 });

    expect(message?.Body).toBe('late');
    expect(gotIt).toBeGreaterThanOrEqual(150);
    expect(gotIt).toBeLessThan(2_000);
    expect(nothing).toEqual([]);
    expect(Date.now() - emptyStarted).toBeGreaterThanOrEqual(950);
  });

  it('sends a batch entry by entry, and refuses a malformed batch', async () => {
    const url = await createQueue(name, { VisibilityTimeout: '30' });
    const batch = (entries: { Id: string; MessageBody: string }[]) =>
      aws.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));

    const result = await batch([
      { Id: 'a', MessageBody: 'one' },
      { Id: 'b', MessageBody: 'two' },
      { Id: 'c', MessageBody: 'bad \u0000 character' },
    ]);
    const received = await receive(url);
    const visibility = await aws.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: received.map((message, index) => ({
          Id: `m${index}`,
          ReceiptHandle: message.ReceiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );

    expect(result.Successful?.map((entry) => [entry.Id, entry.MD5OfMessageBody])).toEqual([
      ['a', createHash('md5').update('one').digest('hex')],
      ['b', createHash('md5').update('two').digest('hex')],
    ]);
    expect(result.Failed).toEqual([
      expect.objectContaining({ Id: 'c', Code: 'InvalidMessageContents', SenderFault: true }),
    ]);
    expect(received.map((message) => message.Body).sort()).toEqual(['one', 'two']);
    expect(visibility.Successful).toHaveLength(2);
    expect(await receive(url)).toHaveLength(2);
    const names = await Promise.all(
      [
        [
          { Id: 'x', MessageBody: '1' },
          { Id: 'x', MessageBody: '2' },
        ],
        Array.from({ length: 11 }, (_, index) => ({ Id: `e${index}`, MessageBody: 'm' })),
        [],
        [{ Id: 'not valid!', MessageBody: 'm' }],
      ].map(async (entries) => (await rejectionOf(batch(entries))).name),
    );
    expect(names).toEqual([
      'BatchEntryIdsNotDistinct',
      'TooManyEntriesInBatchRequest',
      'EmptyBatchRequest',
      'InvalidBatchEntryId',
    ]);
  });

  it('reports attributes and message counts, changes attributes, purges and deletes the queue', async () => {
    const deadLetters = await createQueue(`${name}-dlq`);
    const policy = { deadLetterTargetArn: await arnOf(deadLetters), maxReceiveCount: 5 };
    const url = await createQueue(name, { RedrivePolicy: JSON.stringify(policy), VisibilityTimeout: '30' });
    await send(url, 'visible');
    await send(url, 'in flight');
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'delayed', DelaySeconds: 60 }));
    await receive(url, { MaxNumberOfMessages: 1 });

    const { Attributes } = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
    );
    await aws.sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: '5' } }),
    );
    const changed = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }),
    );
    const unknownAttribute = await rejectionOf(
      aws.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['Colour' as 'All'] })),
    );
    await aws.sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    const purged = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    await aws.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));

    expect(Attributes).toMatchObject({
      QueueArn: `arn:aws:sqs:us-east-1:123456789012:${name}`,
      VisibilityTimeout: '30',
      MessageRetentionPeriod: '345600',
      MaximumMessageSize: '1048576',
      DelaySeconds: '0',
      RedrivePolicy: JSON.stringify(policy),
      ApproximateNumberOfMessages: '1',
      ApproximateNumberOfMessagesNotVisible: '1',
      ApproximateNumberOfMessagesDelayed: '1',
      CreatedTimestamp: expect.stringMatching(/^\d{10}$/),
    });
    expect(changed.Attributes).toEqual({ VisibilityTimeout: '5' });
    expect(unknownAttribute.name).toBe('InvalidAttributeName');
    expect(purged.Attributes).toEqual({ ApproximateNumberOfMessages: '0' });
    expect(await rejectionOf(receive(url))).toBeInstanceOf(QueueDoesNotExist);
  });

  it('keeps FIFO order per group, one group in flight at a time, and drops a duplicate within 5 minutes', async () => {
    const url = await createQueue(`${name}.fifo`, { FifoQueue: 'true' });
    const sendFifo = (body: string, group: string, deduplicationId = body) =>
      aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: body,
          MessageGroupId: group,
          MessageDeduplicationId: deduplicationId,
        }),
      );
    const first = await sendFifo('g1-first', 'g1');
    await sendFifo('g1-second', 'g1');
    await sendFifo('g2-only', 'g2');
    const duplicate = await sendFifo('g1-first', 'g1');

    const [head] = await receive(url, { MaxNumberOfMessages: 1 });
    const [otherGroup] = await receive(url, { MaxNumberOfMessages: 1 });
    const blocked = await receive(url);
    await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: head?.ReceiptHandle }));
    const [next] = await receive(url);
    const missingGroup = await rejectionOf(
      aws.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' })),
    );

    expect(duplicate.MessageId).toBe(first.MessageId);
    expect(BigInt(duplicate.SequenceNumber ?? '0')).toBe(BigInt(first.SequenceNumber ?? '1'));
    expect(head?.Body).toBe('g1-first');
    expect(head?.Attributes).toMatchObject({ MessageGroupId: 'g1', MessageDeduplicationId: 'g1-first' });
    expect(head?.Attributes?.SequenceNumber).toBe(first.SequenceNumber);
    expect(otherGroup?.Body).toBe('g2-only');
    expect(blocked).toEqual([]);
    expect(next?.Body).toBe('g1-second');
    expect(missingGroup.name).toBe('MissingParameter');
  });

  it('refuses malformed requests as SQS does', async () => {
    const url = await createQueue(name);

    const names = await Promise.all(
      [
        aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 11 })),
        aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 21 })),
        aws.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 })),
        aws.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '\uFFFF' })),
        aws.sqs.send(
          new CreateQueueCommand({ QueueName: `${name}-x`, Attributes: { VisibilityTimeout: '50000' } }),
        ),
        aws.sqs.send(new CreateQueueCommand({ QueueName: 'bad name' })),
        aws.sqs.send(
          new CreateQueueCommand({
            QueueName: `${name}-y`,
            Attributes: {
              RedrivePolicy: JSON.stringify({
                deadLetterTargetArn: 'arn:aws:sqs:us-east-1:123456789012:none',
                maxReceiveCount: 1,
              }),
            },
          }),
        ),
      ].map(async (call) => (await rejectionOf(call)).name),
    );

    expect(names).toEqual([
      'InvalidParameterValue',
      'InvalidParameterValue',
      'InvalidParameterValue',
      'InvalidMessageContents',
      'InvalidAttributeValue',
      'InvalidParameterValue',
      'InvalidParameterValue',
    ]);
  });
});
