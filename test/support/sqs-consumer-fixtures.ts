/**
 * What the consumer's tests over a mocked DynamoDB share: the mock and a client it answers, a logger that records,
 * the failure handling's queues, and which message each inbox transaction was for. Vitest loads this module afresh
 * for every test file, so no two files share the mock or the logger's calls.
 */

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { type Mock, vi } from 'vitest';
import type { FailureHandling, QueueOperations } from '../../shared/consumer/failure-handling.ts';

/** Answers every document client's commands, the consumer's own client included. */
export const ddb = mockClient(DynamoDBDocumentClient);
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
export const logger = { info: vi.fn(), warn: vi.fn() };

export const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
export const DLQ = `${SOURCE}-dlq`;
export const BACKOFF = { baseSeconds: 10, maxSeconds: 900 };

/** Forgets earlier calls; then every transaction and every confirmation succeeds until a test says otherwise. */
export function resetConsumerMocks(): void {
  ddb.reset();
  logger.info.mockReset();
  logger.warn.mockReset();
  ddb.on(TransactWriteCommand).resolves({});
  ddb.on(UpdateCommand).resolves({});
}

/** The message an inbox transaction is for: its first item is the inbox row's put. */
export function inboxMessageIdOf(input: TransactWriteCommandInput): unknown {
  return input.TransactItems?.[0]?.Put?.Item?.messageId;
}

/** The message of every transaction sent so far, in the order they were sent. */
export function transactedIds(): unknown[] {
  return ddb.commandCalls(TransactWriteCommand).map((call) => inboxMessageIdOf(call.args[0].input));
}

/** DynamoDB commits every transaction except those for `messageId`, which fail with `error`. */
export function transactionsFailFor(messageId: string, error: Error): void {
  ddb.on(TransactWriteCommand).callsFake(async (input: TransactWriteCommandInput) => {
    if (inboxMessageIdOf(input) === messageId) throw error;
    return {};
  });
}

/** Queue operations that record their calls and succeed. */
export interface QueueMocks {
  readonly changeVisibility: Mock<QueueOperations['changeVisibility']>;
  readonly deadLetter: Mock<QueueOperations['deadLetter']>;
  readonly requeue: Mock<QueueOperations['requeue']>;
}

/** Fresh {@link QueueMocks}, none called yet. */
export function queueMocks(): QueueMocks {
  return {
    changeVisibility: vi.fn<QueueOperations['changeVisibility']>(async () => {}),
    deadLetter: vi.fn<QueueOperations['deadLetter']>(async () => {}),
    requeue: vi.fn<QueueOperations['requeue']>(async () => {}),
  };
}

/** Failure handling on {@link SOURCE} and {@link DLQ}: five receives, {@link BACKOFF}, the jitter at its middle. */
export function failureHandling(queues: QueueOperations): FailureHandling {
  return {
    queues,
    sourceQueueUrl: SOURCE,
    deadLetterQueueUrl: DLQ,
    maxReceiveCount: 5,
    backoff: BACKOFF,
    random: () => 0.5,
  };
}
