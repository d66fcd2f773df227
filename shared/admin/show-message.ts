import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type HistoryEntry, historyOf } from '../outbox/history.ts';
import { OUTBOX_KEYS } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import { MessageNotFoundError } from './admin-errors.ts';
import { requireText } from './admin-input.ts';
import { type AuditRow, auditSubject, readAuditTrail } from './audit-trail.ts';

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
  deps: Pick<AdminDeps, 'client' | 'outboxTable' | 'auditTable'>,
  messageId: string,
): Promise<MessageDetails> {
  const id = requireText('messageId', messageId);
  const [stored, audit] = await Promise.all([
    deps.client.send(
      new GetCommand({
        TableName: deps.outboxTable,
        Key: { [OUTBOX_KEYS.partitionKey]: id },
        ConsistentRead: true,
      }),
    ),
    readAuditTrail(deps.client, deps.auditTable, auditSubject.message(id)),
  ]);
  if (stored.Item === undefined) throw new MessageNotFoundError(id);
  return { message: stored.Item, history: historyOf(stored.Item), audit };
}
