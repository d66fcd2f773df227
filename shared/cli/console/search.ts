/**
 * The search box: a message id (or a delivery's key), an aggregate id or an order key, taken to the page that shows
 * it. Each is a read by key or one index page, never a scan.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import { MessageNotFoundError } from '../../admin/admin-errors.ts';
import { listMessages } from '../../admin/list-messages.ts';
import { OutboxAdmin } from '../../admin/outbox-admin.ts';

/** Where a search leads: the console page to open. */
export interface SearchResult {
  readonly kind: 'message' | 'aggregate' | 'order-key';
  /** The page's path, e.g. `/messages/01J…`. */
  readonly location: string;
}

/**
 * The page `text` names: the message's page when a message (or delivery) has that id, the aggregate's page when an
 * aggregate has messages under it, and for an order key the page of the aggregate its first message belongs to;
 * `undefined` when none does.
 * @example
 * await search(deps, 'order#o-42'); // { kind: 'order-key', location: '/aggregates/o-42?orderKey=order%23o-42' }
 */
export async function search(deps: AdminDeps, text: string): Promise<SearchResult | undefined> {
  const query = text.trim();
  if (query === '') return undefined;
  try {
    const details = await new OutboxAdmin(deps).showMessage(query);
    const messageId = typeof details.message.messageId === 'string' ? details.message.messageId : query;
    return { kind: 'message', location: `/messages/${encodeURIComponent(messageId)}` };
  } catch (error) {
    if (!(error instanceof MessageNotFoundError)) throw error;
  }
  const aggregate = await listMessages(deps, { aggregateId: query, limit: 1 });
  if (aggregate.items.length > 0) {
    return { kind: 'aggregate', location: `/aggregates/${encodeURIComponent(query)}` };
  }
  if (query.includes('#')) {
    const first = await deps.outbox.readInSequence({ orderKey: query, seq: 0, after: true });
    if (first !== undefined && typeof first.item.aggregateId === 'string') {
      return {
        kind: 'order-key',
        location: `/aggregates/${encodeURIComponent(first.item.aggregateId)}?orderKey=${encodeURIComponent(query)}`,
      };
    }
  }
  return undefined;
}
