/**
 * One business id's messages in the order they were written, each with its deliveries, read through the
 * byAggregate index as `outbox list --aggregate-id` reads them.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import { LIST_LIMITS, listMessages } from '../../admin/list-messages.ts';
import type { MessageSummary } from '../../admin/message-summary.ts';
import type { MessageStatus } from '../../message/message-status.ts';
import { messageStatusOf } from '../../outbox/delivery-status.ts';

/** One message of the aggregate. */
export interface AggregateMessage {
  readonly messageId: string;
  readonly topic: string;
  readonly createdAt: string;
  /** Derived from its deliveries (CONFIRMED only when each one is). */
  readonly status: MessageStatus;
  /** Each subscriber's delivery; one entry without a subscriber for a message delivered to one queue. */
  readonly deliveries: readonly MessageSummary[];
}

/** The aggregate's messages, oldest first. */
export interface AggregatePage {
  readonly aggregateId: string;
  readonly messages: readonly AggregateMessage[];
  /** More rows than the page reads: the oldest are shown. */
  readonly truncated: boolean;
}

/** Delivery rows read at most for one aggregate page. */
const MAX_ROWS = 2_000;

/**
 * The messages of `aggregateId`, oldest first, each with its deliveries.
 * @example
 * const { messages } = await readAggregatePage(deps, 'order-17');
 */
export async function readAggregatePage(
  deps: Pick<AdminDeps, 'outbox' | 'dueShards'>,
  aggregateId: string,
): Promise<AggregatePage> {
  const rows: MessageSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await listMessages(deps, {
      aggregateId,
      limit: LIST_LIMITS.maxLimit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    rows.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined && rows.length < MAX_ROWS);
  const byMessage = new Map<string, MessageSummary[]>();
  for (const row of rows) byMessage.set(row.messageId, [...(byMessage.get(row.messageId) ?? []), row]);
  const messages = [...byMessage.entries()]
    .map(([messageId, deliveries]): AggregateMessage => {
      const first = deliveries[0];
      return {
        messageId,
        topic: first?.topic ?? '',
        createdAt: first?.createdAt ?? '',
        status: messageStatusOf(deliveries.map((delivery) => delivery.status)),
        deliveries: [...deliveries].sort((a, b) => (a.subscriber ?? '').localeCompare(b.subscriber ?? '')),
      };
    })
    .sort((a, b) =>
      a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.messageId.localeCompare(b.messageId),
    );
  return { aggregateId, messages, truncated: cursor !== undefined };
}
