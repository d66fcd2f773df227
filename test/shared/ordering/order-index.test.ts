import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_KEYS } from '../../../shared/aws/outbox-table.ts';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { envelope, FIXED_NOW, MEMORY_TABLE_SCHEMAS, testMessageId } from '../../support/factories.ts';

const { orderIndex } = OUTBOX_KEYS;
let memory: MemoryDocumentClient;

/** A page of the byOrderKey index for `condition` on order key K (`:k`) and seq (`:a`, `:b`). */
async function queryOrderIndex(
  condition: string,
  values: Record<string, unknown>,
  forward = true,
): Promise<Record<string, unknown>[]> {
  const page = await memory.send(
    new QueryCommand({
      TableName: 'outbox',
      IndexName: orderIndex.name,
      KeyConditionExpression: condition,
      ExpressionAttributeNames: {
        '#orderKey': orderIndex.partitionKey,
        ...(condition.includes('#seq') ? { '#seq': orderIndex.sortKey } : {}),
      },
      ExpressionAttributeValues: { ':k': 'order#order-1', ...values },
      ScanIndexForward: forward,
    }),
  );
  return (page.Items ?? []) as Record<string, unknown>[];
}

beforeAll(async () => {
  memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  const writer = {
    client: memory.asDocumentClient(),
    outboxTable: 'outbox',
    ordering: { 'order.created': { scope: 'order', gapTimeoutMs: 60_000 } },
    sequenceTable: 'sequences',
    clock: () => FIXED_NOW,
  };
  // Twelve ordered messages of order-1 (seq 1…12: 10, 11 and 12 sort after 9 only as numbers), one of another
  // order, and an unordered one of order-1.
  for (let n = 1; n <= 12; n += 1) {
    await writeWithOutbox(writer, { actions: [], messages: [envelope({ messageId: testMessageId(n) })] });
  }
  await writeWithOutbox(writer, {
    actions: [],
    messages: [
      envelope({ messageId: testMessageId(20), aggregateId: 'order-2' }),
      envelope({ messageId: testMessageId(21), topic: 'payment.captured' }),
    ],
  });
});

describe('the byOrderKey index of the in-memory outbox', () => {
  it('finds the message at one seq: orderKey = K AND seq = s, with the keys only', async () => {
    expect(await queryOrderIndex('#orderKey = :k AND #seq = :a', { ':a': 10 })).toEqual([
      { messageId: testMessageId(10), orderKey: 'order#order-1', seq: 10 },
    ]);
  });

  it('finds the messages of a seq range, sorted as numbers', async () => {
    const found = await queryOrderIndex('#orderKey = :k AND #seq BETWEEN :a AND :b', { ':a': 8, ':b': 11 });

    expect(found.map((item) => item.seq)).toEqual([8, 9, 10, 11]);
    expect(found.map((item) => item.messageId)).toEqual([8, 9, 10, 11].map(testMessageId));
  });

  it('lists a whole order key in seq order, forward and backward', async () => {
    const seqs = Array.from({ length: 12 }, (_, i) => i + 1);

    expect((await queryOrderIndex('#orderKey = :k', {})).map((item) => item.seq)).toEqual(seqs);
    expect((await queryOrderIndex('#orderKey = :k', {}, false)).map((item) => item.seq)).toEqual(
      seqs.toReversed(),
    );
  });

  it('holds only ordered messages (sparse), each under its own order key', async () => {
    const all = await queryOrderIndex('#orderKey = :k AND #seq >= :a', { ':a': 1 });

    expect(all).toHaveLength(12);
    expect(all.map((item) => item.messageId)).not.toContain(testMessageId(21));
    expect(all.map((item) => item.messageId)).not.toContain(testMessageId(20));
  });

  it('finds nothing for a seq that was never written', async () => {
    expect(await queryOrderIndex('#orderKey = :k AND #seq = :a', { ':a': 13 })).toEqual([]);
  });
});
