import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { cursorKeyOf } from '../../../shared/aws/inbox-table.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { consumeSqsEvent } from '../../../shared/lambda/consumer-handler.ts';
import type { ConflictKeys } from '../../../shared/lambda/sqs-batch-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { ControlTopic } from '../../../shared/message/control-topics.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  MEMORY_TABLE_SCHEMAS,
  sqsRecord,
  testMessageId,
} from '../../support/factories.ts';

const ORDER_KEY = 'order#order-1';

describe('consumeSqsEvent with the outbox’s own messages in the batch', () => {
  it('hands neither the plan nor the conflict keys a control message, and applies it after the records of its order key before it', async () => {
    const db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
    const client = db.asDocumentClient();
    const seen: { plan: string[]; keys: string[] } = { plan: [], keys: [] };
    const plan: PlanEffect = (message) => {
      seen.plan.push(message.topic);
      return { apply: [], onConditionFailure: 'NEVER' };
    };
    const conflictKeys: ConflictKeys = (message) => {
      seen.keys.push(message.topic);
      // A user's function reads the business payload, which a control message does not have.
      return [(message.payload as { orderId: string }).orderId];
    };
    const second: Envelope = envelope({ messageId: testMessageId(2), orderKey: ORDER_KEY, seq: 2 });
    const skipOfFirst: Envelope = envelope({
      messageId: testMessageId(900),
      topic: ControlTopic.SKIP,
      payload: { orderKey: ORDER_KEY, seq: 1 },
    });
    const unreadable: Envelope = envelope({
      messageId: testMessageId(901),
      topic: ControlTopic.ERASE,
      payload: { orderId: 'order-1' },
    });

    const { response, topics } = await consumeSqsEvent(
      { Records: [second, skipOfFirst, unreadable].map((message) => sqsRecord(message)) },
      lambdaContext(),
      {
        plan,
        conflictKeys,
        deps: { client, inboxTable: 'inbox', subscriber: 'inventory', clock: () => FIXED_NOW },
        logger: { info: () => {}, warn: () => {} },
      },
    );

    // Seq 2 parked first (batch order within the order key), then the skip moved the cursor and applied it.
    const { Item: cursor } = await client.send(
      new GetCommand({ TableName: 'inbox', Key: { messageId: cursorKeyOf(`${ORDER_KEY}#inventory`) } }),
    );
    expect(cursor?.lastSeq).toBe(2);
    expect(topics[ControlTopic.SKIP]).toMatchObject({ applied: 1 });
    expect(topics['order.created']).toMatchObject({ parked: 1, applied: 1 });
    // The erase it cannot read fails alone, and is never guessed at.
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: `sqs-${unreadable.messageId}` }] });
    // Seq 2 was planned when it arrived (then parked) and when the skip applied it; nothing else was.
    expect(seen).toEqual({ plan: ['order.created', 'order.created'], keys: ['order.created'] });
  });
});
