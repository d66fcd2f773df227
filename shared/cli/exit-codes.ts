import { CommanderError } from 'commander';
import { AdminError } from '../admin/admin-errors.ts';
import { ConfigError } from '../errors.ts';

/** The `outbox` CLI's exit codes, which scripts can rely on. */
export const ExitCode = {
  OK: 0,
  /** A failure (an AWS error, a bug), or `recover` left something unresolved. */
  FAILURE: 1,
  /** A bad argument or configuration: an unknown option, a bad value, no such stack, a stack without an outbox. */
  USAGE: 2,
  /** `recover`: the topic's downstream is not healthy, nothing was replayed or moved. */
  UNHEALTHY: 3,
  /**
   * No such message, or it is in a status the action does not start from (or an aggregate still in flight, or a
   * skip with an earlier gap before it).
   */
  NOT_FOUND: 4,
} as const;

/** One of the {@link ExitCode} values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** What `outbox --help` says of the exit codes. */
export const EXIT_CODES_HELP = `
Exit codes:
  0  done (recover: nothing remains unresolved)
  1  failure, or recover left something unresolved
  2  usage or configuration error (a bad argument, no such stack, a stack without an outbox)
  3  recover: the downstream is not healthy; nothing was replayed or moved
  4  not found, or the message's status (skip: a consumer's place in the sequence) does not allow the action
  call: a 2xx or 3xx answer 0; 400 2; 404 or 409 4; any other 4xx or 5xx 1`;

/**
 * The exit code an error ends the CLI with: argument and configuration errors 2, the admin core's refusals by
 * their HTTP status (400 → 2, 404 and 409 → 4), anything else 1.
 */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
  if (error instanceof AdminError) {
    if (error.httpStatus === 400) return ExitCode.USAGE;
    if (error.httpStatus === 404 || error.httpStatus === 409) return ExitCode.NOT_FOUND;
    return ExitCode.FAILURE;
  }
  if (error instanceof ConfigError) return ExitCode.USAGE;
  return ExitCode.FAILURE;
}

/**
 * The exit code of an API's answer to `outbox call`, by the same rules as the admin core's refusals: a 2xx or
 * 3xx answer 0, 400 (a bad request) 2, 404 and 409 4, any other 4xx or 5xx 1.
 */
export function exitCodeOfHttpStatus(status: number): ExitCode {
  if (status < 400) return ExitCode.OK;
  if (status === 400) return ExitCode.USAGE;
  if (status === 404 || status === 409) return ExitCode.NOT_FOUND;
  return ExitCode.FAILURE;
}
