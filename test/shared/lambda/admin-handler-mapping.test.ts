import { describe, expect, it } from 'vitest';
import {
  InvalidAdminRequestError,
  MoveTaskUnavailableError,
  WrongStatusError,
} from '../../../shared/admin/admin-errors.ts';
import { adminActor } from '../../../shared/lambda/admin-actor.ts';
import { parseAdminRequest } from '../../../shared/lambda/admin-requests.ts';
import { adminErrorAnswer } from '../../../shared/lambda/admin-responses.ts';
import { apiEvent } from '../../support/factories.ts';

const request = (method: string, path: string, body?: unknown) =>
  parseAdminRequest(apiEvent({ method, path, body }));

describe('parseAdminRequest', () => {
  it('routes each admin path to its command, from the request path when there is no proxy parameter', () => {
    expect(request('GET', '/admin/stats')).toEqual({ ok: true, command: { kind: 'stats' } });
    expect(request('GET', '/admin/messages/01J')).toEqual({
      ok: true,
      command: { kind: 'show', messageId: '01J' },
    });
    expect(request('POST', '/admin/messages/01J/cancel', { reason: ' withdrawn ' })).toEqual({
      ok: true,
      command: { kind: 'cancel', messageId: '01J', reason: 'withdrawn' },
    });
    expect(request('POST', '/admin/aggregates/order-1/erase', { reason: 'GDPR' })).toMatchObject({
      command: { kind: 'erase', aggregateId: 'order-1' },
    });
  });

  it('takes POST /admin/messages/replay as a bulk replay with the default rate, not as a message id', () => {
    expect(request('POST', '/admin/messages/replay', { topic: 'order.created', reason: 'r' })).toEqual({
      ok: true,
      command: {
        kind: 'bulkReplay',
        body: {
          topic: 'order.created',
          includeCancelled: false,
          ratePerSecond: 10,
          dryRun: false,
          reason: 'r',
        },
      },
    });
  });

  it('refuses an empty list of message ids for a redrive, naming the field', () => {
    const parsed = request('POST', '/admin/dlq/redrive', { messageIds: [], reason: 'r' });

    expect(parsed).toMatchObject({ ok: false, refusal: { statusCode: 400 } });
    expect(parsed.ok ? [] : parsed.refusal.details.map((d) => d.field)).toEqual(['messageIds']);
  });

  it('answers 404 for an unknown path and 405 with the allowed methods for a wrong one', () => {
    expect(request('GET', '/admin/nothing')).toMatchObject({ ok: false, refusal: { statusCode: 404 } });
    expect(request('DELETE', '/admin/messages/01J')).toMatchObject({
      ok: false,
      refusal: { statusCode: 405, allow: ['GET'] },
    });
  });
});

describe('adminActor', () => {
  it('prefers the IAM ARN, then the principal id', () => {
    const policy = { allowUnsigned: true, localUser: () => 'os-user' };
    expect(adminActor({ userArn: 'arn:aws:iam::1:user/ana', caller: 'AIDA', user: 'x' }, policy)).toBe(
      'arn:aws:iam::1:user/ana',
    );
    expect(adminActor({ userArn: null, caller: 'AIDA' }, policy)).toBe('AIDA');
  });

  it('names an unsigned caller local:<user> only where unsigned requests are allowed', () => {
    expect(adminActor({ user: 'ana' }, { allowUnsigned: true })).toBe('local:ana');
    expect(adminActor({}, { allowUnsigned: true, localUser: () => 'os-user' })).toBe('local:os-user');
    expect(adminActor({ user: 'ana' }, { allowUnsigned: false })).toBeUndefined();
    expect(adminActor(undefined, { allowUnsigned: false })).toBeUndefined();
  });
});

describe('adminErrorAnswer', () => {
  it('answers an admin refusal with its HTTP status, code and the field at fault', () => {
    const invalid = adminErrorAnswer(new InvalidAdminRequestError('limit', 'must be an integer'));
    const wrong = adminErrorAnswer(
      new WrongStatusError({ action: 'replay', messageId: 'm', status: 'SENT', allowed: ['FAILED'] }),
    );
    const unavailable = adminErrorAnswer(new MoveTaskUnavailableError());

    expect(invalid?.statusCode).toBe(400);
    expect(JSON.parse(invalid?.body ?? '{}').details).toEqual([
      { field: 'limit', problem: 'limit must be an integer' },
    ]);
    expect(wrong?.statusCode).toBe(409);
    expect(JSON.parse(wrong?.body ?? '{}')).toMatchObject({ status: 'SENT', allowed: ['FAILED'] });
    expect(unavailable?.statusCode).toBe(501);
  });

  it('leaves any other error to the 500 boundary', () => {
    expect(adminErrorAnswer(new Error('boom'))).toBeUndefined();
  });
});
