import { type GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { cursorKeyOf, inboxDeliveryCheck } from '../../../shared/aws/inbox-table.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { type ConsumeDeps, consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { FIXED_NOW, MEMORY_TABLE_SCHEMAS, outboxItem, testMessageId } from '../../support/factories.ts';

const ORDER_KEY = 'order#order-1';

/** The outbox item of message `seq` of order-1, as the sweeper reconciles it. */
function sent(seq: number): OutboxItem {
  return outboxItem({ messageId: testMessageId(200 + seq), orderKey: ORDER_KEY, seq, status: 'SENT' });
}

const record: PlanEffect = () => ({ reject: 'NOTED' });

let db: MemoryDocumentClient;
let deps: ConsumeDeps;

beforeEach(() => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  deps = { client: db.asDocumentClient(), inboxTable: 'inbox', clock: () => FIXED_NOW };
});

describe('inboxDeliveryCheck on an ordered topic', () => {
  it('reports a message the consumer holds for its predecessor as PARKED, with when and where the cursor stands', async () => {
    const check = inboxDeliveryCheck(db.asDocumentClient(), 'inbox');
    await consumeMessage(sent(1), record, deps);
    await consumeMessage(sent(3), record, deps);

    await expect(check(sent(3))).resolves.toEqual({
      verdict: 'PARKED',
      parkedAt: FIXED_NOW.toISOString(),
      lastSeq: 1,
    });
    await expect(check(sent(2))).resolves.toEqual({ verdict: 'MISSING' });
  });

  it('reports a parked message with no cursor yet at lastSeq 0', async () => {
    await consumeMessage(sent(2), record, deps);

    await expect(inboxDeliveryCheck(db.asDocumentClient(), 'inbox')(sent(2))).resolves.toMatchObject({
      verdict: 'PARKED',
      lastSeq: 0,
    });
  });

  it('reports DELIVERED with the outcome once the parked message is applied after its predecessor', async () => {
    const check = inboxDeliveryCheck(db.asDocumentClient(), 'inbox');
    await consumeMessage(sent(2), record, deps);

    await consumeMessage(sent(1), record, deps);

    await expect(check(sent(2))).resolves.toEqual({ verdict: 'DELIVERED', outcome: 'NOTED' });
  });

  it('reports DELIVERED for a message the cursor has passed without an inbox row (skipped, or the row expired)', async () => {
    await db.send(
      new PutCommand({
        TableName: 'inbox',
        Item: { messageId: cursorKeyOf(ORDER_KEY), lastSeq: 4, updatedAt: FIXED_NOW.toISOString() },
      }),
    );
    const check = inboxDeliveryCheck(db.asDocumentClient(), 'inbox');

    await expect(check(sent(4))).resolves.toEqual({ verdict: 'DELIVERED' });
    await expect(check(sent(5))).resolves.toEqual({ verdict: 'MISSING' });
  });

  it('reads the inbox row, the cursor and the parked row strongly consistently', async () => {
    const commands: GetCommand[] = [];
    const client = {
      send: async (command: GetCommand) => {
        commands.push(command);
        return db.send(command);
      },
    } as unknown as ConsumeDeps['client'];

    await inboxDeliveryCheck(client, 'inbox')(sent(3));

    expect(commands.map((command) => [command.input.Key?.messageId, command.input.ConsistentRead])).toEqual([
      [sent(3).messageId, true],
      [cursorKeyOf(ORDER_KEY), true],
      [`parked#${ORDER_KEY}#3`, true],
    ]);
  });
});
