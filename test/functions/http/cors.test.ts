import type { APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpHandler } from '../../../functions/http/http-handler.ts';
import { jsonResponse } from '../../../functions/http/responses.ts';
import { apiEvent, lambdaContext } from '../../support/factories.ts';

const QUIET = { POWERTOOLS_LOG_LEVEL: 'SILENT' };
const ORIGIN = 'https://shop.example.com';

/** A handler that answers 200, or throws when the request asks it to. */
const handler = httpHandler('cors-test', () => async (event) => {
  if (event.headers['x-fail'] === 'yes') throw new Error('boom');
  return jsonResponse(200, { ok: true }, { 'x-kept': 'yes' });
});

async function call(env: Record<string, string>, fail = false): Promise<APIGatewayProxyResult> {
  const event = apiEvent({ headers: fail ? { 'x-fail': 'yes' } : {} });
  return (await handler.withEnv(env)(event, lambdaContext())) as APIGatewayProxyResult;
}

describe('the handlers’ answers under CORS', () => {
  it('name the configured origin on a success, keeping their own headers', async () => {
    const response = await call({ ...QUIET, CORS_ALLOW_ORIGIN: ORIGIN });
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'access-control-allow-origin': ORIGIN, 'x-kept': 'yes' });
  });

  it('name it on the 500 the error boundary answers, too', async () => {
    const response = await call({ ...QUIET, CORS_ALLOW_ORIGIN: ORIGIN }, true);
    expect(response.statusCode).toBe(500);
    expect(response.headers?.['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('carry no CORS header when the stack configured none', async () => {
    for (const fail of [false, true]) {
      const response = await call(QUIET, fail);
      expect(response.headers?.['access-control-allow-origin']).toBeUndefined();
    }
  });
});
