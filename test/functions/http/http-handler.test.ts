import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpHandler } from '../../../functions/http/http-handler.ts';
import { jsonResponse } from '../../../functions/http/responses.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { isEnvHandler } from '../../../shared/lambda/handler-from-env.ts';
import { requireEnv } from '../../../shared/settings/setting.ts';
import { apiEvent, lambdaContext } from '../../support/factories.ts';

const env = { ORDERS_TABLE: 'orders-table', POWERTOOLS_LOG_LEVEL: 'SILENT' };

/** An HTTP function that answers with the table its environment names. */
const handler = httpHandler('echo-table', (built) => {
  const table = requireEnv(built, 'ORDERS_TABLE');
  return async () => jsonResponse(200, { table });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('httpHandler', () => {
  it('is an env handler the local runtime can build per function', () => {
    expect(isEnvHandler(handler)).toBe(true);
  });

  it('answers with what the core returns, built from the given environment', async () => {
    const response = await handler.withEnv(env)(apiEvent({ method: 'GET' }), lambdaContext());

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ table: 'orders-table' });
  });

  it('fails loudly at start with a ConfigError naming a missing variable or a bad log level', () => {
    expect(() => handler.withEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT' })).toThrow(ConfigError);
    expect(() => handler.withEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT' })).toThrow('ORDERS_TABLE is not set');
    expect(() => handler.withEnv({ ...env, POWERTOOLS_LOG_LEVEL: 'NOISY' })).toThrow(/POWERTOOLS_LOG_LEVEL/);
  });

  it('answers an unexpected error with 500 and the request id, never the internals', async () => {
    const failing = httpHandler('failing', () => async () => {
      throw new Error('secret internal detail');
    });

    const response = await failing.withEnv(env)(apiEvent(), lambdaContext());

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ error: 'internal error', requestId: 'aws-request-1' });
    expect(response.body).not.toContain('secret');
  });

  it('builds from process.env on the first invocation when run as a Lambda entry point', async () => {
    vi.stubEnv('ORDERS_TABLE', 'orders-from-lambda');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');

    const response = await handler(apiEvent({ method: 'GET' }), lambdaContext());

    expect(JSON.parse(response.body)).toEqual({ table: 'orders-from-lambda' });
  });
});
