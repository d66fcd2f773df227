import { describe, expect, it } from 'vitest';
import { inboxPut } from '../../../shared/aws/inbox-table.ts';
import { FIXED_NOW, testMessageId } from '../../support/factories.ts';

describe('inboxPut', () => {
  it('puts the row only if the message id was never seen, returning the old row otherwise', () => {
    const put = inboxPut({
      inboxTable: 'inbox',
      messageId: testMessageId(1),
      topic: 'order.created',
      outcome: 'APPLIED',
      now: FIXED_NOW,
      retentionDays: 7,
    });

    expect(put).toEqual({
      Put: {
        TableName: 'inbox',
        Item: {
          messageId: testMessageId(1),
          topic: 'order.created',
          outcome: 'APPLIED',
          processedAt: FIXED_NOW.toISOString(),
          expiresAt: FIXED_NOW.getTime() / 1000 + 7 * 86_400,
        },
        ConditionExpression: 'attribute_not_exists(#messageId)',
        ExpressionAttributeNames: { '#messageId': 'messageId' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  });

  it('keeps rows 30 days by default, longer than SQS keeps a message (14 days)', () => {
    const put = inboxPut({
      inboxTable: 'inbox',
      messageId: testMessageId(1),
      topic: 't.t',
      outcome: 'APPLIED',
      now: FIXED_NOW,
    });

    expect(put.Put?.Item?.expiresAt).toBe(FIXED_NOW.getTime() / 1000 + 30 * 86_400);
  });
});
