import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ChangeContext, SendFailure } from '../../outbox/outbox-changes.ts';
import {
  type ConfirmOutcome,
  confirmDeadlineAfter,
  DEFAULT_CONFIRM_DEADLINE_MS,
  type MarkSentOutcome,
  type OutboxStore,
  type RecordFailureOutcome,
  type SendMark,
} from '../../outbox/outbox-store.ts';
import { conditionalUpdate, confirmMessage, type UpdateResult } from './outbox-confirmer.ts';
import { markSentUpdate, type OutboxUpdate, sendFailureUpdate } from './transition-updates.ts';

/** Settings of the DynamoDB outbox store. */
export interface DynamoOutboxStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How long a SENT message may wait for its confirmation before the sweeper reconciles it. @default 300 000 ms */
  readonly confirmDeadlineMs?: number;
  /** Days a terminal message is kept before TTL archives it. @default 30 */
  readonly retentionDays?: number;
  /**
   * Partitions of the due index, which the attention index shares: a message that becomes FAILED is filed under
   * `FAILED#<its due shard>`. Must equal the writers' and the admin's.
   * @default 8
   */
  readonly dueShards?: number;
  /** Who this store acts for, recorded in each history entry it writes: `relay`, `sweeper` or `consumer`. */
  readonly actor?: string;
}

/**
 * The relay's moves on a DynamoDB outbox table (mark sent, record a failed send, confirm), each a conditional
 * update on the expected status. A class of its own, so the relay's bundle carries none of the sweeper's moves;
 * {@link DynamoOutboxStore} adds those.
 */
export class DynamoRelayStore implements OutboxStore {
  protected readonly options: DynamoOutboxStoreOptions;

  constructor(options: DynamoOutboxStoreOptions) {
    this.options = options;
  }

  /** @inheritdoc */
  async markSent({ messageId, now, resends = 0, claimedBy }: SendMark): Promise<MarkSentOutcome> {
    const confirmDeadlineMs = confirmDeadlineAfter(
      this.options.confirmDeadlineMs ?? DEFAULT_CONFIRM_DEADLINE_MS,
      resends,
    );
    const result = await this.update(
      markSentUpdate({
        messageId,
        now,
        confirmDeadlineMs,
        ...this.context(),
        ...(claimedBy === undefined ? {} : { claimedBy }),
      }),
    );
    return result.applied ? 'SENT' : 'ALREADY_ADVANCED';
  }

  /** @inheritdoc */
  async recordSendFailure(failure: SendFailure): Promise<RecordFailureOutcome> {
    const result = await this.update(sendFailureUpdate(failure, this.context()));
    if (!result.applied) return 'ALREADY_ADVANCED';
    return failure.decision.kind === 'retry' ? 'RETRY_SCHEDULED' : 'FAILED';
  }

  /** @inheritdoc */
  confirm(messageId: string, now: Date, outcome?: string): Promise<ConfirmOutcome> {
    return confirmMessage(this.options, { messageId, now, ...(outcome === undefined ? {} : { outcome }) });
  }

  protected context(): ChangeContext {
    return {
      ...(this.options.actor === undefined ? {} : { by: this.options.actor }),
      ...(this.options.dueShards === undefined ? {} : { dueShards: this.options.dueShards }),
    };
  }

  protected update(update: OutboxUpdate): Promise<UpdateResult> {
    return conditionalUpdate(this.options, update);
  }
}
