import { monotonicFactory } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { MoveTask } from '../../../shared/admin/admin-queues.ts';
import { SubscriberAdmin, type SubscriberAdminDeps } from '../../../shared/admin/subscriber-admin.ts';
import { AUDIT_KEYS, DynamoAuditLog } from '../../../shared/aws/audit-table.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { envelope, manualClock, sqsRecord, testMessageId } from '../../support/factories.ts';
import { MemoryAdminQueues } from './admin-fixture.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders-loyalty';
const DLQ = `${QUEUE}-dlq`;
const actor = 'local:ana';

/** Loyalty's own stack: its queue with one dead letter of each topic, its audit table unless `audit` is false. */
function loyalty(options: { readonly audit?: boolean } = {}) {
  const clock = manualClock();
  const queues = new MemoryQueues(
    {
      [QUEUE]: { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, deadLetterQueueUrl: DLQ },
      [DLQ]: { visibilityTimeoutMs: 30_000 },
    },
    clock.now,
  );
  for (const [n, topic] of [
    [1, 'order.created'],
    [2, 'order.cancelled'],
  ] as const) {
    queues.deadLetter({
      queueUrl: DLQ,
      record: sqsRecord(envelope({ messageId: testMessageId(n), topic })),
      reason: 'POISON',
      lastError: 'SyntaxError',
    });
  }
  const db = new MemoryDocumentClient({
    audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
  });
  const started: MoveTask[] = [];
  const adminQueues = Object.assign(new MemoryAdminQueues(queues), {
    startMoveTask: async (task: MoveTask) => {
      started.push(task);
      return 'task-1';
    },
  });
  const deps: SubscriberAdminDeps = {
    subscriber: 'loyalty',
    queues: adminQueues,
    topicQueues: { 'order.created': QUEUE, 'order.cancelled': QUEUE },
    deadLetterQueues: { 'order.created': DLQ, 'order.cancelled': DLQ },
    inboxTables: { 'order.created': 'LoyaltyInbox', 'order.cancelled': 'LoyaltyInbox' },
    ...(options.audit === false
      ? {}
      : { audit: new DynamoAuditLog({ client: db.asDocumentClient(), auditTable: 'audit' }) }),
    clock: clock.now,
    newId: monotonicFactory(),
    sleep: async (ms) => clock.advance(ms),
  };
  return { admin: new SubscriberAdmin(deps), queues, db, started };
}

describe('SubscriberAdmin', () => {
  it('counts its queue once with both its topics, its dead letters, and names its inbox', async () => {
    const { admin } = loyalty();
    const stats = await admin.stats();
    expect(stats).toMatchObject({
      subscriber: 'loyalty',
      queues: [{ queueName: 'orders-loyalty', topics: ['order.created', 'order.cancelled'], messages: 0 }],
      deadLetterQueues: [{ queueName: 'orders-loyalty-dlq', messages: 2, inFlight: 0 }],
      inboxes: [{ table: 'LoyaltyInbox', topics: ['order.created', 'order.cancelled'] }],
    });
  });

  it("moves one topic's dead letters back to its queue, journalling each in its stack's audit table", async () => {
    const { admin, queues, db } = loyalty();
    const report = await admin.redriveDeadLetters({
      topic: 'order.cancelled',
      ratePerSecond: 10,
      dryRun: false,
      actor,
      reason: 'parser fixed',
    });
    expect(report).toMatchObject({ moved: 1, left: 1 });
    expect(queues.peek(QUEUE).map((m) => m.attributes.message_id)).toEqual([testMessageId(2)]);
    expect(db.items('audit').map((row) => [String(row.subject).split(':')[0], row.action])).toEqual(
      expect.arrayContaining([
        ['redrive', 'REDRIVE'],
        ['dlq', 'REDRIVE'],
      ]),
    );
  });

  it('refuses to move or hand to a move task without an audit table, and changes nothing; a dry run still lists', async () => {
    const { admin, queues, started } = loyalty({ audit: false });
    await expect(
      admin.redriveDeadLetters({ ratePerSecond: 10, dryRun: false, actor, reason: 'r' }),
    ).rejects.toThrow(ConfigError);
    await expect(admin.startMoveTasks({ actor })).rejects.toThrow(/has no audit table/);
    expect(started).toEqual([]);
    expect(queues.peek(DLQ)).toHaveLength(2);

    const dry = await admin.redriveDeadLetters({ ratePerSecond: 10, dryRun: true, actor });
    expect(dry).toMatchObject({ matched: 2, moved: 0 });
    expect(queues.peek(DLQ)).toHaveLength(2);
  });

  it('hands an unfiltered redrive to an SQS move task, audited in its stack', async () => {
    const { admin, started, db } = loyalty();
    expect(admin.canUseMoveTask({ ratePerSecond: 10, dryRun: false, actor })).toBe(true);
    await admin.startMoveTasks({ actor, reason: 'parser fixed' });
    expect(started).toEqual([{ deadLetterQueueUrl: DLQ, destinationQueueUrl: QUEUE }]);
    expect(db.items('audit')).toEqual([
      expect.objectContaining({
        action: 'REDRIVE',
        details: expect.objectContaining({ moveTask: 'task-1' }),
      }),
    ]);
  });
});
