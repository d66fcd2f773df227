/**
 * The admin API on a producer with two subscribers: the subscriber filter of list and stats, replay and cancel of
 * one subscriber's delivery or of every one, show with each delivery.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../../shared/lambda/admin-handler.ts';
import { parseAdminRequest } from '../../../shared/lambda/admin-requests.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { apiEvent, lambdaContext } from '../../support/factories.ts';
import { failedForLoyalty, receivers } from '../admin/fan-out-admin-fixture.ts';

const { PENDING, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const ANA = 'arn:aws:iam::123456789012:user/ana';

/** A request to the admin API as API Gateway hands it over, signed by Ana. */
function event(
  method: string,
  path: string,
  options: { readonly query?: Record<string, string>; readonly body?: unknown } = {},
): APIGatewayProxyEvent {
  const base = apiEvent({
    method,
    path: `/admin${path}`,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return {
    ...base,
    queryStringParameters: options.query ?? null,
    requestContext: { ...base.requestContext, identity: { ...base.requestContext.identity, userArn: ANA } },
  };
}

async function scene() {
  const found = await failedForLoyalty();
  const handler = createAdminHandler({ deps: () => found.deps }).withEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT' });
  const call = async (
    method: string,
    path: string,
    options: { readonly query?: Record<string, string>; readonly body?: unknown } = {},
  ) => {
    const result = await handler(event(method, path, options), lambdaContext());
    // biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
    return { status: result.statusCode, body: JSON.parse(result.body) as any };
  };
  return { ...found, call };
}

describe('admin API per subscriber', () => {
  it('lists by subscriber= with each delivery’s subscriber and the message’s own id', async () => {
    const { call, first } = await scene();
    const listed = await call('GET', '/messages', { query: { status: FAILED, subscriber: 'loyalty' } });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ messageId: first.messageId, subscriber: 'loyalty', status: FAILED }),
    ]);
    const none = await call('GET', '/messages', { query: { status: FAILED, subscriber: 'inventory' } });
    expect(none.body.items).toEqual([]);
  });

  it('refuses a subscriber that is not a subscriber name with a 400 naming the parameter', async () => {
    const { call } = await scene();
    const refused = await call('GET', '/messages', { query: { subscriber: 'Loyalty Team' } });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([expect.objectContaining({ field: 'subscriber' })]);
    expect((await call('GET', '/stats', { query: { colour: 'red' } })).status).toBe(400);
  });

  it('counts per subscriber, and one subscriber with stats?subscriber=', async () => {
    const { call } = await scene();
    const all = await call('GET', '/stats');
    expect(all.body.bySubscriber).toEqual([
      expect.objectContaining({ topic: 'order.created', subscriber: 'inventory', PENDING: 1, FAILED: 0 }),
      expect.objectContaining({ topic: 'order.created', subscriber: 'loyalty', PENDING: 1, FAILED: 1 }),
    ]);
    const loyalty = await call('GET', '/stats', { query: { subscriber: 'loyalty' } });
    expect(loyalty.body).toMatchObject({ subscriber: 'loyalty', totals: { PENDING: 1, FAILED: 1 } });
  });

  it("replays loyalty's delivery named in the body; the sweep sends it to loyalty alone", async () => {
    const { call, first, w, statusOf } = await scene();
    w.down.clear();
    w.take('inventory');
    const replayed = await call('POST', `/messages/${first.messageId}/replay`, {
      body: { reason: 'loyalty is back', subscriber: 'loyalty' },
    });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ subscriber: 'loyalty', from: FAILED, to: PENDING });
    expect(await statusOf(first.messageId)).toEqual({ inventory: CONFIRMED, loyalty: PENDING });
    w.clock.advance(60_000);
    await w.sweep();
    expect(receivers(w, first.messageId)).toEqual(['loyalty']);
  });

  it('replays every failed delivery without a subscriber, listing the CONFIRMED one as left', async () => {
    const { call, first } = await scene();
    const replayed = await call('POST', `/messages/${first.messageId}/replay`, { body: { reason: 'fixed' } });
    expect(replayed.status).toBe(200);
    expect(replayed.body.deliveries).toEqual([
      expect.objectContaining({ subscriber: 'inventory', from: CONFIRMED, unchanged: expect.any(String) }),
      { subscriber: 'loyalty', from: FAILED, to: PENDING },
    ]);
    const again = await call('POST', `/messages/${first.messageId}/replay`, { body: { reason: 'twice' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'WRONG_STATUS',
      deliveries: [
        { subscriber: 'inventory', status: CONFIRMED },
        { subscriber: 'loyalty', status: PENDING },
      ],
    });
  });

  it('cancels one delivery, and answers 404 naming the subscribers for one the message does not have', async () => {
    const { call, second, statusOf } = await scene();
    const cancelled = await call('POST', `/messages/${second.messageId}/cancel`, {
      body: { reason: 'no points', subscriber: 'loyalty' },
    });
    expect(cancelled.body).toMatchObject({ subscriber: 'loyalty', from: PENDING, to: CANCELLED });
    expect(await statusOf(second.messageId)).toEqual({ inventory: PENDING, loyalty: CANCELLED });

    const missing = await call('POST', `/messages/${second.messageId}/cancel`, {
      body: { reason: 'x', subscriber: 'billing' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      code: 'MESSAGE_NOT_FOUND',
      subscriber: 'billing',
      subscribers: ['inventory', 'loyalty'],
    });
  });

  it('shows the message with its derived status and each delivery', async () => {
    const { call, first } = await scene();
    const shown = await call('GET', `/messages/${first.messageId}`);
    expect(shown.status).toBe(200);
    expect(shown.body.message).toMatchObject({ messageId: first.messageId, status: FAILED });
    expect(shown.body.deliveries.map((d: { subscriber: string }) => d.subscriber)).toEqual([
      'inventory',
      'loyalty',
    ]);
  });

  it('takes the subscriber of a bulk replay and of an action into its command', () => {
    const parse = (method: string, path: string, body: unknown) =>
      parseAdminRequest(apiEvent({ method, path, body }));
    expect(
      parse('POST', '/admin/messages/replay', { topic: 'order.created', subscriber: 'loyalty', reason: 'r' }),
    ).toMatchObject({ ok: true, command: { kind: 'bulkReplay', body: { subscriber: 'loyalty' } } });
    expect(parse('POST', '/admin/messages/01J/replay', { reason: 'r', subscriber: ' loyalty ' })).toEqual({
      ok: true,
      command: { kind: 'replay', messageId: '01J', reason: 'r', subscriber: 'loyalty' },
    });
  });
});
