/** The local runtime's one error class: `code` says what failed, `cause` carries the underlying error. */

/** Machine-readable codes of {@link LocalRuntimeError}. */
export const LocalRuntimeErrorCode = {
  /** An option or flag of the runtime or the CLI is malformed. */
  INVALID_OPTION: 'INVALID_OPTION',
  /** The CDK app could not be synthesized, or its cloud assembly has no (single) stack to run. */
  SYNTH_FAILED: 'SYNTH_FAILED',
  /** The template is not one the runtime can read or deploy (a construct it cannot emulate, say). */
  UNSUPPORTED_TEMPLATE: 'UNSUPPORTED_TEMPLATE',
  /** A template value (`Ref`, `Fn::GetAtt`, `Fn::Sub`…) cannot be resolved against the deployed stack. */
  UNRESOLVABLE_VALUE: 'UNRESOLVABLE_VALUE',
  /** The chosen backend cannot be started or reached (moto missing, AWS_ENDPOINT_URL not answering). */
  BACKEND_UNAVAILABLE: 'BACKEND_UNAVAILABLE',
  /** The stack could not be created or updated on the backend. */
  DEPLOY_FAILED: 'DEPLOY_FAILED',
  /** A handler module cannot be imported or does not export the handler the template names. */
  HANDLER_LOAD_FAILED: 'HANDLER_LOAD_FAILED',
  /** `withEnv(env)` threw: the function cannot run until its code or configuration is fixed. */
  HANDLER_INIT_FAILED: 'HANDLER_INIT_FAILED',
  /** The handler ran past the function's timeout (Lambda would stop it and report the same). */
  HANDLER_TIMEOUT: 'HANDLER_TIMEOUT',
  /** Two plain handlers need different values of one process-wide environment variable. */
  ENVIRONMENT_CONFLICT: 'ENVIRONMENT_CONFLICT',
  /** A function name given to the runtime (an override, an invocation) is not a function it runs. */
  UNKNOWN_FUNCTION: 'UNKNOWN_FUNCTION',
  /** A function name without its stack matches functions of several stacks: qualify it (`<stack>/<path>`). */
  AMBIGUOUS_FUNCTION: 'AMBIGUOUS_FUNCTION',
  /** Two stacks of the app claim the same thing the runtime serves once: a route, an output name. */
  STACK_CONFLICT: 'STACK_CONFLICT',
  /** An event source cannot be polled (a table without a stream, a destination that is not a queue). */
  EVENT_SOURCE_FAILED: 'EVENT_SOURCE_FAILED',
  /** The local REST API could not listen (typically: the port is taken). */
  API_START_FAILED: 'API_START_FAILED',
  /** `drain()` did not settle within its time. */
  DRAIN_TIMEOUT: 'DRAIN_TIMEOUT',
  /** The `npm start` plug-in cannot be loaded or does not have the plug-in's shape. */
  PLUGIN_FAILED: 'PLUGIN_FAILED',
  /** No Node.js of the major a function's `Runtime` names is installed. */
  RUNTIME_UNAVAILABLE: 'RUNTIME_UNAVAILABLE',
  /** The process a function ran in ended during the invocation. */
  FUNCTION_HOST_EXITED: 'FUNCTION_HOST_EXITED',
  /** The data folder (`--data-dir`) is not the embedded backend's, or is damaged. */
  DATA_DIR_INVALID: 'DATA_DIR_INVALID',
} as const;

/** One of the {@link LocalRuntimeErrorCode} values. */
export type LocalRuntimeErrorCode = (typeof LocalRuntimeErrorCode)[keyof typeof LocalRuntimeErrorCode];

/**
 * Every failure the local runtime reports itself throws this, with a `code` to tell them apart.
 * @example
 * throw new LocalRuntimeError('DEPLOY_FAILED', `stack ${name} ended in ROLLBACK_COMPLETE`, { cause });
 */
export class LocalRuntimeError extends Error {
  /** What went wrong, for programs and tests. */
  readonly code: LocalRuntimeErrorCode;

  constructor(code: LocalRuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Whether `error` is a {@link LocalRuntimeError} with `code`. */
export function isLocalRuntimeError(
  error: unknown,
  code?: LocalRuntimeErrorCode,
): error is LocalRuntimeError {
  return error instanceof LocalRuntimeError && (code === undefined || error.code === code);
}
