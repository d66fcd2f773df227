/** Outcome recorded for an effect that committed. */
export const APPLIED = 'APPLIED';

/** Days an inbox row is kept; must outlast every redelivery (see `redeliveryHorizonMs`). */
export const DEFAULT_INBOX_RETENTION_DAYS = 30;
