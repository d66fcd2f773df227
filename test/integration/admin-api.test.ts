import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { relayDeps } from '../../shared/lambda/relay-handler.ts';
import { relayStreamBatch } from '../../shared/lambda/relay-stream-batch.ts';
import { sweeperDeps } from '../../shared/lambda/sweeper-handler.ts';
import type { Envelope } from '../../shared/message/envelope.ts';
import type { MessagePublisher } from '../../shared/relay/message-publisher.ts';
import { DEFAULT_SWEEPER_SETTINGS, sweep } from '../../shared/sweeper/sweep.ts';
import {
  documentClient,
  placeOrder,
  request,
  scanAll,
  startRuntime,
  stockOf,
  waitFor,
  waitForMessageStatus,
} from './support.ts';

const quiet = { info: () => {}, warn: () => {} };

/** Orders whose messages SQS refuses while the downstream is "down". */
const refused = new Set<string>();

/** Refuses the sends of the orders in {@link refused}, as SQS would refuse a poison entry. */
function refusingPublisher(publisher: MessagePublisher): MessagePublisher {
  return {
    publishBatch: async (queueUrl: string, messages: readonly Envelope[]) => {
      const rejected = messages.filter((m) => refused.has(m.aggregateId));
      const result = await publisher.publishBatch(
        queueUrl,
        messages.filter((m) => !rejected.includes(m)),
      );
      return {
        sent: result.sent,
        failed: [
          ...result.failed,
          ...rejected.map((m) => ({ messageId: m.messageId, error: 'InternalError: refused by the test' })),
        ],
      };
    },
  };
}

let runtime: LocalRuntime;
const logs: string[] = [];

beforeAll(async () => {
  runtime = await startRuntime({
    log: (line) => logs.push(line),
    handlers: {
      // The test runs the sweeper itself, once, after the replay.
      'Outbox/Sweeper': () => async () => ({}),
      // One attempt only: a refused send makes the message FAILED at once.
      'Outbox/Relay': (_base, env) => {
        const policies = JSON.stringify({
          'order.created': { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 60_000, maxAttempts: 1 },
        });
        const deps = relayDeps({ ...env, RETRY_POLICIES: policies });
        const relay = { ...deps, publisher: refusingPublisher(deps.publisher) };
        return (event) => relayStreamBatch(event as DynamoDBStreamEvent, relay, quiet);
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
});

/** One sweeper round over every shard, as a scheduled run would make it. */
async function sweepOnce(): Promise<void> {
  let rounds = 1;
  await sweep({
    ...sweeperDeps(runtime.env['Outbox/Sweeper'] ?? {}),
    owner: 'admin-api-test',
    remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
    sleep: async () => {},
    settings: { ...DEFAULT_SWEEPER_SETTINGS, stopBeforeMs: 0 },
  });
}

/** Every audit row of one message, straight from the audit table. */
async function auditRowsOf(messageId: string): Promise<Record<string, unknown>[]> {
  const result = await documentClient(runtime).send(
    new QueryCommand({
      TableName: runtime.env['Outbox/Admin']?.AUDIT_TABLE,
      KeyConditionExpression: '#subject = :subject',
      ExpressionAttributeNames: { '#subject': 'subject' },
      ExpressionAttributeValues: { ':subject': `message:${messageId}` },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}

describe('admin API through the local runtime (moto)', () => {
  it('says once at start that the /admin routes’ IAM authorisation is not enforced locally', () => {
    const lines = logs.filter((line) => line.includes('not enforced locally'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('AWS_IAM');
    expect(lines[0]).toContain('/admin/{proxy+}');
    expect(runtime.app.routes.filter((route) => route.path.startsWith('/admin'))).toEqual([
      expect.objectContaining({ functionName: 'Outbox/Admin', authorization: 'AWS_IAM' }),
      expect.objectContaining({ functionName: 'Outbox/Admin', authorization: 'AWS_IAM' }),
    ]);
  });

  it('finds a FAILED message, refuses a cancel without reason, replays it with one, and it is CONFIRMED once', async () => {
    refused.add('order-admin-1');
    const stockBefore = await stockOf(runtime, 'SKU-APPLE');
    const { messageId } = await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 2 }], 'order-admin-1');
    await waitForMessageStatus(runtime, 'order-admin-1', 'FAILED');

    const listed = await request(runtime, 'GET /admin/messages?status=FAILED&topic=order.created');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((item: { messageId: string }) => item.messageId)).toContain(messageId);

    const stats = await request(runtime, 'GET /admin/stats');
    expect(stats.status).toBe(200);
    expect(stats.body.topics['order.created'].FAILED).toBeGreaterThanOrEqual(1);
    expect(stats.body.totals.FAILED).toBeGreaterThanOrEqual(1);

    const badLimit = await request(runtime, 'GET /admin/messages?status=FAILED&limit=0');
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.details[0].field).toBe('limit');

    const cancelled = await request(runtime, `POST /admin/messages/${messageId}/cancel`, {});
    expect(cancelled.status).toBe(400);
    expect(cancelled.body.details).toEqual([expect.objectContaining({ field: 'reason' })]);
    const unchanged = await request(runtime, `GET /admin/messages/${messageId}`);
    expect(unchanged.body.message.status).toBe('FAILED');
    expect(await auditRowsOf(messageId)).toEqual([]);

    refused.delete('order-admin-1');
    const replayed = await request(runtime, `POST /admin/messages/${messageId}/replay`, {
      reason: 'inventory fixed (INC-42)',
    });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ from: 'FAILED', to: 'PENDING' });
    const again = await request(runtime, `POST /admin/messages/${messageId}/replay`, { reason: 'twice' });
    expect(again.status).toBe(409);

    await sweepOnce();
    await waitForMessageStatus(runtime, 'order-admin-1', 'CONFIRMED');
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(stockBefore - 2);

    const shown = await request(runtime, `GET /admin/messages/${messageId}`);
    const events = shown.body.history.map((entry: { event: string }) => entry.event);
    expect(events).toEqual(expect.arrayContaining(['FAILED', 'REPLAYED', 'SENT', 'CONFIRMED']));
    const replay = shown.body.history.find((entry: { event: string }) => entry.event === 'REPLAYED');
    expect(replay).toMatchObject({
      by: expect.stringMatching(/^local:.+/),
      reason: 'inventory fixed (INC-42)',
    });

    const audit = await auditRowsOf(messageId);
    expect(audit).toEqual([
      expect.objectContaining({ action: 'REPLAY', actor: replay.by, reason: 'inventory fixed (INC-42)' }),
    ]);

    const after = await request(runtime, 'GET /admin/stats');
    expect(after.body.totals.FAILED).toBe(stats.body.totals.FAILED - 1);
  });

  it('skips a FAILED order.created: the parked order.cancelled is resent, applied and CONFIRMED', async () => {
    const orderId = 'order-skip-1';
    const inbox = runtime.env['Outbox/Admin']?.DELIVERY_INBOXES;
    const inboxTable = (JSON.parse(inbox ?? '{}') as Record<string, string>)['order.cancelled'] ?? '';
    const parkedRow = async () =>
      (
        await documentClient(runtime).send(
          new GetCommand({ TableName: inboxTable, Key: { messageId: `parked#order#${orderId}#2` } }),
        )
      ).Item;
    refused.add(orderId);
    await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 1 }], orderId);
    await waitForMessageStatus(runtime, orderId, 'FAILED');
    refused.delete(orderId);
    // The cancellation (seq 2) reaches the consumer, which holds it until seq 1 is applied: never, it FAILED.
    expect((await request(runtime, `POST /orders/${orderId}/cancel`, {})).status).toBe(202);
    await waitFor(parkedRow, 30_000, 'the order.cancelled to be parked');
    // And the relay has recorded its send (it does so as it sends; this only rules out a slow machine).
    await waitFor(
      async () =>
        (await scanAll(runtime, 'outbox')).some(
          (m) => m.topic === 'order.cancelled' && m.aggregateId === orderId && m.status === 'SENT',
        )
          ? true
          : undefined,
      30_000,
      'the order.cancelled to be SENT',
    );

    const skipped = await request(runtime, 'POST /admin/ordering/skip', {
      orderKey: `order#${orderId}`,
      seq: 1,
      reason: 'order.created refused for good (INC-9)',
    });

    expect(skipped.status).toBe(200);
    expect(skipped.body).toMatchObject({
      from: 'FAILED',
      cancelled: true,
      cursors: [{ inboxTable, lastSeq: null, outcome: 'MOVED' }],
      successor: { seq: 2, status: 'SENT', action: 'RESENT' },
    });
    await sweepOnce();
    const order = await waitFor(
      async () => {
        const { body } = await request(runtime, `GET /orders/${orderId}`);
        const cancelled = body?.messages?.find((m: { topic: string }) => m.topic === 'order.cancelled');
        return cancelled?.status === 'CONFIRMED' ? body : undefined;
      },
      30_000,
      'the order.cancelled to be CONFIRMED',
    );
    expect(order.messages.map((m: { status: string }) => m.status).sort()).toEqual([
      'CANCELLED',
      'CONFIRMED',
    ]);
    // The reservation was never made: order.created was skipped.
    const cancellation = order.messages.find((m: { topic: string }) => m.topic === 'order.cancelled');
    expect(cancellation.outcome).toBe('NOTHING_TO_RELEASE');
    const cursor = await documentClient(runtime).send(
      new GetCommand({ TableName: inboxTable, Key: { messageId: `cursor#order#${orderId}` } }),
    );
    expect(cursor.Item?.lastSeq).toBe(2);
  });

  it('answers 404 for an unknown message and an unknown admin path', async () => {
    const message = await request(runtime, 'GET /admin/messages/01J00000000000000000000000');
    const path = await request(runtime, 'GET /admin/nothing');

    expect([message.status, path.status]).toEqual([404, 404]);
  });
});
