import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { FIXED_NOW, MEMORY_TABLE_SCHEMAS, outboxItem, testMessageId } from '../../support/factories.ts';

const messageId = testMessageId(7);
const later = (ms: number) => new Date(FIXED_NOW.getTime() + ms);

let db: MemoryDocumentClient;
let store: DynamoOutboxStore;

beforeEach(() => {
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  store = new DynamoOutboxStore({ client: db.asDocumentClient(), tableName: 'outbox' });
});

async function stored(): Promise<Record<string, unknown> | undefined> {
  return (await db.send(new GetCommand({ TableName: 'outbox', Key: { messageId } }))).Item as
    | Record<string, unknown>
    | undefined;
}

describe('recording failed sends when two writers race (the in-memory DynamoDB)', () => {
  it('refuses a record made from a stale read of the attempts: an attempt is never counted twice or lost', async () => {
    await db.send(
      new PutCommand({ TableName: 'outbox', Item: { ...outboxItem({ messageId, attempts: 1 }) } }),
    );
    const retry = (attempts: number) => ({
      kind: 'retry' as const,
      attempts,
      nextAttemptAt: later(10_000),
    });

    // One writer saw 1 attempt and records the second; another had read the message at 0 attempts.
    const first = await store.recordSendFailure({
      messageId,
      seenAttempts: 1,
      decision: retry(2),
      error: 'Throttled',
      now: FIXED_NOW,
    });
    const stale = await store.recordSendFailure({
      messageId,
      seenAttempts: 0,
      decision: retry(1),
      error: 'Throttled',
      now: FIXED_NOW,
    });

    expect([first, stale]).toEqual(['RETRY_SCHEDULED', 'ALREADY_ADVANCED']);
    // Without the check, attempts would go back to 1 and the message would get one attempt more than its policy.
    expect(await stored()).toMatchObject({ status: 'PENDING', attempts: 2 });
  });

  it('undoes only its own SENT mark: a refusal recorded late never undoes a later send', async () => {
    await db.send(
      new PutCommand({ TableName: 'outbox', Item: { ...outboxItem({ messageId, attempts: 0 }) } }),
    );
    expect(await store.markSent({ messageId, now: FIXED_NOW })).toBe('SENT');
    const refused = (markedAt: Date) =>
      store.recordSendFailure({
        messageId,
        seenAttempts: 0,
        decision: { kind: 'retry', attempts: 1, refusals: 1, nextAttemptAt: later(1_000) },
        error: 'InternalError',
        now: later(5),
        markedAt: markedAt.toISOString(),
      });

    expect(await refused(FIXED_NOW)).toBe('RETRY_SCHEDULED');
    expect(await stored()).toMatchObject({ status: 'PENDING', attempts: 1, refusals: 1 });
    expect(await stored()).not.toHaveProperty('sentAt');
    // Sent again, later; a second record of the first mark's refusal (a retried call) must leave it SENT.
    expect(await store.markSent({ messageId, now: later(2_000) })).toBe('SENT');
    expect(await refused(FIXED_NOW)).toBe('ALREADY_ADVANCED');
    expect(await stored()).toMatchObject({ status: 'SENT', sentAt: later(2_000).toISOString() });
  });
});
