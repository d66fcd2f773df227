/** What a pacer waits with. */
export interface PacerClock {
  readonly clock: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
}

/**
 * Spaces operations at most `ratePerSecond` apart: each call waits for its slot (1 / rate after the previous
 * one), so a bulk operation never floods the queue or the consumer behind it.
 */
export function pacer(ratePerSecond: number, { clock, sleep }: PacerClock): () => Promise<void> {
  const intervalMs = 1_000 / ratePerSecond;
  let nextSlot: number | undefined;
  return async () => {
    const now = clock().getTime();
    const slot = nextSlot === undefined ? now : Math.max(nextSlot, now);
    if (slot > now) await sleep(slot - now);
    nextSlot = slot + intervalMs;
  };
}
