import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-context.ts';
import {
  HandlerInitError,
  HandlerLoadError,
  LambdaTimeoutError,
  loadLocalFunction,
  localFunction,
} from '../../infra/local/local-function.ts';
import type { FunctionSpec } from '../../infra/topology.ts';

function spec(entry: string, timeoutSeconds = 10): FunctionSpec {
  return { entry, description: 'test', timeoutSeconds, memoryMb: 128, environment: {}, tables: {} };
}

const ECHO = 'test/local/fixtures/echo-handler.ts';

describe('loadLocalFunction', () => {
  it('builds the handler with createHandler(env) and invokes it with a Lambda context', async () => {
    const fn = await loadLocalFunction('getStock', spec(ECHO), { GREETING: 'hello' });
    const invocation = await fn.invoke({});
    expect(invocation).toMatchObject({
      ok: true,
      result: { greeting: 'hello', functionName: 'OutboxExample-getStock' },
    });
    expect(fn.arn).toBe('arn:aws:lambda:us-east-1:123456789012:function:OutboxExample-getStock');
  });

  it('reports a thrown error as an unsuccessful invocation', async () => {
    const fn = await loadLocalFunction('getStock', spec(ECHO), {});
    const invocation = await fn.invoke({ fail: 'boom' });
    expect(invocation.ok).toBe(false);
    expect(!invocation.ok && invocation.error.message).toBe('boom');
  });

  it('fails an invocation that runs past the function timeout, and still waits for it when idling', async () => {
    const fn = await loadLocalFunction('getStock', spec(ECHO, 0.05), {});
    const invocation = await fn.invoke({ wait: 150 });
    expect(!invocation.ok && invocation.error).toBeInstanceOf(LambdaTimeoutError);
    const started = Date.now();
    await fn.idle();
    expect(Date.now() - started).toBeGreaterThan(20);
  });

  it('keeps a createHandler error and fails every invocation with it, as Lambda does after an init error', async () => {
    const fn = await loadLocalFunction('getStock', spec(ECHO), { FAIL_INIT: 'yes' });
    expect(fn.initError).toBeInstanceOf(HandlerInitError);
    const invocation = await fn.invoke({});
    expect(!invocation.ok && invocation.error).toBe(fn.initError);
  });

  it('lets an override wrap the built handler', async () => {
    const fn = await loadLocalFunction(
      'getStock',
      spec(ECHO),
      { GREETING: 'hi' },
      {
        override: (base) => async (event, context) => ({ wrapped: await base(event, context) }),
      },
    );
    expect(await fn.invoke({})).toMatchObject({ ok: true, result: { wrapped: { greeting: 'hi' } } });
  });

  it('refuses a module without createHandler, or one that cannot be imported', async () => {
    await expect(
      loadLocalFunction('getStock', spec('test/local/fixtures/no-contract.ts'), {}),
    ).rejects.toThrow(HandlerLoadError);
    await expect(loadLocalFunction('getStock', spec('test/local/fixtures/missing.ts'), {})).rejects.toThrow(
      /cannot import/,
    );
  });
});

describe('lambdaContext', () => {
  it('counts the remaining time down from the timeout', () => {
    let now = 1_000;
    const context: Context = lambdaContext({
      functionName: 'f',
      memoryMb: 256,
      timeoutSeconds: 3,
      requestId: 'r-1',
      startedAt: 1_000,
      now: () => now,
    });
    expect(context.getRemainingTimeInMillis()).toBe(3_000);
    now = 2_500;
    expect(context.getRemainingTimeInMillis()).toBe(1_500);
    now = 9_000;
    expect(context.getRemainingTimeInMillis()).toBe(0);
    expect(context).toMatchObject({
      awsRequestId: 'r-1',
      memoryLimitInMB: '256',
      functionVersion: '$LATEST',
    });
  });

  it('tells a handler that works until its deadline to stop when the runtime wraps up', async () => {
    // Like the sweeper: keep going while more than 5 s of the 60 s remain.
    const loopUntilDeadline = async (_event: unknown, context: Context) => {
      let rounds = 0;
      while (context.getRemainingTimeInMillis() > 5_000) {
        rounds += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return rounds;
    };
    const fn = localFunction('sweeper', spec('unused.ts', 60), {}, loopUntilDeadline);
    const invocation = fn.invoke({});
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();

    fn.wrapUp();
    const result = await invocation;

    expect(result).toMatchObject({ ok: true });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
