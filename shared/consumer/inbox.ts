/**
 * Until the admin side imports the inbox table's keys from `shared/aws/inbox-table.ts`, they stay importable here
 * under their names; the table's layout itself lives only there.
 */
export { INBOX_KEYS } from '../aws/inbox-table.ts';
export { APPLIED, DEFAULT_INBOX_RETENTION_DAYS } from './inbox-record.ts';
