/**
 * A template function running in this process: its handler module imported from the template's entry
 * metadata, the export the `Handler` property names, built from the function's own resolved environment
 * (`withEnv`) or — for a plain handler — run with its variables in process.env, and invoked with a Lambda
 * context and the function's timeout.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { FunctionDefinition } from '../template/read-functions.ts';
import { type FunctionEnvironment, PER_FUNCTION_VARIABLES } from './function-environment.ts';
import { lambdaContext } from './lambda-context.ts';
import type { ProcessEnvironment } from './process-environment.ts';

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

/** How one invocation ended. */
export type Invocation =
  | { readonly ok: true; readonly requestId: string; readonly result: unknown }
  | { readonly ok: false; readonly requestId: string; readonly error: Error };

/** A function that runs in-process. */
export interface LocalFunction {
  /** Local name (the construct path, `Outbox/Relay`). */
  readonly name: string;
  /** Its name on the backend: the Lambda context's `functionName`. */
  readonly physicalName: string;
  readonly arn: string;
  readonly definition: FunctionDefinition;
  readonly env: FunctionEnvironment;
  /** Whether the handler reads process.env (a plain handler) rather than being built with `withEnv`. */
  readonly plain: boolean;
  /** The error `withEnv` threw, if it did; every invocation then fails with it, as on Lambda after an init error. */
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

/** Options of {@link loadLocalFunction}. */
export interface LoadFunctionOptions {
  readonly env: FunctionEnvironment;
  /** The function's name on the backend. @default the local name with `/` as `-` */
  readonly physicalName?: string;
  /** The function's ARN on the backend. @default built from the physical name, region and account */
  readonly arn?: string;
  /** Directory the entry is relative to. @default process.cwd() */
  readonly rootDir?: string;
  readonly override?: HandlerOverride;
  /** Where a plain handler's variables go. Required to run plain handlers. */
  readonly processEnv?: ProcessEnvironment;
  /** Clock for the Lambda context. @default Date.now */
  readonly now?: () => number;
}

/**
 * Imports the definition's entry and returns the function ready to invoke. Throws `HANDLER_LOAD_FAILED` when the
 * module cannot be imported or lacks the handler export, and `ENVIRONMENT_CONFLICT` for a plain handler whose
 * variables clash with another's; a `withEnv` that throws is kept as {@link LocalFunction.initError} so one
 * unfinished function does not stop the others.
 * @example
 * const writer = await loadLocalFunction(app.functions[0], { env, processEnv });
 * const { result } = await writer.invoke(proxyEvent);
 */
export async function loadLocalFunction(
  definition: FunctionDefinition,
  options: LoadFunctionOptions,
): Promise<LocalFunction> {
  const { name, entry, handlerExport } = definition;
  const modulePath = resolve(options.rootDir ?? process.cwd(), entry);
  const shared = Object.fromEntries(
    Object.entries(options.env).filter(([variable]) => !PER_FUNCTION_VARIABLES.has(variable)),
  );
  // Set before the import: a plain handler module may read its settings at import time.
  const offer = options.processEnv?.offer(name, shared);
  let exported: unknown;
  try {
    const module = (await import(pathToFileURL(modulePath).href)) as Record<string, unknown>;
    exported = module[handlerExport];
  } catch (cause) {
    offer?.release();
    throw new LocalRuntimeError('HANDLER_LOAD_FAILED', `${name}: cannot import ${entry}`, { cause });
  }
  if (typeof exported !== 'function') {
    offer?.release();
    throw new LocalRuntimeError(
      'HANDLER_LOAD_FAILED',
      `${name}: ${entry} does not export a function named ${handlerExport} (the template's Handler)`,
    );
  }
  // Loaded here rather than at the top: the /lambda entry brings Powertools, whose X-Ray SDK installs an
  // async hook in every process that loads it, and this module is also loaded by the runtime's own process
  // (pollers, embedded backend). A handler module built with handlerFromEnv has loaded the entry already.
  const { isEnvHandler } = await import('../../../../shared/lambda/index.ts');
  const built = isEnvHandler(exported) ? buildWithEnv(exported, options.env, name) : undefined;
  if (built === undefined) {
    if (offer === undefined) {
      throw new LocalRuntimeError(
        'HANDLER_LOAD_FAILED',
        `${name}: a plain handler needs the process environment`,
      );
    }
    offer.keep();
  } else {
    offer?.release();
  }
  const base = built?.handler ?? (exported as LocalHandler);
  return localFunction({
    definition,
    env: options.env,
    handler: options.override ? options.override(base, options.env) : base,
    physicalName: options.physicalName,
    arn: options.arn,
    plain: built === undefined,
    initError: built?.initError,
    now: options.now,
  });
}

function buildWithEnv(
  exported: { withEnv(env: FunctionEnvironment): unknown },
  env: FunctionEnvironment,
  name: string,
): { handler: LocalHandler; initError: Error | undefined } {
  try {
    return { handler: exported.withEnv(env) as LocalHandler, initError: undefined };
  } catch (cause) {
    const initError = new LocalRuntimeError(
      'HANDLER_INIT_FAILED',
      `${name}: building the handler from its environment failed: ${errorMessage(cause)}`,
      { cause },
    );
    return {
      initError,
      handler: async () => {
        throw initError;
      },
    };
  }
}

/** What a {@link LocalFunction} is made of once its handler is built. */
export interface LocalFunctionParts {
  readonly definition: FunctionDefinition;
  readonly env: FunctionEnvironment;
  readonly handler: LocalHandler;
  readonly physicalName?: string;
  readonly arn?: string;
  readonly plain?: boolean;
  readonly initError?: Error;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A {@link LocalFunction} around an already built handler (what {@link loadLocalFunction} returns). */
export function localFunction(parts: LocalFunctionParts): LocalFunction {
  const { definition, handler } = parts;
  const now = parts.now ?? Date.now;
  const physicalName = parts.physicalName ?? definition.name.replaceAll('/', '-');
  const region = parts.env.AWS_REGION;
  const inFlight = new Set<Promise<unknown>>();
  let stopping = false;
  const contextClock = () => (stopping ? Number.POSITIVE_INFINITY : now());
  const contextFor = (requestId: string, startedAt: number): Context =>
    lambdaContext({
      functionName: physicalName,
      memoryMb: definition.memoryMb,
      timeoutSeconds: definition.timeoutSeconds,
      requestId,
      startedAt,
      now: contextClock,
      ...(region === undefined ? {} : { region }),
      ...(parts.arn === undefined ? {} : { invokedFunctionArn: parts.arn }),
    });
  return {
    name: definition.name,
    physicalName,
    arn: contextFor('', 0).invokedFunctionArn,
    definition,
    env: parts.env,
    plain: parts.plain ?? false,
    initError: parts.initError,
    async invoke(event) {
      const requestId = randomUUID();
      const context = contextFor(requestId, now());
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
            reject(
              new LocalRuntimeError(
                'HANDLER_TIMEOUT',
                `${definition.name}: task timed out after ${definition.timeoutSeconds} seconds`,
              ),
            ),
          definition.timeoutSeconds * 1000,
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
