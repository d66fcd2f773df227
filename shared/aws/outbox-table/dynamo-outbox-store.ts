import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describeError } from '../../errors.ts';
import { MessageStatus } from '../../message/message-status.ts';
import type { Claim, Postponement, Release, Unreadable } from '../../outbox/outbox-changes.ts';
import {
  type ClaimResult,
  type DueEntry,
  MAX_SEQUENCE_LOOKUP,
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
import { DynamoRelayStore } from './relay-store.ts';

export type { DynamoOutboxStoreOptions } from './relay-store.ts';

/** {@link OutboxStore} on a DynamoDB table; every change is a conditional update on the expected status. */
export class DynamoOutboxStore extends DynamoRelayStore implements SweepStore {
  /** @inheritdoc */
  async findDue(shard: string, now: Date, limit: number): Promise<DueEntry[]> {
    const result = await this.options.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
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
      const page = await this.options.client.send(
        new QueryCommand({
          TableName: this.options.tableName,
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
    const { Item: raw } = await this.options.client.send(
      new GetCommand({
        TableName: this.options.tableName,
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
      const result = await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
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
    return (await this.update(postponeUpdate(postponement))).applied;
  }

  /** @inheritdoc */
  async requeue(messageId: string, owner: string, now: Date): Promise<boolean> {
    const by = this.options.actor;
    return (await this.update(requeueUpdate({ messageId, owner, now, ...(by === undefined ? {} : { by }) })))
      .applied;
  }

  /** @inheritdoc */
  async release(release: Release): Promise<boolean> {
    return (await this.update(releaseUpdate(release))).applied;
  }

  /** @inheritdoc */
  async failUnreadable(unreadable: Unreadable): Promise<boolean> {
    return (await this.update(failUnreadableUpdate(unreadable, this.context()))).applied;
  }
}
