/**
 * Ordering gaps: a message of an ordered topic that is FAILED or CANCELLED (and not skipped) is never applied, so
 * its consumer holds back every later message of its order key. Found through the attention index (never a scan).
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import { messageIdOfRow } from '../../admin/message-summary.ts';
import { MessageStatus } from '../../message/message-status.ts';
import type { OrderingByTopic } from '../../ordering/ordering.ts';
import { attentionPartitions } from '../../outbox/outbox-item.ts';

/** A message, or one subscriber's delivery, in its order key's sequence. */
export interface SequencedMessage {
  readonly messageId: string;
  readonly subscriber?: string;
  readonly seq: number;
  readonly status: string;
}

/** One gap: the message that blocks its order key, and the first message after it when one was looked up. */
export interface OrderingGap extends SequencedMessage {
  readonly topic: string;
  /** The sequence as stored (a subscriber's own, `<orderKey>#<subscriber>`, for a topic with subscribers). */
  readonly orderKey: string;
  readonly createdAt: string;
  /** The next message of the sequence, which its consumer holds back; absent when none was written yet. */
  readonly next?: SequencedMessage;
}

/** The gaps of the ordered topics. */
export interface OrderingGaps {
  readonly count: number;
  /** The oldest gaps, up to a page's worth. */
  readonly gaps: readonly OrderingGap[];
}

/** Gaps whose successor is looked up (a read each); the count covers them all. */
const GAPS_SHOWN = 25;

const ATTRIBUTES = [
  'messageId',
  'subscriber',
  'topic',
  'orderKey',
  'seq',
  'status',
  'createdAt',
  'skippedAt',
] as const;

/**
 * The FAILED and CANCELLED messages of `orderedTopics` not skipped, oldest first, each with the message after it in
 * its sequence (for the first {@link GAPS_SHOWN}).
 * @example
 * const { count, gaps } = await orderingGaps(deps, { 'order.created': { scope: 'order' } });
 */
export async function orderingGaps(
  deps: Pick<AdminDeps, 'outbox' | 'dueShards'>,
  orderedTopics: OrderingByTopic,
): Promise<OrderingGaps> {
  if (Object.keys(orderedTopics).length === 0) return { count: 0, gaps: [] };
  const partitions = [MessageStatus.FAILED, MessageStatus.CANCELLED].flatMap((status) =>
    attentionPartitions(status, deps.dueShards),
  );
  const rows = (
    await Promise.all(
      partitions.map((partition) => deps.outbox.readPartition({ index: 'attention', partition }, ATTRIBUTES)),
    )
  ).flat();
  const blocking = rows
    .filter(
      (row) =>
        typeof row.topic === 'string' &&
        orderedTopics[row.topic] !== undefined &&
        typeof row.orderKey === 'string' &&
        typeof row.seq === 'number' &&
        deps.outbox.skippedAtOf(row) === undefined,
    )
    .map((row): Omit<OrderingGap, 'next'> => {
      const subscriber = typeof row.subscriber === 'string' ? row.subscriber : undefined;
      return {
        messageId: messageIdOfRow(String(row.messageId), subscriber),
        ...(subscriber === undefined ? {} : { subscriber }),
        topic: String(row.topic),
        orderKey: String(row.orderKey),
        seq: Number(row.seq),
        status: String(row.status),
        createdAt: String(row.createdAt ?? ''),
      };
    })
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  const shown = await Promise.all(
    blocking.slice(0, GAPS_SHOWN).map(async (gap): Promise<OrderingGap> => {
      const next = await neighbour(deps, { orderKey: gap.orderKey, seq: gap.seq, after: true });
      return next === undefined ? gap : { ...gap, next };
    }),
  );
  return { count: blocking.length, gaps: shown };
}

/**
 * The message at `seq` of `orderKey` (with `after`: the first one after it), as the order index finds it;
 * `undefined` when there is none.
 */
export async function neighbour(
  deps: Pick<AdminDeps, 'outbox'>,
  at: { readonly orderKey: string; readonly seq: number; readonly after?: boolean },
): Promise<SequencedMessage | undefined> {
  if (at.seq < 1 && at.after !== true) return undefined;
  const found = await deps.outbox.readInSequence(at);
  if (found === undefined) return undefined;
  const subscriber = typeof found.item.subscriber === 'string' ? found.item.subscriber : undefined;
  return {
    messageId: messageIdOfRow(found.messageId, subscriber),
    ...(subscriber === undefined ? {} : { subscriber }),
    seq: Number(found.item.seq),
    status: String(found.item.status),
  };
}
