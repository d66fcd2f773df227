import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CounterAdvance } from '../ordering/assign-seqs.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';

/**
 * The sequence table: per order key, the last seq a writer without an aggregate version gave. This module is the
 * only code that knows its key and attribute.
 */

/** Key of the sequence table, where a writer without an aggregate version keeps each order key's last seq. */
export const SEQUENCE_KEYS = { partitionKey: 'orderKey', lastSeqAttribute: 'lastSeq' } as const;

const NAMES = {
  '#orderKey': SEQUENCE_KEYS.partitionKey,
  '#lastSeq': SEQUENCE_KEYS.lastSeqAttribute,
} as const;

/**
 * The counter's move as an action of the write's transaction: `lastSeq` set to the write's last seq, on the
 * condition that no other writer took a seq of the order key since it was read — the row is still absent, or still
 * holds the value read. Two writers that read the same value cannot both commit, so no seq is given twice.
 */
export function counterUpdate(sequenceTable: string, advance: CounterAdvance): TransactWriteAction {
  const stillUnused = 'attribute_not_exists(#orderKey)';
  const stillAtTheSeqRead = '#lastSeq = :from';
  return {
    Update: {
      TableName: sequenceTable,
      Key: { [SEQUENCE_KEYS.partitionKey]: advance.orderKey },
      UpdateExpression: 'SET #lastSeq = :to',
      ...(advance.from === undefined
        ? {
            ConditionExpression: stillUnused,
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: { ':to': advance.to },
          }
        : {
            ConditionExpression: stillAtTheSeqRead,
            ExpressionAttributeNames: { '#lastSeq': NAMES['#lastSeq'] },
            ExpressionAttributeValues: { ':to': advance.to, ':from': advance.from },
          }),
    },
  };
}

/** Which counters to read. */
export interface CounterRead {
  readonly client: DynamoDBDocumentClient;
  readonly sequenceTable: string;
  readonly orderKeys: readonly string[];
}

/**
 * The last seq of each order key's counter, read strongly consistent (an eventually consistent read could return
 * a value that was already taken, and every attempt would then fail its condition); an order key without a
 * counter row is left out. Throws a RangeError for a counter that does not hold a whole number of at least 1.
 */
export async function readLastSeqs({
  client,
  sequenceTable,
  orderKeys,
}: CounterRead): Promise<Map<string, number>> {
  const read = await Promise.all(
    orderKeys.map(async (orderKey) => {
      const { Item: item } = await client.send(
        new GetCommand({
          TableName: sequenceTable,
          Key: { [SEQUENCE_KEYS.partitionKey]: orderKey },
          ConsistentRead: true,
          ProjectionExpression: '#lastSeq',
          ExpressionAttributeNames: { '#lastSeq': SEQUENCE_KEYS.lastSeqAttribute },
        }),
      );
      if (item === undefined) return undefined;
      const lastSeq = item[SEQUENCE_KEYS.lastSeqAttribute];
      if (typeof lastSeq !== 'number' || !Number.isSafeInteger(lastSeq) || lastSeq < 1) {
        throw new RangeError(
          `the sequence counter of ${orderKey} in ${sequenceTable} holds ${JSON.stringify(lastSeq)}, not a whole number of at least 1`,
        );
      }
      return [orderKey, lastSeq] as const;
    }),
  );
  return new Map(read.filter((entry) => entry !== undefined));
}
