/** One checked invariant: its name, whether it held, and what was found (the first violations when it did not). */
export interface InvariantResult {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** Violations quoted in a failed invariant's detail. */
const QUOTED_VIOLATIONS = 3;

/** The longest lastError quoted in a violation. */
const QUOTED_ERROR_CHARS = 160;

/**
 * The result of checking `name`: it holds when `failures` is empty, and then says `okDetail`; otherwise it counts the
 * violations and quotes the first few.
 */
export function verdict(name: string, failures: readonly string[], okDetail: string): InvariantResult {
  return {
    name,
    ok: failures.length === 0,
    detail:
      failures.length === 0
        ? okDetail
        : `${failures.length} violation(s), e.g. ${failures.slice(0, QUOTED_VIOLATIONS).join('; ')}`,
  };
}

/** An error as a violation quotes it: cut to a readable length, `no error` when there is none. */
export function quoted(error: unknown): string {
  if (typeof error !== 'string') return 'no error';
  return error.length > QUOTED_ERROR_CHARS ? `${error.slice(0, QUOTED_ERROR_CHARS)}…` : error;
}
