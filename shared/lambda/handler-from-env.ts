import type { Context } from 'aws-lambda';
import type { Env } from '../settings/setting.ts';

/** A Lambda handler. */
export type LambdaHandler<TEvent, TResult> = (event: TEvent, context: Context) => Promise<TResult>;

/**
 * A Lambda handler built from its environment: as a Lambda entry point it builds itself from `process.env`
 * on the first invocation (never at import time); `withEnv(env)` builds an independent copy from another
 * environment, which is how the local runtime runs several functions in one process and how tests build one.
 */
export interface EnvHandler<TEvent, TResult> extends LambdaHandler<TEvent, TResult> {
  /** The same handler, built from `env` instead of `process.env`. */
  withEnv(env: Env): LambdaHandler<TEvent, TResult>;
}

/**
 * Turns a builder into a Lambda entry point that reads its environment once, at the first invocation, so
 * that a bad setting fails the function at start with a message naming the variable.
 * @example
 * export const handler = handlerFromEnv((env) => {
 *   const table = requireEnv(env, 'ORDERS_TABLE');
 *   return async (event) => ({ statusCode: 200, body: table });
 * });
 */
export function handlerFromEnv<TEvent, TResult>(
  build: (env: Env) => LambdaHandler<TEvent, TResult>,
): EnvHandler<TEvent, TResult> {
  let built: LambdaHandler<TEvent, TResult> | undefined;
  const handler = (event: TEvent, context: Context): Promise<TResult> => {
    built ??= build(process.env);
    return built(event, context);
  };
  return Object.assign(handler, { withEnv: build });
}

/** Whether `value` is a handler made by {@link handlerFromEnv} (the local runtime asks). */
export function isEnvHandler(value: unknown): value is EnvHandler<unknown, unknown> {
  return typeof value === 'function' && typeof (value as { withEnv?: unknown }).withEnv === 'function';
}
