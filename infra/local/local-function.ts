/**
 * A topology function running in this process: its handler module imported from `entry`, built with
 * `createHandler(env)` from its resolved environment (no process.env involved), and invoked with a Lambda
 * context and the function's timeout.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import type { FunctionKey, FunctionSpec } from '../topology.ts';
import type { FunctionEnvironment } from './environment.ts';
import { localFunctionName } from './environment.ts';
import { lambdaContext } from './lambda-context.ts';

/** A handler as the local runtime calls it. */
export type LocalHandler = (event: unknown, context: Context) => Promise<unknown>;

/**
 * Wraps or replaces a function's handler, e.g. to inject a fault in a test. `env` is the function's
 * resolved environment, so a replacement can build its own dependencies (say, a store whose mark fails).
 * @example
 * // Fails every batch after the real relay ran: the stream retries it, the consumer must dedupe.
 * const crashAfterRelay: HandlerOverride = (base) => async (event, context) => {
 *   await base(event, context);
 *   throw new Error('crash after relaying');
 * };
 */
export type HandlerOverride = (base: LocalHandler, env: FunctionEnvironment) => LocalHandler;

/** The handler module contract every topology entry fulfils. */
export interface HandlerModule {
  createHandler(
    env: Readonly<Record<string, string | undefined>>,
  ): (event: never, context: never) => Promise<unknown>;
}

/** How one invocation ended. */
export type Invocation =
  | { readonly ok: true; readonly requestId: string; readonly result: unknown }
  | { readonly ok: false; readonly requestId: string; readonly error: Error };

/** A function that runs in-process. */
export interface LocalFunction {
  readonly key: FunctionKey;
  /** Local name (the Lambda context's `functionName`). */
  readonly name: string;
  readonly arn: string;
  readonly spec: FunctionSpec;
  readonly env: FunctionEnvironment;
  /** The error `createHandler` threw, if it did; every invocation then fails with it, as on Lambda. */
  readonly initError: Error | undefined;
  /** Invokes the handler; never throws (a thrown error or timeout is an unsuccessful {@link Invocation}). */
  invoke(event: unknown): Promise<Invocation>;
  /** Resolves when no invocation is in flight (including ones that outlived their timeout). */
  idle(): Promise<void>;
  /**
   * The runtime is stopping: from now on every invocation's `getRemainingTimeInMillis()` reads 0, so a
   * handler that works until its deadline (the sweeper) finishes its current step and returns.
   */
  wrapUp(): void;
}

/** A handler module could not be imported or does not export `createHandler`. */
export class HandlerLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** `createHandler(env)` threw; the function cannot run until its code or configuration is fixed. */
export class HandlerInitError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The handler ran past the function's timeout (Lambda would stop it and report the same). */
export class LambdaTimeoutError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Options of {@link loadLocalFunction}. */
export interface LoadFunctionOptions {
  /** Directory `entry` is relative to. @default the repository root */
  readonly rootDir?: string;
  readonly override?: HandlerOverride;
  /** Clock for the Lambda context. @default Date.now */
  readonly now?: () => number;
}

const REPOSITORY_ROOT = resolve(import.meta.dirname, '../..');

/**
 * Imports `spec.entry`, builds its handler from `env` and returns the function ready to invoke.
 * Throws {@link HandlerLoadError} when the module breaks the contract; a `createHandler` that throws is kept
 * as {@link LocalFunction.initError} so one unfinished function does not stop the others.
 * @example
 * const createOrder = await loadLocalFunction('createOrder', topology.functions.createOrder, env);
 * const { result } = await createOrder.invoke(proxyEvent);
 */
export async function loadLocalFunction(
  key: FunctionKey,
  spec: FunctionSpec,
  env: FunctionEnvironment,
  options: LoadFunctionOptions = {},
): Promise<LocalFunction> {
  const modulePath = resolve(options.rootDir ?? REPOSITORY_ROOT, spec.entry);
  let module: Partial<HandlerModule>;
  try {
    module = (await import(pathToFileURL(modulePath).href)) as Partial<HandlerModule>;
  } catch (cause) {
    throw new HandlerLoadError(`${key}: cannot import ${spec.entry}`, { cause });
  }
  if (typeof module.createHandler !== 'function') {
    throw new HandlerLoadError(`${key}: ${spec.entry} does not export createHandler(env)`);
  }
  let initError: Error | undefined;
  let base: LocalHandler;
  try {
    base = module.createHandler(env) as LocalHandler;
  } catch (cause) {
    initError = new HandlerInitError(`${key}: createHandler failed: ${errorMessage(cause)}`, { cause });
    const failure = initError;
    base = async () => {
      throw failure;
    };
  }
  return localFunction(
    key,
    spec,
    env,
    options.override ? options.override(base, env) : base,
    initError,
    options.now,
  );
}

/** A {@link LocalFunction} around an already built handler (what {@link loadLocalFunction} returns). */
export function localFunction(
  key: FunctionKey,
  spec: FunctionSpec,
  env: FunctionEnvironment,
  handler: LocalHandler,
  initError?: Error,
  now: () => number = Date.now,
): LocalFunction {
  const name = localFunctionName(key);
  const inFlight = new Set<Promise<unknown>>();
  let stopping = false;
  const contextClock = () => (stopping ? Number.POSITIVE_INFINITY : now());
  const timeoutMs = spec.timeoutSeconds * 1000;
  const probe = lambdaContext({
    functionName: name,
    memoryMb: spec.memoryMb,
    timeoutSeconds: 0,
    requestId: '',
    startedAt: 0,
  });
  return {
    key,
    name,
    arn: probe.invokedFunctionArn,
    spec,
    env,
    initError,
    async invoke(event) {
      const requestId = randomUUID();
      const context = lambdaContext({
        functionName: name,
        memoryMb: spec.memoryMb,
        timeoutSeconds: spec.timeoutSeconds,
        requestId,
        startedAt: now(),
        now: contextClock,
      });
      const running = Promise.resolve().then(() => handler(event, context));
      inFlight.add(running);
      void running.then(
        () => inFlight.delete(running),
        () => inFlight.delete(running),
      );
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new LambdaTimeoutError(`${name}: task timed out after ${spec.timeoutSeconds} seconds`)),
          timeoutMs,
        );
      });
      try {
        return { ok: true, requestId, result: await Promise.race([running, timedOut]) };
      } catch (error) {
        return { ok: false, requestId, error: error instanceof Error ? error : new Error(String(error)) };
      } finally {
        clearTimeout(timer);
      }
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    wrapUp() {
      stopping = true;
    },
  };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
