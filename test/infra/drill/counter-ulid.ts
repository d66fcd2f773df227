/**
 * Message ids are ULIDs whose random part the drill's seed does not control (createOrder leaves the id to
 * createMessage), and ids minted in one millisecond sort by that random part: scans, queries and so the faults
 * the seed draws land on different messages from run to run. A drill test mocks `ulid` with {@link counterUlid}
 * so that ids come from a counter ({@link counterIds}, reset before each run) and the run follows from its seed
 * alone, on any machine:
 * @example
 * vi.mock('ulid', async (importOriginal) =>
 *   (await import('./counter-ulid.ts')).counterUlid(await importOriginal<typeof import('ulid')>()),
 * );
 */

/** How many ids the mocked `ulid` has issued; set `issued` to 0 before a run. */
export const counterIds = { issued: 0 };

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The `ulid` module with `ulid()` replaced: the real time part, then the counter in 16 base-32 digits. */
export function counterUlid(real: typeof import('ulid')): typeof import('ulid') {
  return {
    ...real,
    ulid: (time: number = Date.now()) => {
      counterIds.issued += 1;
      let random = '';
      for (let rest = counterIds.issued, i = 0; i < 16; i += 1, rest = Math.floor(rest / 32)) {
        random = CROCKFORD.charAt(rest % 32) + random;
      }
      return real.encodeTime(time, 10) + random;
    },
  };
}
