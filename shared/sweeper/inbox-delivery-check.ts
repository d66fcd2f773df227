import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { INBOX_KEYS } from '../consumer/inbox.ts';
import type { DeliveryCheck } from './sweep.ts';

/**
 * The reconciliation check for a consumer built on this library: the message was applied exactly when the
 * consumer's inbox holds its id (the inbox row commits with the effect), and the row's outcome is the one the
 * producer shows. A strongly consistent read, so a just-committed effect is never mistaken for a missing one.
 */
export function inboxDeliveryCheck(client: DynamoDBDocumentClient, inboxTable: string): DeliveryCheck {
  return async (message) => {
    const result = await client.send(
      new GetCommand({
        TableName: inboxTable,
        Key: { [INBOX_KEYS.partitionKey]: message.messageId },
        ConsistentRead: true,
        ProjectionExpression: '#messageId, #outcome',
        ExpressionAttributeNames: { '#messageId': INBOX_KEYS.partitionKey, '#outcome': 'outcome' },
      }),
    );
    if (result.Item === undefined) return { verdict: 'MISSING' };
    const outcome = result.Item.outcome;
    return typeof outcome === 'string' ? { verdict: 'DELIVERED', outcome } : { verdict: 'DELIVERED' };
  };
}
