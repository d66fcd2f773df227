/**
 * The fan-out world's producer as its operator sees it: an admin over its tables, and a scene with one message
 * FAILED to one subscriber and CONFIRMED by the other.
 */
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import { expect } from 'vitest';
import { OutboxAdmin } from '../../../shared/admin/outbox-admin.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { queueOf, world } from '../../support/fan-out-world.ts';
import { MemoryAdminQueues } from './admin-fixture.ts';

const { PENDING, FAILED, CONFIRMED } = MessageStatus;

/** The operator's admin over the world's producer tables, through `client` (the world's own by default). */
export function adminOf(w: ReturnType<typeof world>, client: DynamoDBDocumentClient = w.client) {
  const nextId = monotonicFactory();
  const deps = dynamoAdminDeps({
    client,
    outboxTable: 'outbox',
    auditTable: 'audit',
    queues: new MemoryAdminQueues(w.queues),
    topicQueues: {},
    deadLetterQueues: {},
    deliveryInboxes: {},
    subscriptions: { 'order.created': { inventory: queueOf('inventory'), loyalty: queueOf('loyalty') } },
    dueShards: 8,
    retentionDays: 30,
    clock: w.clock.now,
    newId: () => nextId(w.clock.now().getTime()),
    sleep: async () => {},
  });
  return { deps, admin: new OutboxAdmin(deps) };
}

/**
 * Two messages of order.created: the first CONFIRMED by inventory and FAILED to loyalty (its queue was down, and
 * one refused send fails a delivery), the second written and not yet relayed (PENDING to both).
 */
export async function failedForLoyalty() {
  const w = world({ maxAttempts: 1 });
  await w.client.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 5 } }));
  w.down.add('loyalty');
  const first = await w.write(1);
  await w.relay();
  await w.consume('inventory');
  await w.applyReceipts();
  const second = await w.write(2);
  const { deps, admin } = adminOf(w);
  const statusOf = async (messageId: string) =>
    Object.fromEntries(
      (await w.rows())
        .filter((row) => row.messageId.startsWith(messageId))
        .map((row) => [row.subscriber, row.status]),
    );
  expect(await statusOf(first.messageId)).toEqual({ inventory: CONFIRMED, loyalty: FAILED });
  expect(await statusOf(second.messageId)).toEqual({ inventory: PENDING, loyalty: PENDING });
  return { w, deps, admin, first, second, statusOf };
}

/** The message ids each subscriber's queue holds now (taken off the queue). */
export function queued(w: ReturnType<typeof world>): Record<string, string[]> {
  const ids = (bodies: string[]) => bodies.map((body) => (JSON.parse(body) as Envelope).messageId);
  return { inventory: ids(w.take('inventory')), loyalty: ids(w.take('loyalty')) };
}

/** The subscribers whose queues hold `messageId` now, once per copy (every queue is emptied). */
export function receivers(w: ReturnType<typeof world>, messageId: string): string[] {
  return Object.entries(queued(w)).flatMap(([subscriber, ids]) =>
    ids.filter((id) => id === messageId).map(() => subscriber),
  );
}
