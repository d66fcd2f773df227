import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { InboxAdminStore } from '../admin/admin-ports.ts';
import { INBOX_KEYS } from '../consumer/inbox.ts';
import { cursorKeyOf, parkedKeyOf } from '../consumer/order-cursor.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';

/**
 * The admin's reads and writes of the consumers' inbox tables: an erase deletes the parked rows of its messages, a
 * skip reads and moves the ordered topics' cursors. Every inbox table has the same keys, so one store serves them
 * all; each call names its table.
 */
export class DynamoInboxAdminStore implements InboxAdminStore {
  readonly #client: Pick<DynamoDBDocumentClient, 'send'>;

  constructor(options: { readonly client: Pick<DynamoDBDocumentClient, 'send'> }) {
    this.#client = options.client;
  }

  /** @inheritdoc */
  async deleteParked(parked: {
    readonly inboxTable: string;
    readonly messageId: string;
    readonly orderKey: string;
    readonly seq: number;
  }): Promise<boolean> {
    try {
      const deleted = await this.#client.send(
        new DeleteCommand({
          TableName: parked.inboxTable,
          Key: { [INBOX_KEYS.partitionKey]: parkedKeyOf(parked.orderKey, parked.seq) },
          // Only the row that holds this message, never another's parked at the same place.
          ConditionExpression: '#parkedMessageId = :messageId',
          ExpressionAttributeNames: { '#parkedMessageId': 'parkedMessageId' },
          ExpressionAttributeValues: { ':messageId': parked.messageId },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return deleted.Attributes !== undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async cursorOf(at: { readonly inboxTable: string; readonly orderKey: string }): Promise<number | null> {
    const { Item } = await this.#client.send(
      new GetCommand({
        TableName: at.inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(at.orderKey) },
        ConsistentRead: true,
      }),
    );
    const lastSeq = Item?.lastSeq;
    return typeof lastSeq === 'number' ? lastSeq : null;
  }

  /** @inheritdoc */
  cursorSkipAction(move: {
    readonly inboxTable: string;
    readonly orderKey: string;
    readonly seq: number;
    readonly lastSeq: number | null;
    readonly now: Date;
  }): TransactWriteAction {
    // Conditional on the cursor still being where it was read (or, for seq 1, still absent): a message the
    // consumer applied meanwhile makes the transaction fail.
    const still =
      move.lastSeq === null
        ? { expression: 'attribute_not_exists(#key)', values: {} }
        : { expression: '#lastSeq = :previous', values: { ':previous': move.lastSeq } };
    return {
      Update: {
        TableName: move.inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(move.orderKey) },
        UpdateExpression: 'SET #lastSeq = :seq, #updatedAt = :now',
        ConditionExpression: still.expression,
        ExpressionAttributeNames: {
          '#lastSeq': 'lastSeq',
          '#updatedAt': 'updatedAt',
          ...(move.lastSeq === null ? { '#key': INBOX_KEYS.partitionKey } : {}),
        },
        ExpressionAttributeValues: { ':seq': move.seq, ':now': move.now.toISOString(), ...still.values },
      },
    };
  }
}
