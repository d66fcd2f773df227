import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../../shared/lambda/admin-handler.ts';
import { parseAdminRequest } from '../../../shared/lambda/admin-requests.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { lambdaContext, testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  storedMessage,
  storeMessage,
} from '../admin/admin-fixture.ts';

const ANA = 'arn:aws:iam::123456789012:user/ana';
const orderKey = 'order#order-1';

let fixture: AdminFixture;

beforeEach(() => {
  fixture = adminFixture({ orderedTopics: { 'order.created': { scope: 'order', gapTimeoutMs: 300_000 } } });
});

/** A POST on `/admin/<proxy>` as API Gateway hands it to the admin function, signed by Ana. */
function post(proxy: string, body: unknown): APIGatewayProxyEvent {
  return {
    httpMethod: 'POST',
    path: `/admin/${proxy}`,
    resource: '/admin/{proxy+}',
    pathParameters: { proxy },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    headers: { 'content-type': 'application/json' },
    multiValueHeaders: {},
    body: JSON.stringify(body),
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: {
      requestId: 'request-1',
      identity: { userArn: ANA, caller: null, user: null, sourceIp: '127.0.0.1' },
    },
  } as unknown as APIGatewayProxyEvent;
}

// biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
async function skip(body: unknown): Promise<{ status: number; body: any }> {
  const handler = createAdminHandler({ deps: () => fixture.deps }).withEnv({
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  const result = await handler(post('ordering/skip', body), lambdaContext());
  return { status: result.statusCode, body: JSON.parse(result.body) };
}

async function storeSeq(seq: number, status: MessageStatus): Promise<string> {
  const messageId = testMessageId(seq);
  await storeMessage(fixture, { messageId, status, aggregateId: 'order-1', orderKey, seq });
  return messageId;
}

async function putCursor(lastSeq: number): Promise<void> {
  await fixture.db.send(
    new PutCommand({
      TableName: 'inbox',
      Item: { messageId: `cursor#${orderKey}`, lastSeq, updatedAt: 'x' },
    }),
  );
}

describe('admin API: POST /admin/ordering/skip', () => {
  it('takes the order key in the body (it holds a #) with a whole seq and a reason', () => {
    expect(parseAdminRequest(post('ordering/skip', { orderKey, seq: 2, reason: 'stuck' }))).toEqual({
      ok: true,
      command: { kind: 'skip', body: { orderKey, seq: 2, reason: 'stuck' } },
    });
    const bad = parseAdminRequest(post('ordering/skip', { orderKey: '', seq: 1.5, extra: true }));
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.refusal.statusCode).toBe(400);
    expect(bad.refusal.details.map((detail) => detail.field).sort()).toEqual([
      'extra',
      'orderKey',
      'reason',
      'seq',
    ]);
  });

  it('skips the gap as the IAM caller: message cancelled, cursor moved, successor resent, audited', async () => {
    const skipped = await storeSeq(2, MessageStatus.FAILED);
    const parked = await storeSeq(3, MessageStatus.SENT);
    await putCursor(1);

    const answer = await skip({ orderKey, seq: 2, reason: 'payload unfixable' });

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      action: 'SKIP',
      messageId: skipped,
      cancelled: true,
      cursors: [{ inboxTable: 'inbox', lastSeq: 1, outcome: 'MOVED' }],
      successor: { messageId: parked, action: 'RESENT' },
      changed: true,
    });
    const { Item } = await fixture.db.send(
      new GetCommand({ TableName: 'inbox', Key: { messageId: `cursor#${orderKey}` } }),
    );
    expect((Item as { lastSeq?: number } | undefined)?.lastSeq).toBe(2);
    expect(await storedMessage(fixture, parked)).toMatchObject({ status: MessageStatus.PENDING });
    expect(await auditRows(fixture, `message:${skipped}`)).toEqual([
      expect.objectContaining({ action: 'SKIP', actor: ANA, reason: 'payload unfixable' }),
    ]);
  });

  it("skips a subscriber's delivery named by `subscriber`: answers with the outbox.skip it sent, never touching an inbox", async () => {
    const delivery = `${testMessageId(1)}#inventory`;
    await storeMessage(fixture, {
      messageId: delivery,
      subscriber: 'inventory',
      status: MessageStatus.FAILED,
      aggregateId: 'order-1',
      orderKey: `${orderKey}#inventory`,
      seq: 1,
    });

    const answer = await skip({ orderKey, seq: 1, subscriber: 'inventory', reason: 'order withdrawn' });

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      orderKey: `${orderKey}#inventory`,
      messageId: delivery,
      subscriber: 'inventory',
      cursors: [],
      skipSent: { subscriber: 'inventory', topic: 'outbox.skip', messageId: expect.any(String) },
    });
    expect(fixture.db.itemCount('inbox')).toBe(0);
    expect(await storedMessage(fixture, `${answer.body.skipSent.messageId}#inventory`)).toMatchObject({
      topic: 'outbox.skip',
      payload: { orderKey, seq: 1 },
    });
  });

  it('answers 409 naming the earlier gap, 409 for a SENT message and 404 for a seq that does not exist', async () => {
    await storeSeq(3, MessageStatus.FAILED);
    await storeSeq(4, MessageStatus.SENT);
    await putCursor(1);

    const earlier = await skip({ orderKey, seq: 3, reason: 'x' });
    expect(earlier).toEqual({
      status: 409,
      body: expect.objectContaining({
        code: 'EARLIER_GAP',
        orderKey,
        seq: 3,
        inboxTable: 'inbox',
        lastSeq: 1,
        error: expect.stringContaining('skip or replay seq 2 first'),
      }),
    });
    const sent = await skip({ orderKey, seq: 4, reason: 'x' });
    expect(sent.status).toBe(409);
    expect(sent.body).toMatchObject({ code: 'WRONG_STATUS', status: 'SENT', messageId: testMessageId(4) });
    expect((await skip({ orderKey, seq: 9, reason: 'x' })).status).toBe(404);
    expect((await skip({ orderKey, seq: 3 })).status).toBe(400);
  });
});
