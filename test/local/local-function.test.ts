import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../infra/dev/local/host/lambda-context.ts';
import { loadLocalFunction, localFunction } from '../../infra/dev/local/host/local-function.ts';
import { processEnvironment } from '../../infra/dev/local/host/process-environment.ts';
import { LocalRuntimeError } from '../../infra/dev/local/local-runtime-error.ts';
import type { FunctionDefinition } from '../../infra/dev/local/template/read-functions.ts';

function definition(entry: string, overrides: Partial<FunctionDefinition> = {}): FunctionDefinition {
  return {
    name: 'Orders/GetStock',
    logicalId: 'OrdersGetStock1234',
    entry,
    handlerExport: 'handler',
    timeoutSeconds: 10,
    memoryMb: 128,
    environment: {},
    ...overrides,
  };
}

const ECHO = 'test/local/fixtures/echo-handler.ts';
const PLAIN = 'test/local/fixtures/plain-handler.ts';
const shared = processEnvironment();

afterEach(() => {
  shared.restore();
});

describe('loadLocalFunction', () => {
  it('builds a withEnv handler from the function’s own environment, never from process.env', async () => {
    const fn = await loadLocalFunction(definition(ECHO), {
      env: { GREETING: 'hello' },
      physicalName: 'NotesApp-local-GetStock-X1',
      arn: 'arn:aws:lambda:eu-west-1:000000000000:function:NotesApp-local-GetStock-X1',
      processEnv: shared,
    });
    expect(fn.plain).toBe(false);
    expect(await fn.invoke({})).toMatchObject({
      ok: true,
      result: {
        greeting: 'hello',
        fromProcess: undefined,
        functionName: 'NotesApp-local-GetStock-X1',
        arn: 'arn:aws:lambda:eu-west-1:000000000000:function:NotesApp-local-GetStock-X1',
      },
    });
    expect(process.env.GREETING).toBeUndefined();
  });

  it('reports a thrown error as an unsuccessful invocation', async () => {
    const fn = await loadLocalFunction(definition(ECHO), { env: {}, processEnv: shared });
    const invocation = await fn.invoke({ fail: 'boom' });
    expect(invocation.ok).toBe(false);
    expect(!invocation.ok && invocation.error.message).toBe('boom');
  });

  it('fails an invocation that runs past the function timeout, and still waits for it when idling', async () => {
    const fn = await loadLocalFunction(definition(ECHO, { timeoutSeconds: 0.05 }), {
      env: {},
      processEnv: shared,
    });
    const invoked = Date.now();
    const invocation = await fn.invoke({ wait: 150 });
    expect(!invocation.ok && invocation.error).toMatchObject({ code: 'HANDLER_TIMEOUT' });
    await fn.idle();
    // idle() resolved only once the handler's 150 ms were over, however late the timeout was reported.
    expect(Date.now() - invoked).toBeGreaterThanOrEqual(140);
  });

  it('keeps a withEnv error and fails every invocation with it, as Lambda does after an init error', async () => {
    const fn = await loadLocalFunction(definition(ECHO), { env: { FAIL_INIT: 'yes' }, processEnv: shared });
    expect(fn.initError).toMatchObject({ code: 'HANDLER_INIT_FAILED', message: /FAIL_INIT is set/ });
    const invocation = await fn.invoke({});
    expect(!invocation.ok && invocation.error).toBe(fn.initError);
  });

  it('lets an override wrap the built handler, with the function’s environment at hand', async () => {
    const fn = await loadLocalFunction(definition(ECHO), {
      env: { GREETING: 'hi' },
      processEnv: shared,
      override: (base, env) => async (event, context) => ({
        wrapped: await base(event, context),
        seen: env.GREETING,
      }),
    });
    expect(await fn.invoke({})).toMatchObject({
      ok: true,
      result: { wrapped: { greeting: 'hi' }, seen: 'hi' },
    });
  });

  it('refuses a module without the export the Handler names, or one that cannot be imported', async () => {
    await expect(
      loadLocalFunction(definition('test/local/fixtures/no-contract.ts'), { env: {}, processEnv: shared }),
    ).rejects.toMatchObject({
      code: 'HANDLER_LOAD_FAILED',
      message: /does not export a function named handler/,
    });
    await expect(
      loadLocalFunction(definition('test/local/fixtures/missing.ts'), { env: {}, processEnv: shared }),
    ).rejects.toThrow(/cannot import/);
  });

  it('runs a plain handler with its variables in process.env from before its import, and puts them back', async () => {
    const fn = await loadLocalFunction(definition(PLAIN, { handlerExport: 'main' }), {
      env: { PLAIN_GREETING: 'plain hello', AWS_LAMBDA_FUNCTION_NAME: 'Plain-1' },
      processEnv: shared,
    });
    expect(fn.plain).toBe(true);
    expect(await fn.invoke({})).toMatchObject({
      ok: true,
      // The per-function Lambda variables stay out of process.env, which all functions share.
      result: { atImport: 'plain hello', atCall: 'plain hello', functionName: undefined },
    });
    shared.restore();
    expect(process.env.PLAIN_GREETING).toBeUndefined();
  });

  it('refuses two plain handlers that need different values of one variable', async () => {
    await loadLocalFunction(definition(PLAIN, { name: 'First', handlerExport: 'main' }), {
      env: { PLAIN_GREETING: 'one' },
      processEnv: shared,
    });
    const second = loadLocalFunction(
      definition('test/local/fixtures/other-plain-handler.ts', { name: 'Second' }),
      {
        env: { PLAIN_GREETING: 'two' },
        processEnv: shared,
      },
    );
    await expect(second).rejects.toBeInstanceOf(LocalRuntimeError);
    await expect(second).rejects.toMatchObject({
      code: 'ENVIRONMENT_CONFLICT',
      message: /Second needs PLAIN_GREETING/,
    });
    expect(process.env.PLAIN_GREETING).toBe('one');
  });

  it('lets a withEnv handler and a plain one differ: only plain handlers share process.env', async () => {
    await loadLocalFunction(definition(PLAIN, { name: 'Plain', handlerExport: 'main' }), {
      env: { PLAIN_GREETING: 'one' },
      processEnv: shared,
    });
    const built = await loadLocalFunction(definition(ECHO, { name: 'Built' }), {
      env: { PLAIN_GREETING: 'two' },
      processEnv: shared,
    });
    expect(built.plain).toBe(false);
    expect(process.env.PLAIN_GREETING).toBe('one');
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
    const fn = localFunction({
      definition: definition('unused.ts', { timeoutSeconds: 60 }),
      env: {},
      handler: loopUntilDeadline,
    });
    const invocation = fn.invoke({});
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();

    fn.wrapUp();
    const result = await invocation;

    expect(result).toMatchObject({ ok: true });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
