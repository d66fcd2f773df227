/**
 * The overview: the pipeline from the writer through the relay and the queues to each subscriber, with the counts
 * the admin core's `stats` reads from the indexes, each subscriber's queue and dead-letter depths from its own
 * stack, and the ordering gaps of the ordered topics.
 */
import { OutboxAdmin } from '../../admin/outbox-admin.ts';
import type { OutboxStats } from '../../admin/outbox-stats.ts';
import { SubscriberAdmin } from '../../admin/subscriber-admin.ts';
import type { SubscriberStats } from '../../admin/subscriber-stats.ts';
import { describeError } from '../../errors.ts';
import { subscriberNames } from '../../outbox/subscriptions.ts';
import type { ConsoleContext } from './console-context.ts';
import { type OrderingGaps, orderingGaps } from './ordering-gaps.ts';

/** A subscriber on the overview: its own stack's depths, or why they cannot be read. */
export interface SubscriberOverview {
  readonly subscriber: string;
  readonly stackName?: string;
  readonly stats?: SubscriberStats;
  readonly problem?: string;
}

/** Everything the overview shows. */
export interface Overview {
  readonly at: string;
  readonly stackName: string;
  readonly outboxName?: string;
  readonly stats: OutboxStats;
  readonly subscribers: readonly SubscriberOverview[];
  readonly gaps: OrderingGaps;
  readonly notes: readonly string[];
}

/**
 * The overview, read afresh: counts through the indexes (never a scan), queue depths by GetQueueAttributes. A
 * subscriber stack that cannot be read is named with the reason; the rest is still shown.
 * @example
 * const { stats, subscribers, gaps } = await readOverview(context);
 */
export async function readOverview(context: ConsoleContext): Promise<Overview> {
  const admin = new OutboxAdmin(context.deps);
  const [stats, subscribers, gaps] = await Promise.all([
    admin.stats(),
    Promise.all(subscribersOf(context).map((reach) => subscriberOverview(reach))),
    orderingGaps(context.deps, context.orderedTopics),
  ]);
  return {
    at: context.deps.clock().toISOString(),
    stackName: context.stackName,
    ...(context.outboxName === undefined ? {} : { outboxName: context.outboxName }),
    stats,
    subscribers,
    gaps,
    notes: context.notes,
  };
}

/** Every subscriber the outbox delivers to or the console reached, in name order. */
function subscribersOf(context: ConsoleContext): ConsoleContext['subscribers'] {
  const reached = new Map(context.subscribers.map((reach) => [reach.subscriber, reach]));
  for (const name of subscriberNames(context.subscriptions)) {
    if (!reached.has(name)) {
      reached.set(name, {
        subscriber: name,
        problem: `no stack of subscriber ${name} was found: give it with --subscriber-stack`,
      });
    }
  }
  return [...reached.values()].sort((a, b) => a.subscriber.localeCompare(b.subscriber));
}

async function subscriberOverview(reach: ConsoleContext['subscribers'][number]): Promise<SubscriberOverview> {
  const base = {
    subscriber: reach.subscriber,
    ...(reach.stackName === undefined ? {} : { stackName: reach.stackName }),
  };
  if (reach.deps === undefined) {
    return { ...base, problem: reach.problem ?? 'its stack cannot be reached' };
  }
  try {
    return { ...base, stats: await new SubscriberAdmin(reach.deps).stats() };
  } catch (error) {
    return { ...base, problem: `its queues cannot be read with these credentials: ${describeError(error)}` };
  }
}
