/**
 * The console's server over HTTP, on the in-memory backend: what it refuses (no session, no CSRF token, another
 * origin), what a signed-in page reads and does through the admin core, and that it listens on loopback only.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../../../../shared/cli/console/console-server.ts';
import { MessageStatus } from '../../../../shared/message/message-status.ts';
import { testMessageId } from '../../../support/factories.ts';
import { auditRows, storedMessage, storeMessage } from '../../admin/admin-fixture.ts';
import {
  type ConsoleFixture,
  consoleFixture,
  deadLetter,
  failedDelivery,
  LOYALTY_DLQ,
  serve,
  signIn,
} from './console-fixture.ts';

let fixture: ConsoleFixture;
let running: RunningConsole;

beforeEach(async () => {
  fixture = consoleFixture();
  running = await serve(fixture.context);
});

afterEach(async () => {
  await running.close();
});

// biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
const json = async (response: Response): Promise<any> => response.json();

describe('the console server', () => {
  it('listens on 127.0.0.1 and prints a sign-in URL there', () => {
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    expect(running.origin).toBe(`http://127.0.0.1:${running.port}`);
  });

  it('refuses every request without the session cookie with 401: pages, script, API, events, actions', async () => {
    for (const path of [
      '/',
      '/failures',
      '/messages/x',
      '/assets/console.js',
      '/api/overview',
      '/api/jobs/x/events',
    ]) {
      const response = await fetch(`${running.origin}${path}`, { redirect: 'manual' });
      expect(response.status, path).toBe(401);
    }
    const action = await fetch(`${running.origin}/api/messages/x/replay`, {
      method: 'POST',
      headers: { origin: running.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(action.status).toBe(401);
  });

  it('signs in once: the token URL sets the cookie and redirects without it; the same URL again is a 401', async () => {
    const first = await fetch(running.url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; Path=\//);

    expect((await fetch(running.url, { redirect: 'manual' })).status).toBe(401);
  });

  it('serves the page with its own script and style sheet, a CSRF token and a policy that loads nothing else', async () => {
    const client = await signIn(running);
    const page = await client.get('/failures');

    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/assets/console.js">');
    expect(client.csrf).toMatch(/^[\w-]{43}$/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'");
    expect((await client.get('/assets/console.js')).status).toBe(200);
    expect((await client.get('/assets/console.css')).headers.get('content-type')).toMatch(/text\/css/);
  });

  it('asks again once from its own page when a page comes without the cookie (a link from a chat)', async () => {
    const refused = await fetch(`${running.origin}/messages/${testMessageId(1)}`);

    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain(
      `<meta http-equiv="refresh" content="0; url=/messages/${testMessageId(1)}?recheck=1">`,
    );
    const again = await fetch(`${running.origin}/messages/${testMessageId(1)}?recheck=1`);
    expect(await again.text()).not.toContain('http-equiv="refresh"');
  });

  it('refuses an action without the CSRF token or from another origin with 403, and changes nothing', async () => {
    const messageId = await failedDelivery(fixture, 1);
    const client = await signIn(running);
    const url = `${running.origin}/api/messages/${messageId}/replay`;
    const body = JSON.stringify({ reason: 'loyalty fixed' });

    const noToken = await fetch(url, {
      method: 'POST',
      headers: { cookie: client.cookie, origin: running.origin, 'content-type': 'application/json' },
      body,
    });
    const otherOrigin = await fetch(url, {
      method: 'POST',
      headers: {
        cookie: client.cookie,
        origin: 'http://127.0.0.1:3000',
        'x-csrf-token': client.csrf,
        'content-type': 'application/json',
      },
      body,
    });

    expect([noToken.status, otherOrigin.status]).toEqual([403, 403]);
    expect((await storedMessage(fixture.admin, `${messageId}#loyalty`))?.status).toBe('FAILED');
  });

  it('replays a delivery with the reason, audited under the operator, and answers what it did', async () => {
    const messageId = await failedDelivery(fixture, 1);
    const client = await signIn(running);

    const answer = await client.post(`/api/messages/${messageId}/replay`, {
      reason: 'loyalty fixed',
      subscriber: 'loyalty',
    });

    expect(answer.status).toBe(200);
    expect(await json(answer)).toMatchObject({
      messageId,
      subscriber: 'loyalty',
      from: 'FAILED',
      to: 'PENDING',
    });
    expect((await storedMessage(fixture.admin, `${messageId}#loyalty`))?.status).toBe('PENDING');
    expect(await auditRows(fixture.admin, `message:${messageId}`)).toEqual([
      expect.objectContaining({ action: 'REPLAY', actor: 'local:ana', reason: 'loyalty fixed' }),
    ]);
    const audit = await json(await client.get('/api/audit'));
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'REPLAY',
        subject: `message:${messageId}`,
        stackName: 'OutboxOrders',
      }),
    ]);
  });

  it('answers a refusal of the core with its status: no reason is a 400, a CONFIRMED message a 409', async () => {
    const messageId = await failedDelivery(fixture, 1);
    const client = await signIn(running);

    const noReason = await client.post(`/api/messages/${messageId}/replay`, {});
    expect(noReason.status).toBe(400);
    expect((await json(noReason)).error.code).toBe('REASON_REQUIRED');
    await client.post(`/api/messages/${messageId}/cancel`, { reason: 'withdrawn' });
    expect((await client.post(`/api/messages/${messageId}/cancel`, { reason: 'again' })).status).toBe(409);
  });

  it("skips a subscriber's ordering gap with the reason and answers what the CLI would print", async () => {
    const messageId = testMessageId(1);
    await storeMessage(fixture.admin, {
      messageId: `${messageId}#loyalty`,
      subscriber: 'loyalty',
      status: MessageStatus.FAILED,
      orderKey: 'order#order-1#loyalty',
      seq: 1,
    });
    const client = await signIn(running);

    const answer = await client.post('/api/ordering/skip', {
      orderKey: 'order#order-1',
      seq: 1,
      subscriber: 'loyalty',
      reason: 'order withdrawn',
    });

    expect(answer.status).toBe(200);
    const body = await json(answer);
    expect(body.result).toMatchObject({
      orderKey: 'order#order-1#loyalty',
      seq: 1,
      from: 'FAILED',
      to: 'CANCELLED',
    });
    expect(body.summary).toMatch(/^skipped order#order-1#loyalty seq 1/);
    expect((await storedMessage(fixture.admin, `${messageId}#loyalty`))?.status).toBe('CANCELLED');
    expect(
      (await client.post('/api/ordering/skip', { orderKey: 'order#order-1', seq: 1, subscriber: 'loyalty' }))
        .status,
    ).toBe(400);
  });

  it('groups the FAILED deliveries by cause, ids and numbers masked', async () => {
    for (const n of [1, 2, 3]) await failedDelivery(fixture, n);
    await failedDelivery(fixture, 4, 'QueueDoesNotExist: The specified queue does not exist.');
    const client = await signIn(running);

    const failures = await json(await client.get('/api/failures'));

    expect(failures.total).toBe(4);
    expect(failures.groups).toEqual([
      expect.objectContaining({
        kind: 'InternalError',
        message: 'queue refused message <id> after <n> attempts',
        count: 3,
        topics: ['order.created'],
        subscribers: ['loyalty'],
      }),
      expect.objectContaining({ kind: 'QueueDoesNotExist', count: 1 }),
    ]);
  });

  it("finds a subscriber's dead letter: its queue's depth, a peek with the reason, and its redrive", async () => {
    await deadLetter(fixture, 7);
    const client = await signIn(running);

    const queues = await json(await client.get('/api/dead-letters'));
    expect(queues.owners).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          subscriber: 'loyalty',
          stackName: 'OutboxLoyalty',
          queues: [expect.objectContaining({ queueUrl: LOYALTY_DLQ, messages: 1 })],
        }),
      ]),
    );
    const peek = await json(await client.post('/api/dead-letters/peek', { queueUrl: LOYALTY_DLQ }));
    expect(peek.messages).toEqual([
      expect.objectContaining({
        messageId: testMessageId(7),
        cause: 'MAX_RECEIVES',
        lastError: 'Error: points table unavailable',
      }),
    ]);

    const started = await client.post('/api/dead-letters/redrive', {
      queueUrl: LOYALTY_DLQ,
      reason: 'points back',
    });
    expect(started.status).toBe(202);
    const { job } = await json(started);
    const ended = await running.jobs.settled(job.id);
    expect(ended).toMatchObject({ state: 'DONE', report: { moved: 1, left: 0 } });
    expect(fixture.admin.queues.peek(LOYALTY_DLQ)).toEqual([]);
  });

  it('takes a search to the page that shows it: a message id, an aggregate id', async () => {
    const messageId = await failedDelivery(fixture, 1);
    const client = await signIn(running);

    expect(await json(await client.get(`/api/search?q=${messageId}`))).toEqual({
      kind: 'message',
      location: `/messages/${messageId}`,
    });
    expect(await json(await client.get('/api/search?q=order-1'))).toEqual({
      kind: 'aggregate',
      location: '/aggregates/order-1',
    });
    expect((await client.get('/api/search?q=nothing-here')).status).toBe(404);
  });

  it('erases an aggregate only when its id is typed again', async () => {
    const messageId = await failedDelivery(fixture, 1);
    const client = await signIn(running);

    const unconfirmed = await client.post('/api/aggregates/order-1/erase', {
      reason: 'GDPR request 17',
      confirm: 'order',
    });
    expect(unconfirmed.status).toBe(400);
    expect(await storedMessage(fixture.admin, `${messageId}#loyalty`)).toBeDefined();

    const erased = await client.post('/api/aggregates/order-1/erase', {
      reason: 'GDPR request 17',
      confirm: 'order-1',
    });
    expect(erased.status).toBe(200);
    expect(await storedMessage(fixture.admin, `${messageId}#loyalty`)).toBeUndefined();
  });
});
