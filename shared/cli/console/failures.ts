/**
 * The failures view: every FAILED delivery, listed page by page through the attention index as `outbox list
 * --status FAILED` lists them (never a scan, never a payload), grouped by cause.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import { LIST_LIMITS, listMessages } from '../../admin/list-messages.ts';
import { MessageStatus } from '../../message/message-status.ts';
import { type CauseGroup, type FailedDelivery, groupByCause } from './cause-groups.ts';

/** The FAILED deliveries by cause. */
export interface Failures {
  readonly at: string;
  /** FAILED deliveries in all. */
  readonly total: number;
  readonly groups: readonly CauseGroup[];
}

/**
 * Every FAILED delivery (each subscriber's delivery of a message is one), optionally of one topic or subscriber:
 * the listing's pages of the largest size, read until the last.
 * @example
 * const failed = await failedDeliveries(deps, { topic: 'order.created' });
 */
export async function failedDeliveries(
  deps: Pick<AdminDeps, 'outbox' | 'dueShards'>,
  filter: { readonly topic?: string; readonly subscriber?: string } = {},
): Promise<FailedDelivery[]> {
  const found: FailedDelivery[] = [];
  let cursor: string | undefined;
  do {
    const page = await listMessages(deps, {
      status: MessageStatus.FAILED,
      ...filter,
      limit: LIST_LIMITS.maxLimit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    found.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

/**
 * The FAILED deliveries grouped by cause, the largest group first.
 * @example
 * const { total, groups } = await readFailures(deps);
 */
export async function readFailures(
  deps: Pick<AdminDeps, 'outbox' | 'dueShards' | 'clock'>,
): Promise<Failures> {
  const failed = await failedDeliveries(deps);
  return { at: deps.clock().toISOString(), total: failed.length, groups: groupByCause(failed) };
}
