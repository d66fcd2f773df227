/** The messages between the local runtime and a function host process, over the IPC channel. */

import type { FunctionDefinition } from '../template/read-functions.ts';
import type { FunctionEnvironment } from './function-environment.ts';

/** An error as it crosses the channel. */
export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: string;
  readonly cause?: SerializedError;
}

/** One function the host loads. */
export interface HostedFunction {
  readonly definition: FunctionDefinition;
  readonly env: FunctionEnvironment;
  readonly physicalName: string;
  readonly arn: string;
}

/** Runtime → host. */
export type HostRequest =
  | { readonly type: 'load'; readonly rootDir: string; readonly functions: readonly HostedFunction[] }
  | { readonly type: 'invoke'; readonly id: number; readonly name: string; readonly event: unknown }
  | { readonly type: 'wrap-up' }
  | { readonly type: 'drain' };

/** Host → runtime. */
export type HostReply =
  | {
      readonly type: 'loaded';
      readonly nodeVersion: string;
      readonly functions: readonly {
        readonly name: string;
        readonly plain: boolean;
        readonly initError?: SerializedError;
      }[];
    }
  | { readonly type: 'load-failed'; readonly error: SerializedError }
  | { readonly type: 'result'; readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly type: 'result'; readonly id: number; readonly ok: false; readonly error: SerializedError }
  | { readonly type: 'drained' };

/** An error rebuilt from the channel, with its name, code, stack and cause. */
export function deserializeError(error: SerializedError): Error {
  const rebuilt = new Error(
    error.message,
    error.cause === undefined ? undefined : { cause: deserializeError(error.cause) },
  );
  rebuilt.name = error.name;
  if (error.stack !== undefined) rebuilt.stack = error.stack;
  if (error.code !== undefined) Object.assign(rebuilt, { code: error.code });
  return rebuilt;
}

/** An error as plain data: it crosses the channel and is rebuilt on the other side. */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(typeof code === 'string' ? { code } : {}),
    ...(error.cause === undefined ? {} : { cause: serializeError(error.cause) }),
  };
}
