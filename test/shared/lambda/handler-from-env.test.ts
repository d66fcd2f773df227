import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { createConsumerHandler } from '../../../shared/lambda/consumer-handler.ts';
import { handlerFromEnv, isEnvHandler, type LambdaHandler } from '../../../shared/lambda/handler-from-env.ts';
import { createRelayHandler } from '../../../shared/lambda/relay-handler.ts';
import { createSweeperHandler } from '../../../shared/lambda/sweeper-handler.ts';
import { type Env, requireEnv } from '../../../shared/settings/setting.ts';
import { lambdaContext } from '../../support/factories.ts';

/** A builder that answers each event with the table its environment names, counting its builds. */
function tableEcho() {
  return vi.fn((env: Env): LambdaHandler<string, string> => {
    const table = requireEnv(env, 'ORDERS_TABLE');
    return async (event) => `${event} → ${table}`;
  });
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('handlerFromEnv', () => {
  it('builds nothing at creation: a module that exports it can be imported without its environment', () => {
    const build = tableEcho();

    handlerFromEnv(build);

    expect(build).not.toHaveBeenCalled();
  });

  it('builds itself from process.env on the first invocation, then reuses what it built', async () => {
    vi.stubEnv('ORDERS_TABLE', 'orders-from-process-env');
    const build = tableEcho();
    const handler = handlerFromEnv(build);

    await expect(handler('a', lambdaContext())).resolves.toBe('a → orders-from-process-env');
    vi.stubEnv('ORDERS_TABLE', 'changed-later');
    await expect(handler('b', lambdaContext())).resolves.toBe('b → orders-from-process-env');

    expect(build).toHaveBeenCalledTimes(1);
    expect(build).toHaveBeenCalledWith(process.env);
  });

  it('fails the invocation with the ConfigError when process.env is incomplete, and tries again on the next one', async () => {
    vi.stubEnv('ORDERS_TABLE', undefined);
    const handler = handlerFromEnv(tableEcho());

    expect(() => handler('a', lambdaContext())).toThrow(ConfigError);
    expect(() => handler('a', lambdaContext())).toThrow('ORDERS_TABLE is not set');

    vi.stubEnv('ORDERS_TABLE', 'orders');
    await expect(handler('b', lambdaContext())).resolves.toBe('b → orders');
  });

  it('passes the Lambda context through to what it built', async () => {
    const seen: Context[] = [];
    const handler = handlerFromEnv(() => async (_event: unknown, context: Context) => {
      seen.push(context);
      return context.awsRequestId;
    });
    const context = lambdaContext();

    await expect(handler.withEnv({})(undefined, context)).resolves.toBe('aws-request-1');
    expect(seen).toEqual([context]);
  });
});

describe('withEnv', () => {
  it('builds a copy from the given environment, never from process.env', async () => {
    vi.stubEnv('ORDERS_TABLE', 'orders-from-process-env');
    const handler = handlerFromEnv(tableEcho());

    await expect(handler.withEnv({ ORDERS_TABLE: 'orders-a' })('x', lambdaContext())).resolves.toBe(
      'x → orders-a',
    );
  });

  it('builds independent copies: each has its own environment, and neither touches the process.env one', async () => {
    vi.stubEnv('ORDERS_TABLE', 'orders-from-process-env');
    const build = tableEcho();
    const handler = handlerFromEnv(build);

    const a = handler.withEnv({ ORDERS_TABLE: 'orders-a' });
    const b = handler.withEnv({ ORDERS_TABLE: 'orders-b' });

    await expect(a('1', lambdaContext())).resolves.toBe('1 → orders-a');
    await expect(b('2', lambdaContext())).resolves.toBe('2 → orders-b');
    await expect(handler('3', lambdaContext())).resolves.toBe('3 → orders-from-process-env');
    await expect(a('4', lambdaContext())).resolves.toBe('4 → orders-a');
    expect(build).toHaveBeenCalledTimes(3);
  });

  it('builds at once and throws the ConfigError naming the variable (the function’s init error)', () => {
    const handler = handlerFromEnv(tableEcho());

    expect(() => handler.withEnv({})).toThrow(ConfigError);
    expect(() => handler.withEnv({ ORDERS_TABLE: '' })).toThrow('ORDERS_TABLE is not set');
  });
});

describe('isEnvHandler', () => {
  it('recognises a handler made by handlerFromEnv and the library’s factories', () => {
    expect(isEnvHandler(handlerFromEnv(tableEcho()))).toBe(true);
    expect(isEnvHandler(createRelayHandler())).toBe(true);
    expect(isEnvHandler(createSweeperHandler())).toBe(true);
    expect(isEnvHandler(createConsumerHandler({ plan: () => () => ({ reject: 'NONE' }) }))).toBe(true);
  });

  it.each([
    ['a plain handler', async () => 'ok'],
    ['a function with a withEnv that is not a function', Object.assign(async () => 'ok', { withEnv: 'x' })],
    ['an object with a withEnv method', { withEnv: () => async () => 'ok' }],
    ['undefined', undefined],
    ['null', null],
    ['a string', 'handler'],
  ])('is false for %s', (_case, value) => {
    expect(isEnvHandler(value)).toBe(false);
  });
});
