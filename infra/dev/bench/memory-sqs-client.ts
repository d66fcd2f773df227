/**
 * An SDK SQS client whose SendMessageBatch calls land in the bench's in-memory queues, answered inside the client's
 * own middleware stack (no HTTP): the library's SQS adapters — the relay's publisher, a consumer's receipt queue —
 * run unchanged against the doubles, and each request is counted per queue and waits the simulated latency.
 */
import {
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { MemoryMessageAttribute, MemoryQueues } from '../../../shared/memory/index.ts';
import { pause } from './simulated-latency.ts';

/** What a {@link memorySqsClient} does with each request. */
export interface MemorySqsOptions {
  /** Simulated latency of one SQS request, in milliseconds. */
  readonly latencyMs: number;
  /** Called once per request with the queue it names (what the bench counts requests by). */
  readonly onRequest?: (queueUrl: string) => void;
  /**
   * Answers a SendMessageBatch to `queueUrl` instead of the queues (the SNS model takes its topic's "queue").
   * @default - every request goes to `queues`
   */
  readonly divert?: (
    queueUrl: string,
    input: SendMessageBatchCommandInput,
  ) => Promise<SendMessageBatchCommandOutput> | undefined;
}

/** The SDK's SQS client answering SendMessageBatch from `queues`; any other command is refused by name. */
export function memorySqsClient(queues: MemoryQueues, options: MemorySqsOptions): SQSClient {
  const client = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') {
        throw new Error(`the bench's SQS double answers SendMessageBatch only, not ${context.commandName}`);
      }
      const input = args.input as SendMessageBatchCommandInput;
      const queueUrl = input.QueueUrl ?? '';
      options.onRequest?.(queueUrl);
      await pause(options.latencyMs);
      const output = options.divert?.(queueUrl, input) ?? Promise.resolve(sendBatch(queues, input));
      return { output: await output, response: {} };
    },
    { step: 'initialize', name: 'benchMemorySqs' },
  );
  return client;
}

/** A SendMessageBatch on the in-memory queues: each entry sent as SendMessage would send it. */
export function sendBatch(
  queues: MemoryQueues,
  input: SendMessageBatchCommandInput,
): SendMessageBatchCommandOutput {
  const queueUrl = input.QueueUrl ?? '';
  const successful: NonNullable<SendMessageBatchCommandOutput['Successful']> = [];
  for (const entry of input.Entries ?? []) {
    const sent = queues.send(queueUrl, {
      body: entry.MessageBody ?? '',
      attributes: memoryAttributes(entry.MessageAttributes),
      systemAttributes: memoryAttributes(entry.MessageSystemAttributes),
      ...(entry.MessageGroupId === undefined ? {} : { groupId: entry.MessageGroupId }),
      ...(entry.MessageDeduplicationId === undefined
        ? {}
        : { deduplicationId: entry.MessageDeduplicationId }),
    });
    successful.push({ Id: entry.Id, MessageId: sent.messageId, MD5OfMessageBody: '' });
  }
  return { Successful: successful, Failed: [], $metadata: {} };
}

function memoryAttributes(
  attributes: Readonly<Record<string, { DataType?: string; StringValue?: string }>> | undefined,
): Record<string, MemoryMessageAttribute> {
  return Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      },
    ]),
  );
}
