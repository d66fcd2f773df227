/**
 * What the consumer's tests over a mocked DynamoDB and SQS share: the mocks and a client they answer, a logger that
 * records, the failure handling's queues, which message each inbox transaction was for, and a consumer handler's
 * environment. Vitest loads this module afresh for every test file, so no two files share the mocks or the
 * logger's calls.
 */

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
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
/** Answers every SQS client's commands: a consumer handler's dead-letters, visibility changes and receipts. */
export const sqs = mockClient(SQSClient);

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

/** {@link resetConsumerMocks}, and SQS takes every message, every batch entry and every visibility change. */
export function resetHandlerMocks(): void {
  resetConsumerMocks();
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({});
  sqs.on(SendMessageBatchCommand).callsFake(async ({ Entries }: SendMessageBatchCommandInput) => ({
    Successful: (Entries ?? []).map(({ Id }) => ({ Id, MessageId: `m-${Id}`, MD5OfMessageBody: '' })),
  }));
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
}

/**
 * What a consumer handler's environment holds however it confirms: its queue and dead-letter queue ({@link SOURCE},
 * {@link DLQ}), three receives, the region and silent logs. A test adds its inbox and where it confirms.
 */
export const HANDLER_ENV = {
  SOURCE_QUEUE_URL: SOURCE,
  DEAD_LETTER_QUEUE_URL: DLQ,
  MAX_RECEIVE_COUNT: '3',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
} as const;

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
