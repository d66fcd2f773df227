/**
 * A console over the in-memory backend: the producer's outbox (the admin core's own fixture: tables, queues, a
 * clock that moves when the core pauses), one subscriber, loyalty, in a stack of its own with its queue and
 * dead-letter queue, and the console served on a free port of 127.0.0.1.
 */
import { monotonicFactory } from 'ulid';
import type { SubscriberAdminDeps } from '../../../../shared/admin/subscriber-admin.ts';
import { DynamoAuditLog, scanAuditRows } from '../../../../shared/aws/audit-table.ts';
import { bundleConsole } from '../../../../shared/cli/console/console-assets.ts';
import type { ConsoleContext } from '../../../../shared/cli/console/console-context.ts';
import { type RunningConsole, startConsoleServer } from '../../../../shared/cli/console/console-server.ts';
import { deliveryIdOf } from '../../../../shared/message/delivery-id.ts';
import { MessageStatus } from '../../../../shared/message/message-status.ts';
import { envelope, sqsRecord, testMessageId } from '../../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  MemoryAdminQueues,
  ORDER_DLQ,
  ORDER_QUEUE,
  PAYMENT_DLQ,
  PAYMENT_QUEUE,
  storeMessage,
} from '../../admin/admin-fixture.ts';

/** Loyalty's queue and dead-letter queue, in its own stack (the admin fixture's second pair of queues). */
export const LOYALTY_QUEUE = PAYMENT_QUEUE;
export const LOYALTY_DLQ = PAYMENT_DLQ;

/** The console's world. */
export interface ConsoleFixture {
  readonly admin: AdminFixture;
  readonly context: ConsoleContext;
  readonly loyalty: SubscriberAdminDeps;
}

/** The producer delivers order.created to loyalty; order.cancelled goes to its own queue (with a DLQ). */
export function consoleFixture(): ConsoleFixture {
  const admin = adminFixture({
    topicQueues: { 'order.cancelled': ORDER_QUEUE },
    deadLetterQueues: { 'order.cancelled': ORDER_DLQ },
    deliveryInboxes: { 'order.cancelled': 'inbox' },
    subscriptions: { 'order.created': { loyalty: LOYALTY_QUEUE } },
  });
  const client = admin.options.client;
  const nextId = monotonicFactory();
  const loyalty: SubscriberAdminDeps = {
    subscriber: 'loyalty',
    queues: new MemoryAdminQueues(admin.queues),
    topicQueues: { 'order.created': LOYALTY_QUEUE },
    deadLetterQueues: { 'order.created': LOYALTY_DLQ },
    inboxTables: { 'order.created': 'paymentsInbox' },
    audit: new DynamoAuditLog({ client, auditTable: 'audit' }),
    clock: admin.clock.now,
    newId: () => nextId(admin.clock.now().getTime()),
    sleep: admin.options.sleep,
  };
  const context: ConsoleContext = {
    stackName: 'OutboxOrders',
    outboxName: 'OutboxOrders-Outbox',
    deps: admin.deps,
    orderedTopics: {},
    subscriptions: { 'order.created': { loyalty: LOYALTY_QUEUE } },
    subscribers: [{ subscriber: 'loyalty', stackName: 'OutboxLoyalty', deps: loyalty }],
    audit: [{ stackName: 'OutboxOrders', scan: (page) => scanAuditRows(client, 'audit', page) }],
    actor: async () => 'local:ana',
    notes: [],
  };
  return { admin, context, loyalty };
}

/** A FAILED delivery to loyalty of message `n`, refused with `lastError`. */
export async function failedDelivery(
  fixture: ConsoleFixture,
  n: number,
  lastError = `InternalError: queue refused message ${testMessageId(n)} after 3 attempts`,
): Promise<string> {
  const messageId = testMessageId(n);
  await storeMessage(fixture.admin, {
    messageId: deliveryIdOf(messageId, 'loyalty'),
    subscriber: 'loyalty',
    status: MessageStatus.FAILED,
    lastError,
    attempts: 3,
    aggregateId: `order-${n}`,
  });
  return messageId;
}

/** Message `n` dead-lettered by loyalty's consumer (MAX_RECEIVES, its last error), in loyalty's DLQ. */
export async function deadLetter(fixture: ConsoleFixture, n: number): Promise<void> {
  await fixture.admin.queues.deadLetter({
    queueUrl: LOYALTY_DLQ,
    record: sqsRecord(envelope({ messageId: testMessageId(n) })),
    reason: 'MAX_RECEIVES',
    lastError: 'Error: points table unavailable',
  });
}

/** The bundled page, once per test file. */
let assets: ReturnType<typeof bundleConsole> | undefined;

/** Serves `context` on a free port of 127.0.0.1. */
export async function serve(context: ConsoleContext): Promise<RunningConsole> {
  assets ??= bundleConsole();
  return startConsoleServer({ context, assets: await assets, port: 0 });
}

/** A browser's side of a console: its session cookie and CSRF token, and requests made as its page makes them. */
export interface ConsoleClient {
  readonly cookie: string;
  readonly csrf: string;
  get(path: string): Promise<Response>;
  post(path: string, body: unknown): Promise<Response>;
}

/** Signs in with the console's one-time URL, as the browser does, and reads the CSRF token from the page. */
export async function signIn(running: RunningConsole): Promise<ConsoleClient> {
  const login = await fetch(running.url, { redirect: 'manual' });
  const setCookie = login.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  const page = await (await fetch(`${running.origin}/`, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)?.[1] ?? '';
  return {
    cookie,
    csrf,
    get: (path) => fetch(`${running.origin}${path}`, { headers: { cookie } }),
    post: (path, body) =>
      fetch(`${running.origin}${path}`, {
        method: 'POST',
        headers: {
          cookie,
          origin: running.origin,
          'content-type': 'application/json',
          'x-csrf-token': csrf,
        },
        body: JSON.stringify(body),
      }),
  };
}
