import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { MessageStatus } from '../message/message-status';
import {
  confirmUpdate,
  DEFAULT_RETENTION_DAYS,
  markSentUpdate,
  type OutboxUpdate,
  type SendFailureDecision,
  sendFailureUpdate,
} from './transition-updates';

/** Result of marking a message SENT; losing to a faster writer is expected, not an error. */
export type MarkSentOutcome = 'SENT' | 'ALREADY_ADVANCED';

/** Result of recording a failed send. */
export type RecordFailureOutcome = 'RETRY_SCHEDULED' | 'FAILED' | 'ALREADY_ADVANCED';

/** Result of confirming a message. */
export type ConfirmOutcome = 'CONFIRMED' | 'ALREADY_CONFIRMED' | 'NOT_CONFIRMABLE' | 'NOT_FOUND';

/** The outbox's status changes, as the relay, sweeper and consumers use them. */
export interface OutboxStore {
  /** PENDING → SENT. */
  markSent(messageId: string, now: Date): Promise<MarkSentOutcome>;
  /** Records a failed send: schedules the retry or moves the message to FAILED. */
  recordSendFailure(
    messageId: string,
    seenAttempts: number,
    decision: SendFailureDecision,
    error: string,
    now: Date,
  ): Promise<RecordFailureOutcome>;
  /** → CONFIRMED after the downstream applied the message. */
  confirm(messageId: string, now: Date): Promise<ConfirmOutcome>;
}

/** Settings of the DynamoDB outbox store. */
export interface DynamoOutboxStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How long a SENT message may wait for its confirmation before the sweeper reconciles it. @default 300 000 ms */
  readonly confirmDeadlineMs?: number;
  /** Days a terminal message is kept before TTL archives it. @default 30 */
  readonly retentionDays?: number;
}

/** Default time a SENT message may wait for its confirmation. */
export const DEFAULT_CONFIRM_DEADLINE_MS = 5 * 60_000;

/** {@link OutboxStore} on a DynamoDB table; every change is a conditional update on the expected status. */
export class DynamoOutboxStore implements OutboxStore {
  readonly #options: DynamoOutboxStoreOptions;

  constructor(options: DynamoOutboxStoreOptions) {
    this.#options = options;
  }

  /** @inheritdoc */
  async markSent(messageId: string, now: Date): Promise<MarkSentOutcome> {
    const deadline = this.#options.confirmDeadlineMs ?? DEFAULT_CONFIRM_DEADLINE_MS;
    const result = await this.#update(markSentUpdate(messageId, now, deadline));
    return result.applied ? 'SENT' : 'ALREADY_ADVANCED';
  }

  /** @inheritdoc */
  async recordSendFailure(
    messageId: string,
    seenAttempts: number,
    decision: SendFailureDecision,
    error: string,
    now: Date,
  ): Promise<RecordFailureOutcome> {
    const result = await this.#update(sendFailureUpdate(messageId, seenAttempts, decision, error, now));
    if (!result.applied) return 'ALREADY_ADVANCED';
    return decision.kind === 'retry' ? 'RETRY_SCHEDULED' : 'FAILED';
  }

  /** @inheritdoc */
  async confirm(messageId: string, now: Date): Promise<ConfirmOutcome> {
    const retention = this.#options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    const result = await this.#update(confirmUpdate(messageId, now, retention));
    if (result.applied) return 'CONFIRMED';
    if (result.current === undefined) return 'NOT_FOUND';
    return result.current.status === MessageStatus.CONFIRMED ? 'ALREADY_CONFIRMED' : 'NOT_CONFIRMABLE';
  }

  async #update(
    update: OutboxUpdate,
  ): Promise<{ applied: true } | { applied: false; current: Record<string, unknown> | undefined }> {
    try {
      await this.#options.client.send(new UpdateCommand({ TableName: this.#options.tableName, ...update }));
      return { applied: true };
    } catch (error) {
      // A failed condition is a lost race or an already-advanced message: an expected outcome (DESIGN §3).
      if (error instanceof ConditionalCheckFailedException) {
        return { applied: false, current: error.Item === undefined ? undefined : unmarshall(error.Item) };
      }
      throw error;
    }
  }
}
