import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { describeError } from '../../errors.ts';
import { MessageStatus } from '../../message/message-status.ts';
import type {
  ChangeContext,
  Claim,
  Postponement,
  Release,
  SendFailure,
  Unreadable,
} from '../../outbox/outbox-changes.ts';
import { DEFAULT_RETENTION_DAYS } from '../../outbox/outbox-defaults.ts';
import {
  type ClaimResult,
  type ConfirmOutcome,
  confirmDeadlineAfter,
  DEFAULT_CONFIRM_DEADLINE_MS,
  type DueEntry,
  MAX_SEQUENCE_LOOKUP,
  type MarkSentOutcome,
  type RecordFailureOutcome,
  type SendMark,
  type SequencedMessage,
  type SequenceRange,
  type SweepStore,
} from '../../outbox/outbox-store.ts';
import {
  claimUpdate,
  failUnreadableUpdate,
  postponeUpdate,
  releaseUpdate,
  requeueUpdate,
} from './claim-updates.ts';
import { OUTBOX_KEYS } from './outbox-keys.ts';
import { readOutboxItem } from './read-outbox-item.ts';
import {
  appliedAfterCancelUpdate,
  confirmUpdate,
  markSentUpdate,
  type OutboxUpdate,
  sendFailureUpdate,
} from './transition-updates.ts';

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

/** {@link OutboxStore} on a DynamoDB table; every change is a conditional update on the expected status. */
export class DynamoOutboxStore implements SweepStore {
  readonly #options: DynamoOutboxStoreOptions;

  constructor(options: DynamoOutboxStoreOptions) {
    this.#options = options;
  }

  /** @inheritdoc */
  async markSent({ messageId, now, resends = 0, claimedBy }: SendMark): Promise<MarkSentOutcome> {
    const confirmDeadlineMs = confirmDeadlineAfter(
      this.#options.confirmDeadlineMs ?? DEFAULT_CONFIRM_DEADLINE_MS,
      resends,
    );
    const result = await this.#update(
      markSentUpdate({
        messageId,
        now,
        confirmDeadlineMs,
        ...this.#context(),
        ...(claimedBy === undefined ? {} : { claimedBy }),
      }),
    );
    return result.applied ? 'SENT' : 'ALREADY_ADVANCED';
  }

  /** @inheritdoc */
  async recordSendFailure(failure: SendFailure): Promise<RecordFailureOutcome> {
    const result = await this.#update(sendFailureUpdate(failure, this.#context()));
    if (!result.applied) return 'ALREADY_ADVANCED';
    return failure.decision.kind === 'retry' ? 'RETRY_SCHEDULED' : 'FAILED';
  }

  /** @inheritdoc */
  async confirm(messageId: string, now: Date, outcome?: string): Promise<ConfirmOutcome> {
    const confirmation = {
      messageId,
      now,
      retentionDays: this.#options.retentionDays ?? DEFAULT_RETENTION_DAYS,
      ...(outcome === undefined ? {} : { outcome }),
      ...(this.#options.actor === undefined ? {} : { by: this.#options.actor }),
    };
    // An operator may replay a cancelled message between the two updates below; a few rounds settle it.
    for (let round = 0; round < 3; round += 1) {
      const result = await this.#update(confirmUpdate(confirmation));
      if (result.applied) return 'CONFIRMED';
      if (result.current === undefined) return 'NOT_FOUND';
      if (result.current.status === MessageStatus.CONFIRMED) return 'ALREADY_CONFIRMED';
      if (result.current.status !== MessageStatus.CANCELLED) return 'NOT_CONFIRMABLE';
      const late = await this.#update(appliedAfterCancelUpdate(confirmation));
      // Still CANCELLED but not applied: the late delivery was recorded before (a redelivered copy).
      if (late.applied || late.current?.status === MessageStatus.CANCELLED) return 'APPLIED_AFTER_CANCEL';
      if (late.current === undefined) return 'NOT_FOUND';
    }
    return 'NOT_CONFIRMABLE';
  }

  /** @inheritdoc */
  async findDue(shard: string, now: Date, limit: number): Promise<DueEntry[]> {
    const result = await this.#options.client.send(
      new QueryCommand({
        TableName: this.#options.tableName,
        IndexName: OUTBOX_KEYS.dueIndex.name,
        // The sparse index holds only messages with work left, so this never scans finished ones.
        KeyConditionExpression: '#shard = :shard AND #nextAttemptAt <= :now',
        ExpressionAttributeNames: {
          '#shard': OUTBOX_KEYS.dueIndex.partitionKey,
          '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
        },
        ExpressionAttributeValues: { ':shard': shard, ':now': now.toISOString() },
        Limit: limit,
      }),
    );
    const statuses: readonly unknown[] = Object.values(MessageStatus);
    return (result.Items ?? []).map((raw) => {
      const messageId = typeof raw.messageId === 'string' ? raw.messageId : '';
      return {
        messageId,
        ...(statuses.includes(raw.status) ? { status: raw.status as MessageStatus } : {}),
        ...(typeof raw.confirmBy === 'string' ? { confirmBy: raw.confirmBy } : {}),
      };
    });
  }

  /** @inheritdoc */
  async findInSequence({ orderKey, fromSeq, toSeq }: SequenceRange): Promise<SequencedMessage[]> {
    if (toSeq < fromSeq) return [];
    const ids: string[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      // Keys only: the index never changes after the insert, so its entry costs one write per message.
      const page = await this.#options.client.send(
        new QueryCommand({
          TableName: this.#options.tableName,
          IndexName: OUTBOX_KEYS.orderIndex.name,
          KeyConditionExpression: '#orderKey = :orderKey AND #seq BETWEEN :fromSeq AND :toSeq',
          ExpressionAttributeNames: {
            '#orderKey': OUTBOX_KEYS.orderIndex.partitionKey,
            '#seq': OUTBOX_KEYS.orderIndex.sortKey,
          },
          ExpressionAttributeValues: { ':orderKey': orderKey, ':fromSeq': fromSeq, ':toSeq': toSeq },
          Limit: MAX_SEQUENCE_LOOKUP - ids.length,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      for (const raw of page.Items ?? []) {
        if (typeof raw.messageId === 'string') ids.push(raw.messageId);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined && ids.length < MAX_SEQUENCE_LOOKUP);
    const found = await Promise.all(ids.map((messageId) => this.#readSequenced(messageId)));
    return found
      .filter((message): message is SequencedMessage => message !== undefined)
      .sort((a, b) => a.seq - b.seq);
  }

  /** One message's place and status, read strongly consistently (the index may lag the table). */
  async #readSequenced(messageId: string): Promise<SequencedMessage | undefined> {
    const { Item: raw } = await this.#options.client.send(
      new GetCommand({
        TableName: this.#options.tableName,
        Key: { [OUTBOX_KEYS.partitionKey]: messageId },
        ConsistentRead: true,
        ProjectionExpression: '#messageId, #orderKey, #seq, #status, #topic, #aggregateId, #nextAttemptAt',
        ExpressionAttributeNames: {
          '#messageId': OUTBOX_KEYS.partitionKey,
          '#orderKey': OUTBOX_KEYS.orderIndex.partitionKey,
          '#seq': OUTBOX_KEYS.orderIndex.sortKey,
          '#status': 'status',
          '#topic': 'topic',
          '#aggregateId': 'aggregateId',
          '#nextAttemptAt': OUTBOX_KEYS.dueIndex.sortKey,
        },
      }),
    );
    if (raw === undefined || typeof raw.orderKey !== 'string' || typeof raw.seq !== 'number')
      return undefined;
    const statuses: readonly unknown[] = Object.values(MessageStatus);
    return {
      messageId,
      orderKey: raw.orderKey,
      seq: raw.seq,
      ...(statuses.includes(raw.status) ? { status: raw.status as MessageStatus } : {}),
      ...(typeof raw.topic === 'string' ? { topic: raw.topic } : {}),
      ...(typeof raw.aggregateId === 'string' ? { aggregateId: raw.aggregateId } : {}),
      ...(typeof raw.nextAttemptAt === 'string' ? { nextAttemptAt: raw.nextAttemptAt } : {}),
    };
  }

  /** @inheritdoc */
  async claim(claim: Claim): Promise<ClaimResult> {
    try {
      const result = await this.#options.client.send(
        new UpdateCommand({
          TableName: this.#options.tableName,
          ...claimUpdate(claim),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const raw = result.Attributes ?? {};
      try {
        return { outcome: 'CLAIMED', message: { messageId: claim.messageId, item: readOutboxItem(raw) } };
      } catch (error) {
        return {
          outcome: 'CLAIMED',
          message: { messageId: claim.messageId, unreadable: describeError(error) },
        };
      }
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return { outcome: 'LOST' };
      throw error;
    }
  }

  /** @inheritdoc */
  async postpone(postponement: Postponement): Promise<boolean> {
    return (await this.#update(postponeUpdate(postponement))).applied;
  }

  /** @inheritdoc */
  async requeue(messageId: string, owner: string, now: Date): Promise<boolean> {
    const by = this.#options.actor;
    return (await this.#update(requeueUpdate({ messageId, owner, now, ...(by === undefined ? {} : { by }) })))
      .applied;
  }

  /** @inheritdoc */
  async release(release: Release): Promise<boolean> {
    return (await this.#update(releaseUpdate(release))).applied;
  }

  /** @inheritdoc */
  async failUnreadable(unreadable: Unreadable): Promise<boolean> {
    return (await this.#update(failUnreadableUpdate(unreadable, this.#context()))).applied;
  }

  #context(): ChangeContext {
    return {
      ...(this.#options.actor === undefined ? {} : { by: this.#options.actor }),
      ...(this.#options.dueShards === undefined ? {} : { dueShards: this.#options.dueShards }),
    };
  }

  async #update(
    update: OutboxUpdate,
  ): Promise<{ applied: true } | { applied: false; current: Record<string, unknown> | undefined }> {
    try {
      await this.#options.client.send(new UpdateCommand({ TableName: this.#options.tableName, ...update }));
      return { applied: true };
    } catch (error) {
      // A failed condition is a lost race or an already-advanced message: an expected outcome, not an error.
      if (error instanceof ConditionalCheckFailedException) {
        return { applied: false, current: error.Item === undefined ? undefined : unmarshall(error.Item) };
      }
      throw error;
    }
  }
}
