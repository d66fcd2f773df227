import { InvalidAdminRequestError, ReasonRequiredError } from './admin-errors.ts';

/** The longest reason kept: it is stored in the audit row and in the message's history. */
const MAX_REASON_CHARACTERS = 500;

/** The operator's reason, trimmed; a {@link ReasonRequiredError} when there is none. */
export function requireReason(action: string, reason: string | undefined): string {
  const trimmed = typeof reason === 'string' ? reason.trim() : '';
  if (trimmed === '') throw new ReasonRequiredError(action);
  if (trimmed.length > MAX_REASON_CHARACTERS) {
    throw new InvalidAdminRequestError('reason', `must be at most ${MAX_REASON_CHARACTERS} characters`);
  }
  return trimmed;
}

/** The operator, who every audited action names. */
export function requireActor(actor: string | undefined): string {
  const trimmed = typeof actor === 'string' ? actor.trim() : '';
  if (trimmed === '') throw new InvalidAdminRequestError('actor', 'is required: who is acting');
  return trimmed;
}

/** A non-empty text field. */
export function requireText(field: string, value: string | undefined): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new InvalidAdminRequestError(field, 'is required');
  return value.trim();
}

/** An instant given as text, as the ISO-8601 form stored items use (so that it compares as text). */
export function instantOf(field: string, value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time))
    throw new InvalidAdminRequestError(field, `must be an ISO-8601 instant, got ${value}`);
  return new Date(time).toISOString();
}

/** The most operations a paced run may make per second. */
const MAX_RATE_PER_SECOND = 1_000;

/** A rate of paced work: a positive number of operations per second. */
export function rateOf(ratePerSecond: number): number {
  if (!Number.isFinite(ratePerSecond) || ratePerSecond <= 0 || ratePerSecond > MAX_RATE_PER_SECOND) {
    throw new InvalidAdminRequestError(
      'ratePerSecond',
      `must be a number above 0 and at most ${MAX_RATE_PER_SECOND}, got ${ratePerSecond}`,
    );
  }
  return ratePerSecond;
}

/** A whole number within `[min, max]`, or `fallback` when absent. */
export function integerWithin(
  field: string,
  value: number | undefined,
  bounds: { readonly min: number; readonly max: number; readonly fallback: number },
): number {
  if (value === undefined) return bounds.fallback;
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new InvalidAdminRequestError(
      field,
      `must be an integer from ${bounds.min} to ${bounds.max}, got ${value}`,
    );
  }
  return value;
}
