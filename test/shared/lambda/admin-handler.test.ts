import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { auditSubject } from '../../../shared/admin/audit-trail.ts';
import { createAdminHandler } from '../../../shared/lambda/admin-handler.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { envelope, lambdaContext, sqsRecord, testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  ORDER_DLQ,
  ORDER_QUEUE,
  storedMessage,
  storeMessage,
} from '../admin/admin-fixture.ts';

const ANA = 'arn:aws:iam::123456789012:user/ana';
const ON_AWS = { POWERTOOLS_LOG_LEVEL: 'SILENT' };
const LOCALLY = { ...ON_AWS, AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' };

let fixture: AdminFixture;

beforeEach(() => {
  fixture = adminFixture();
});

interface Call {
  readonly method?: string;
  readonly query?: Record<string, string>;
  readonly body?: unknown;
  readonly identity?: { userArn?: string | null; caller?: string | null; user?: string | null };
  readonly env?: Record<string, string>;
}

/** Calls the admin handler, built over the fixture, with a request on `/admin/<proxy>`. */
async function call(
  proxy: string,
  options: Call = {},
): Promise<{
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
  body: any;
  headers: APIGatewayProxyResult['headers'];
}> {
  const handler = createAdminHandler({ deps: () => fixture.deps }).withEnv(options.env ?? ON_AWS);
  const identity = options.identity ?? { userArn: ANA };
  const event = {
    httpMethod: options.method ?? 'GET',
    path: `/admin/${proxy}`,
    resource: '/admin/{proxy+}',
    pathParameters: { proxy },
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: null,
    headers: { 'content-type': 'application/json' },
    multiValueHeaders: {},
    body:
      options.body === undefined
        ? null
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: {
      requestId: 'request-1',
      identity: { userArn: null, caller: null, user: null, sourceIp: '127.0.0.1', ...identity },
    },
  } as unknown as APIGatewayProxyEvent;
  const result = await handler(event, lambdaContext());
  return { status: result.statusCode, body: JSON.parse(result.body), headers: result.headers };
}

const failed = (n: number, overrides: { topic?: string; aggregateId?: string } = {}) =>
  storeMessage(fixture, { messageId: testMessageId(n), status: MessageStatus.FAILED, ...overrides });

describe('admin API: listing and showing', () => {
  it('lists FAILED messages through the attention index, paginated with a cursor', async () => {
    await failed(1);
    await failed(2);
    await storeMessage(fixture, { messageId: testMessageId(3), status: MessageStatus.PENDING });

    const first = await call('messages', { query: { status: 'FAILED', limit: '1' } });
    const second = await call('messages', { query: { status: 'FAILED', cursor: first.body.cursor } });

    expect(first.status).toBe(200);
    const ids = [...first.body.items, ...second.body.items].map(
      (item: { messageId: string }) => item.messageId,
    );
    expect(ids.sort()).toEqual([testMessageId(1), testMessageId(2)]);
    expect(first.body.items).toHaveLength(1);
    expect(fixture.commands.every((command) => (command as object).constructor.name !== 'ScanCommand')).toBe(
      true,
    );
  });

  it.each([
    [{ status: 'BROKEN' }, 'status'],
    [{ status: 'FAILED', limit: 'ten' }, 'limit'],
    [{ status: 'FAILED', limit: '0' }, 'limit'],
    [{ status: 'FAILED', limit: '501' }, 'limit'],
    [{ status: 'FAILED', since: 'yesterday' }, 'since'],
    [{ status: 'FAILED', cursor: 'not-a-cursor' }, 'cursor'],
    [{ state: 'FAILED' }, 'state'],
  ])('refuses the query %j with a 400 naming %s', async (query, field) => {
    const response = await call('messages', { query });

    expect(response.status).toBe(400);
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('refuses a listing without a filter: it would read the whole table', async () => {
    const response = await call('messages');

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('LIST_FILTER_REQUIRED');
  });

  it('shows a message with its history, and answers 404 for an unknown id', async () => {
    await failed(1);

    const shown = await call(`messages/${testMessageId(1)}`);
    const missing = await call(`messages/${testMessageId(9)}`);

    expect(shown.status).toBe(200);
    expect(shown.body.message).toMatchObject({ messageId: testMessageId(1), status: 'FAILED' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'MESSAGE_NOT_FOUND', messageId: testMessageId(9) });
  });
});

describe('admin API: replay and cancel', () => {
  it('replays a FAILED message as the IAM caller: PENDING, history and audit row name the ARN', async () => {
    await failed(1);

    const response = await call(`messages/${testMessageId(1)}/replay`, {
      method: 'POST',
      body: { reason: 'inventory fixed (INC-42)' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ from: 'FAILED', to: 'PENDING', messageId: testMessageId(1) });
    const stored = await storedMessage(fixture, testMessageId(1));
    expect(stored?.status).toBe('PENDING');
    expect(stored?.history).toEqual([
      expect.objectContaining({ event: 'REPLAYED', by: ANA, reason: 'inventory fixed (INC-42)' }),
    ]);
    const audit = await auditRows(fixture, auditSubject.message(testMessageId(1)));
    expect(audit).toEqual([
      expect.objectContaining({ action: 'REPLAY', actor: ANA, reason: 'inventory fixed (INC-42)' }),
    ]);
  });

  it('names the caller by its principal id when API Gateway gives no ARN', async () => {
    await failed(1);

    await call(`messages/${testMessageId(1)}/cancel`, {
      method: 'POST',
      body: { reason: 'withdrawn' },
      identity: { userArn: null, caller: 'AIDAEXAMPLE' },
    });

    const audit = await auditRows(fixture, auditSubject.message(testMessageId(1)));
    expect(audit.map((row) => row.actor)).toEqual(['AIDAEXAMPLE']);
  });

  it('cancels a PENDING message with a reason', async () => {
    await storeMessage(fixture, { messageId: testMessageId(1), status: MessageStatus.PENDING });

    const response = await call(`messages/${testMessageId(1)}/cancel`, {
      method: 'POST',
      body: { reason: 'order withdrawn' },
    });

    expect(response.status).toBe(200);
    expect((await storedMessage(fixture, testMessageId(1)))?.status).toBe('CANCELLED');
  });

  it.each([
    ['no body', undefined],
    ['an empty reason', { reason: '   ' }],
    ['a reason that is not text', { reason: 42 }],
  ])('refuses a cancel with %s: 400 naming reason, nothing changed, nothing audited', async (_, body) => {
    await storeMessage(fixture, { messageId: testMessageId(1), status: MessageStatus.PENDING });

    const response = await call(`messages/${testMessageId(1)}/cancel`, { method: 'POST', body });

    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ field: 'reason' })]);
    expect((await storedMessage(fixture, testMessageId(1)))?.status).toBe('PENDING');
    expect(await auditRows(fixture, auditSubject.message(testMessageId(1)))).toEqual([]);
  });

  it('refuses a body that is not JSON, or has a field the route does not take', async () => {
    const notJson = await call(`messages/${testMessageId(1)}/replay`, { method: 'POST', body: '{reason:' });
    const extra = await call(`messages/${testMessageId(1)}/replay`, {
      method: 'POST',
      body: { reason: 'r', force: true },
    });

    expect([notJson.status, extra.status]).toEqual([400, 400]);
    expect(notJson.body.details[0].field).toBe('(body)');
    expect(extra.body.details).toEqual([expect.objectContaining({ field: 'force' })]);
  });

  it('answers 409 naming the status when a CONFIRMED message is replayed', async () => {
    await storeMessage(fixture, { messageId: testMessageId(1), status: MessageStatus.CONFIRMED });

    const response = await call(`messages/${testMessageId(1)}/replay`, {
      method: 'POST',
      body: { reason: 'again' },
    });

    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({
      code: 'WRONG_STATUS',
      status: 'CONFIRMED',
      allowed: ['FAILED', 'CANCELLED'],
    });
    expect((await storedMessage(fixture, testMessageId(1)))?.status).toBe('CONFIRMED');
  });

  it('answers 404 for a replay of an unknown message', async () => {
    const response = await call(`messages/${testMessageId(9)}/replay`, {
      method: 'POST',
      body: { reason: 'r' },
    });

    expect(response.status).toBe(404);
  });
});

describe('admin API: bulk replay, redrive, stats and erase', () => {
  it('bulk-replays a topic: a dry run changes nothing, the real run replays at the given rate', async () => {
    await failed(1);
    await failed(2);
    await failed(3, { topic: 'payment.captured' });

    const dry = await call('messages/replay', {
      method: 'POST',
      body: { topic: 'order.created', dryRun: true, reason: 'check' },
    });
    const statusesAfterDryRun = [
      (await storedMessage(fixture, testMessageId(1)))?.status,
      (await storedMessage(fixture, testMessageId(2)))?.status,
    ];
    const run = await call('messages/replay', {
      method: 'POST',
      body: { topic: 'order.created', ratePerSecond: 2, reason: 'INC-42 fixed' },
    });

    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, total: 2, replayed: 0 });
    expect(statusesAfterDryRun).toEqual(['FAILED', 'FAILED']);
    expect(run.body).toMatchObject({ dryRun: false, total: 2, replayed: 2 });
    expect((await storedMessage(fixture, testMessageId(3)))?.status).toBe('FAILED');
    expect(fixture.sleeps.length).toBeGreaterThan(0);
  });

  it.each([
    [{ dryRun: true, reason: 'r' }, 'topic'],
    [{ topic: 'order.created', ratePerSecond: 0, reason: 'r' }, 'ratePerSecond'],
    [{ topic: 'order.created', dryRun: 'yes', reason: 'r' }, 'dryRun'],
    [{ topic: 'order.created' }, 'reason'],
  ])('refuses the bulk replay %j with a 400 naming %s', async (body, field) => {
    const response = await call('messages/replay', { method: 'POST', body });

    expect(response.status).toBe(400);
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('redrives only the chosen dead letters back to their queue, by receive/send/delete on an emulator', async () => {
    for (const n of [1, 2]) {
      await fixture.queues.deadLetter({
        queueUrl: ORDER_DLQ,
        record: sqsRecord(envelope({ messageId: testMessageId(n) })),
        reason: 'MAX_RECEIVES',
        lastError: 'Error: inventory down',
      });
    }

    const response = await call('dlq/redrive', {
      method: 'POST',
      body: { messageIds: [testMessageId(2)], reason: 'inventory back' },
      env: LOCALLY,
      identity: { user: 'ana' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ dryRun: false, moved: 1, left: 1 });
    expect(fixture.queues.peek(ORDER_QUEUE).map((m) => m.attributes.message_id)).toEqual([testMessageId(2)]);
    expect(fixture.queues.peek(ORDER_DLQ).map((m) => m.attributes.message_id)).toEqual([testMessageId(1)]);
  });

  it('leaves an unfiltered redrive on AWS to SQS message move tasks (202)', async () => {
    const started: unknown[] = [];
    fixture = adminFixture({
      queues: Object.assign(Object.create(adminFixture().deps.queues), {
        startMoveTask: async (task: unknown) => {
          started.push(task);
          return 'task-handle-1';
        },
      }),
    });

    const response = await call('dlq/redrive', {
      method: 'POST',
      body: { queue: ORDER_DLQ, ratePerSecond: 50, reason: 'inventory back' },
    });

    expect(response.status).toBe(202);
    expect(response.body.moveTasks).toEqual([expect.objectContaining({ taskHandle: 'task-handle-1' })]);
    expect(started).toEqual([expect.objectContaining({ deadLetterQueueUrl: ORDER_DLQ, maxPerSecond: 50 })]);
  });

  it('counts per status and topic', async () => {
    await failed(1);
    await storeMessage(fixture, { messageId: testMessageId(2), status: MessageStatus.PENDING });

    const response = await call('stats');

    expect(response.status).toBe(200);
    expect(response.body.totals).toMatchObject({ FAILED: 1, PENDING: 1 });
    expect(response.body.deadLetterQueues.length).toBeGreaterThan(0);
  });

  it('erases an aggregate, and refuses with 409 while one of its messages is in flight', async () => {
    await failed(1, { aggregateId: 'order-1' });
    await storeMessage(fixture, {
      messageId: testMessageId(2),
      status: MessageStatus.PENDING,
      aggregateId: 'order-2',
    });

    const erased = await call('aggregates/order-1/erase', { method: 'POST', body: { reason: 'GDPR #881' } });
    const refused = await call('aggregates/order-2/erase', { method: 'POST', body: { reason: 'GDPR #882' } });

    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ aggregateId: 'order-1', messagesDeleted: 1 });
    expect(await storedMessage(fixture, testMessageId(1))).toBeUndefined();
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('AGGREGATE_IN_FLIGHT');
  });
});

describe('admin API: routing, callers and failures', () => {
  it('answers 404 for a path it does not have and 405 for a method the path does not take', async () => {
    const missing = await call('queues');
    const wrongMethod = await call('stats', { method: 'POST', body: { reason: 'r' } });

    expect(missing.status).toBe(404);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers?.allow).toBe('GET');
  });

  it('refuses an unsigned request on AWS with a 403 and changes nothing', async () => {
    await failed(1);

    const response = await call(`messages/${testMessageId(1)}/replay`, {
      method: 'POST',
      body: { reason: 'r' },
      identity: { userArn: null, caller: null, user: null },
    });

    expect(response.status).toBe(403);
    expect((await storedMessage(fixture, testMessageId(1)))?.status).toBe('FAILED');
  });

  it('names an unsigned local caller local:<user>, from the identity or else the operating-system user', async () => {
    await failed(1);
    await failed(2);

    await call(`messages/${testMessageId(1)}/replay`, {
      method: 'POST',
      body: { reason: 'r' },
      env: LOCALLY,
      identity: { user: 'ana' },
    });
    await call(`messages/${testMessageId(2)}/replay`, {
      method: 'POST',
      body: { reason: 'r' },
      env: LOCALLY,
      identity: { user: null },
    });

    const actors = [
      ...(await auditRows(fixture, auditSubject.message(testMessageId(1)))),
      ...(await auditRows(fixture, auditSubject.message(testMessageId(2)))),
    ].map((row) => row.actor);
    expect(actors[0]).toBe('local:ana');
    expect(actors[1]).toMatch(/^local:.+/);
  });

  it('answers an unexpected failure with a 500 that leaks nothing but the request id', async () => {
    fixture = adminFixture({
      client: {
        send: async () => {
          throw new Error('ProvisionedThroughputExceededException: table arn:aws:dynamodb:secret');
        },
      } as never,
    });

    const response = await call('stats');

    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: 'internal error', requestId: 'aws-request-1', details: [] });
  });
});
