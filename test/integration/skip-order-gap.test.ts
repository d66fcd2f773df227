import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminDeps } from '../../shared/admin/admin-deps.ts';
import { EarlierGapError } from '../../shared/admin/admin-errors.ts';
import { auditSubject } from '../../shared/admin/audit-trail.ts';
import { skipOrderGap } from '../../shared/admin/skip-order-gap.ts';
import { AUDIT_KEYS, readAuditTrail } from '../../shared/aws/audit-table.ts';
import { createDocumentClient } from '../../shared/aws/clients.ts';
import { type DynamoAdminDepsOptions, dynamoAdminDeps } from '../../shared/aws/dynamo-admin-deps.ts';
import { cursorKeyOf, INBOX_KEYS } from '../../shared/aws/inbox-table.ts';
import { OUTBOX_KEYS } from '../../shared/aws/outbox-table.ts';
import { MessageStatus } from '../../shared/message/message-status.ts';
import { outboxItem, testMessageId } from '../support/factories.ts';
import { startTestEmulator, TEST_BACKEND, type TestEmulator } from './support/backend.ts';

/**
 * The operator's skip on moto or the embedded backend: the byOrderKey index (keys only, a number sort key) finds the message, and one
 * TransactWriteItems across the outbox, the inbox and the audit table cancels it, moves the cursor and resends
 * the successor — or nothing is written.
 */

const CONFIG = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'skip', secretAccessKey: 'skip' },
} as const;
const TABLES = { outbox: 'skip-outbox', inbox: 'skip-inbox', audit: 'skip-audit' } as const;
const orderKey = 'order#order-7';

let emulator: TestEmulator | undefined;
let dynamodb: DynamoDBClient | undefined;
let client: DynamoDBDocumentClient;
let deps: AdminDeps;

beforeAll(async () => {
  emulator = await startTestEmulator();
  const config = { ...CONFIG, endpoint: emulator.endpoint };
  dynamodb = new DynamoDBClient(config);
  client = createDocumentClient(config);
  const index = OUTBOX_KEYS.orderIndex;
  await dynamodb.send(
    new CreateTableCommand({
      TableName: TABLES.outbox,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: OUTBOX_KEYS.partitionKey, KeyType: 'HASH' }],
      AttributeDefinitions: [
        { AttributeName: OUTBOX_KEYS.partitionKey, AttributeType: 'S' },
        { AttributeName: index.partitionKey, AttributeType: 'S' },
        { AttributeName: index.sortKey, AttributeType: 'N' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: index.projection.type },
        },
      ],
    }),
  );
  for (const [name, keys] of [
    [TABLES.inbox, [INBOX_KEYS.partitionKey]],
    [TABLES.audit, [AUDIT_KEYS.partitionKey, AUDIT_KEYS.sortKey]],
  ] as const) {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: keys.map((key, at) => ({ AttributeName: key, KeyType: at === 0 ? 'HASH' : 'RANGE' })),
        AttributeDefinitions: keys.map((key) => ({ AttributeName: key, AttributeType: 'S' })),
      }),
    );
  }
  const nextId = monotonicFactory();
  deps = dynamoAdminDeps<DynamoAdminDepsOptions>({
    client,
    queues: undefined as never,
    outboxTable: TABLES.outbox,
    auditTable: TABLES.audit,
    topicQueues: {},
    deadLetterQueues: {},
    deliveryInboxes: { 'order.created': TABLES.inbox },
    orderedTopics: { 'order.created': { scope: 'order', gapTimeoutMs: 300_000 } },
    dueShards: 4,
    retentionDays: 30,
    clock: () => new Date(),
    newId: () => nextId(),
    sleep: async () => {},
  });
}, 120_000);

afterAll(async () => {
  client?.destroy();
  dynamodb?.destroy();
  await emulator?.stop();
});

async function storeSeq(seq: number, status: MessageStatus): Promise<string> {
  const messageId = testMessageId(700 + seq);
  const item = { ...outboxItem({ messageId, aggregateId: 'order-7', orderKey, seq }), status };
  await client.send(new PutCommand({ TableName: TABLES.outbox, Item: item }));
  return messageId;
}

async function cursor(): Promise<unknown> {
  const { Item } = await client.send(
    new GetCommand({ TableName: TABLES.inbox, Key: { [INBOX_KEYS.partitionKey]: cursorKeyOf(orderKey) } }),
  );
  return Item?.lastSeq;
}

describe(`skipOrderGap on ${TEST_BACKEND}`, () => {
  it('refuses an earlier gap writing nothing, then skips each message in turn and resends the parked one', async () => {
    await client.send(
      new PutCommand({
        TableName: TABLES.inbox,
        Item: { [INBOX_KEYS.partitionKey]: cursorKeyOf(orderKey), lastSeq: 1, updatedAt: 'x' },
      }),
    );
    const second = await storeSeq(2, MessageStatus.FAILED);
    const third = await storeSeq(3, MessageStatus.CANCELLED);
    const fourth = await storeSeq(4, MessageStatus.SENT);
    const actor = 'local:ops';

    await expect(skipOrderGap(deps, { orderKey, seq: 3, reason: 'too early', actor })).rejects.toBeInstanceOf(
      EarlierGapError,
    );
    expect(await cursor()).toBe(1);

    const first = await skipOrderGap(deps, { orderKey, seq: 2, reason: 'unfixable', actor });
    const then = await skipOrderGap(deps, { orderKey, seq: 3, reason: 'withdrawn', actor });

    expect(first.cursors).toEqual([{ inboxTable: TABLES.inbox, lastSeq: 1, outcome: 'MOVED' }]);
    expect(first.successor?.action).toBe('LEFT');
    expect(then).toMatchObject({ cancelled: false, successor: { messageId: fourth, action: 'RESENT' } });
    expect(await cursor()).toBe(3);
    const status = async (messageId: string) =>
      (await client.send(new GetCommand({ TableName: TABLES.outbox, Key: { messageId } }))).Item?.status;
    expect(await status(second)).toBe(MessageStatus.CANCELLED);
    expect(await status(third)).toBe(MessageStatus.CANCELLED);
    expect(await status(fourth)).toBe(MessageStatus.PENDING);
    const audit = await readAuditTrail(client, TABLES.audit, auditSubject.message(third));
    expect(audit).toEqual([expect.objectContaining({ action: 'SKIP', actor, reason: 'withdrawn' })]);
  });
});
