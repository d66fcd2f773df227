/**
 * Until the admin side and the construct import the cursor and parked-row keys from `shared/aws/inbox-table.ts`,
 * they stay importable here under their names; the rows' layout itself lives only there.
 */
export { cursorKeyOf, PARKED_KEY_PREFIX, parkedKeyOf } from '../aws/inbox-table.ts';
export { isOrdered, type OrderedEnvelope } from './ordered-envelope.ts';
