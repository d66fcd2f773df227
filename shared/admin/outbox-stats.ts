import { MessageStatus } from '../message/message-status.ts';
import { attentionPartitions, dueShardKeys } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import type { OutboxAdminStore } from './admin-ports.ts';
import { queueNameOf } from './admin-queues.ts';
import { deadLetterRoutes } from './dead-letter-routes.ts';

/** The statuses the indexes can count. */
export type CountedStatus =
  | typeof MessageStatus.PENDING
  | typeof MessageStatus.SENT
  | typeof MessageStatus.FAILED
  | typeof MessageStatus.CANCELLED;

/** The counts and ages of one topic. */
export interface TopicCounts extends Record<CountedStatus, number> {
  /** Seconds since the oldest PENDING message was created; 0 when none is PENDING. */
  readonly oldestPendingAgeSeconds: number;
  /** Seconds since the oldest unconfirmed SENT message was sent; 0 when none is SENT. */
  readonly oldestSentUnconfirmedAgeSeconds: number;
}

/** Counts of the outbox, per topic and in all. */
export interface OutboxCounts {
  readonly at: string;
  readonly topics: Readonly<Record<string, TopicCounts>>;
  readonly totals: Readonly<Record<CountedStatus, number>>;
  /** Why CONFIRMED is not counted. */
  readonly notCounted: { readonly CONFIRMED: string };
}

/** A dead-letter queue's depth. */
export interface DeadLetterDepth {
  readonly queueUrl: string;
  readonly queueName: string;
  readonly topics: readonly string[];
  /** ApproximateNumberOfMessages. */
  readonly messages: number;
  /** ApproximateNumberOfMessagesNotVisible (being redriven or inspected). */
  readonly inFlight: number;
}

/** The admin's statistics: the outbox counts and every DLQ's depth. */
export interface OutboxStats extends OutboxCounts {
  readonly deadLetterQueues: readonly DeadLetterDepth[];
}

const NOT_COUNTED =
  'CONFIRMED messages are in no index but byAggregate: counting them would read every message';

/**
 * Counts PENDING and SENT messages per topic from the due index and FAILED and CANCELLED from the attention
 * index (never a scan, never the payload), with the age of the oldest PENDING and of the oldest unconfirmed
 * SENT message per topic. `topics` are listed with zeros when they have nothing, so a gauge published from
 * the counts falls back to 0. The sweeper publishes its backlog gauges from this.
 * @example
 * const counts = await countOutbox(deps, { topics: Object.keys(topicQueues) });
 */
export async function countOutbox(
  deps: Pick<AdminDeps, 'dueShards' | 'clock'> & { readonly outbox: Pick<OutboxAdminStore, 'readPartition'> },
  options: { readonly topics?: readonly string[] } = {},
): Promise<OutboxCounts> {
  const now = deps.clock();
  const oldest = new Map<string, { pending?: string; sent?: string }>();
  const topics = new Map<string, Record<CountedStatus, number>>();
  const countsOf = (topic: string) => {
    let counts = topics.get(topic);
    if (counts === undefined) {
      counts = { PENDING: 0, SENT: 0, FAILED: 0, CANCELLED: 0 };
      topics.set(topic, counts);
    }
    return counts;
  };
  for (const topic of options.topics ?? []) countsOf(topic);

  const due = dueShardKeys(deps.dueShards).map((shard) =>
    deps.outbox.readPartition({ index: 'due', shard }, ['topic', 'status', 'createdAt', 'sentAt']),
  );
  const attention = [MessageStatus.FAILED, MessageStatus.CANCELLED].flatMap((status) =>
    attentionPartitions(status, deps.dueShards).map((partition) =>
      deps.outbox.readPartition({ index: 'attention', partition }, ['topic', 'status']),
    ),
  );
  // Each index counts only the statuses it is for, so no message is counted twice.
  const [dueItems, attentionItems] = await Promise.all([Promise.all(due), Promise.all(attention)]);
  const counted = [
    ...dueItems
      .flat()
      .filter((item) => item.status === MessageStatus.PENDING || item.status === MessageStatus.SENT),
    ...attentionItems
      .flat()
      .filter((item) => item.status === MessageStatus.FAILED || item.status === MessageStatus.CANCELLED),
  ];
  for (const item of counted) {
    const status = item.status as CountedStatus;
    const topic = typeof item.topic === 'string' ? item.topic : '(unknown)';
    countsOf(topic)[status] += 1;
    const ages = oldest.get(topic) ?? {};
    if (status === MessageStatus.PENDING && typeof item.createdAt === 'string') {
      if (ages.pending === undefined || item.createdAt < ages.pending) ages.pending = item.createdAt;
    }
    const sentAt = typeof item.sentAt === 'string' ? item.sentAt : item.createdAt;
    if (status === MessageStatus.SENT && typeof sentAt === 'string') {
      if (ages.sent === undefined || sentAt < ages.sent) ages.sent = sentAt;
    }
    oldest.set(topic, ages);
  }

  const ageSeconds = (since: string | undefined) =>
    since === undefined ? 0 : Math.max(0, Math.floor((now.getTime() - Date.parse(since)) / 1000));
  const totals: Record<CountedStatus, number> = { PENDING: 0, SENT: 0, FAILED: 0, CANCELLED: 0 };
  const byTopic: Record<string, TopicCounts> = {};
  for (const [topic, counts] of [...topics].sort(([a], [b]) => a.localeCompare(b))) {
    for (const status of Object.keys(totals) as CountedStatus[]) totals[status] += counts[status];
    byTopic[topic] = {
      ...counts,
      oldestPendingAgeSeconds: ageSeconds(oldest.get(topic)?.pending),
      oldestSentUnconfirmedAgeSeconds: ageSeconds(oldest.get(topic)?.sent),
    };
  }
  return { at: now.toISOString(), topics: byTopic, totals, notCounted: { CONFIRMED: NOT_COUNTED } };
}

/**
 * The outbox counts ({@link countOutbox}, every routed topic listed) and the depth of each dead-letter queue
 * (GetQueueAttributes).
 * @example
 * const { totals, topics, deadLetterQueues } = await outboxStats(deps);
 */
export async function outboxStats(
  deps: Pick<AdminDeps, 'outbox' | 'queues' | 'dueShards' | 'clock' | 'topicQueues' | 'deadLetterQueues'>,
): Promise<OutboxStats> {
  const routes = deadLetterRoutes(deps);
  const [counts, depths] = await Promise.all([
    countOutbox(deps, { topics: Object.keys(deps.topicQueues) }),
    Promise.all(routes.map((route) => deps.queues.depth(route.deadLetterQueueUrl))),
  ]);
  return {
    ...counts,
    deadLetterQueues: routes.map((route, index) => ({
      queueUrl: route.deadLetterQueueUrl,
      queueName: queueNameOf(route.deadLetterQueueUrl),
      topics: route.topics,
      messages: depths[index]?.visible ?? 0,
      inFlight: depths[index]?.inFlight ?? 0,
    })),
  };
}
