/**
 * The audit view: who did what, when and why. One subject's trail (a message, a dead-letter queue, an aggregate)
 * is a Query of its partition; across subjects the console reads the audit tables themselves (the producer's and
 * each reachable subscriber stack's, which records its redrives) up to a bound, and shows the newest rows first.
 * The redrive journal's rows (one per dead letter moved) are left out: each redrive's own row counts them.
 */
import { type AuditRow, auditSubject } from '../../admin/audit-trail.ts';
import { describeError } from '../../errors.ts';
import type { ConsoleContext } from './console-context.ts';

/** An audit row and the stack whose audit table holds it. */
export type AuditEntry = AuditRow & { readonly stackName: string };

/** What the audit view shows. */
export interface AuditView {
  readonly entries: readonly AuditEntry[];
  /** False when a table held more rows than the view reads: older actions may be missing (filter by subject). */
  readonly complete: boolean;
  /** Audit tables that could not be read, and why. */
  readonly problems: readonly string[];
}

/** Rows read per page, and in all per table. */
const PAGE_ROWS = 500;
const MAX_ROWS_PER_TABLE = 10_000;
/** Entries shown across subjects. */
const SHOWN = 200;

const JOURNAL_PREFIX = auditSubject.redriveJournal('');

/**
 * The newest audit rows of every audit table the console reaches, or — with `subject` — that subject's whole trail
 * in the producer's audit table (and, for a dead-letter queue, in the subscriber stacks' too), newest first.
 * @example
 * const { entries } = await readAudit(context, { subject: 'message:01J…' });
 */
export async function readAudit(
  context: ConsoleContext,
  filter: { readonly subject?: string; readonly actor?: string } = {},
): Promise<AuditView> {
  const problems: string[] = [];
  let complete = true;
  let entries: AuditEntry[];
  if (filter.subject !== undefined && filter.subject !== '') {
    const subject = filter.subject;
    entries = (await context.deps.audit.trail(subject)).map((row) => ({
      ...row,
      stackName: context.stackName,
    }));
  } else {
    const tables = await Promise.all(
      context.audit.map(async (source) => {
        const rows: AuditEntry[] = [];
        let startKey: Readonly<Record<string, unknown>> | undefined;
        let read = 0;
        try {
          do {
            const page = await source.scan({
              limit: PAGE_ROWS,
              ...(startKey === undefined ? {} : { startKey }),
            });
            read += page.rows.length;
            for (const row of page.rows) {
              if (!row.subject.startsWith(JOURNAL_PREFIX)) rows.push({ ...row, stackName: source.stackName });
            }
            startKey = page.nextKey;
          } while (startKey !== undefined && read < MAX_ROWS_PER_TABLE);
        } catch (error) {
          problems.push(`the audit table of ${source.stackName} cannot be read: ${describeError(error)}`);
        }
        if (startKey !== undefined) complete = false;
        return rows;
      }),
    );
    entries = tables.flat();
  }
  const actor = filter.actor?.trim();
  const shown = entries
    .filter((entry) => actor === undefined || actor === '' || entry.actor.includes(actor))
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.actionId < b.actionId ? 1 : -1));
  return { entries: shown.slice(0, SHOWN), complete: complete && shown.length <= SHOWN, problems };
}
