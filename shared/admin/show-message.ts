import { type HistoryEntry, historyOf } from '../outbox/history.ts';
import type { AdminDeps } from './admin-deps.ts';
import { MessageNotFoundError } from './admin-errors.ts';
import { requireText } from './admin-input.ts';
import { type AuditRow, auditSubject } from './audit-trail.ts';

/** Everything known of one message. */
export interface MessageDetails {
  /** The stored item as it is, payload included. */
  readonly message: Readonly<Record<string, unknown>>;
  /** Its status changes and operators' actions, oldest first. */
  readonly history: readonly HistoryEntry[];
  /** The audit rows filed under the message (`message:<id>`), oldest first. */
  readonly audit: readonly AuditRow[];
}

/**
 * The full record of a message (a strongly consistent read), its history and its audit rows. Throws
 * {@link MessageNotFoundError} when there is no such message.
 * @example
 * const { message, history, audit } = await showMessage(deps, '01HW…');
 */
export async function showMessage(
  deps: Pick<AdminDeps, 'outbox' | 'audit'>,
  messageId: string,
): Promise<MessageDetails> {
  const id = requireText('messageId', messageId);
  const [stored, audit] = await Promise.all([
    deps.outbox.read(id),
    deps.audit.trail(auditSubject.message(id)),
  ]);
  if (stored === undefined) throw new MessageNotFoundError(id);
  return { message: stored, history: historyOf(stored), audit };
}
