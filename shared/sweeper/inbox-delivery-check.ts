import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { INBOX_KEYS } from '../consumer/inbox.ts';
import { cursorKeyOf, isOrdered, lastSeqOf, parkedKeyOf } from '../consumer/order-cursor.ts';
import type { DeliveryCheck, DeliveryVerdict } from './sweep.ts';

/**
 * The reconciliation check for a consumer built on this library: the message was applied exactly when the
 * consumer's inbox holds its id (the inbox row commits with the effect), and the row's outcome is the one the
 * producer shows. A strongly consistent read, so a just-committed effect is never mistaken for a missing one.
 * A message of an ordered topic is also delivered when its order key's cursor has passed it (skipped by an
 * operator, or its inbox row expired), and PARKED when the consumer holds it for its predecessor; the three rows
 * are read at once.
 */
export function inboxDeliveryCheck(client: DynamoDBDocumentClient, inboxTable: string): DeliveryCheck {
  /** One row's key and one attribute of it, read strongly consistent. */
  const read = async (key: string, attribute: string) => {
    const result = await client.send(
      new GetCommand({
        TableName: inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: key },
        ConsistentRead: true,
        ProjectionExpression: `#messageId, #${attribute}`,
        ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey, [`#${attribute}`]: attribute },
      }),
    );
    return result.Item;
  };
  return async (message) => {
    if (!isOrdered(message))
      return deliveredBy(await read(message.messageId, 'outcome')) ?? { verdict: 'MISSING' };
    const [row, cursor, parked] = await Promise.all([
      read(message.messageId, 'outcome'),
      read(cursorKeyOf(message.orderKey), 'lastSeq'),
      read(parkedKeyOf(message.orderKey, message.seq), 'parkedAt'),
    ]);
    const delivered = deliveredBy(row);
    if (delivered !== undefined) return delivered;
    const lastSeq = lastSeqOf(cursor);
    if (lastSeq >= message.seq) return { verdict: 'DELIVERED' };
    if (parked !== undefined && typeof parked.parkedAt === 'string') {
      return { verdict: 'PARKED', parkedAt: parked.parkedAt, lastSeq };
    }
    return { verdict: 'MISSING' };
  };
}

/** The verdict an inbox row gives: delivered, with its outcome when it records one. */
function deliveredBy(row: Record<string, unknown> | undefined): DeliveryVerdict | undefined {
  if (row === undefined) return undefined;
  const outcome = row.outcome;
  return typeof outcome === 'string' ? { verdict: 'DELIVERED', outcome } : { verdict: 'DELIVERED' };
}
