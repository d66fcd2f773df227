import { MessageStatus } from '../message/message-status.ts';
import { attentionPartitions, dueShardKeys } from '../outbox/outbox-item.ts';
import { type Subscriptions, subscriberNames, subscribersByTopic } from '../outbox/subscriptions.ts';
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

/** The counts and ages of one subscriber's deliveries of one topic (or of a topic's messages without subscribers). */
export interface SubscriberCounts extends TopicCounts {
  readonly topic: string;
  /** The subscriber; absent for the messages of the topic delivered to one queue (rows without a subscriber). */
  readonly subscriber?: string;
}

/** Counts of the outbox, per topic and in all, and per subscriber of each topic. */
export interface OutboxCounts {
  readonly at: string;
  readonly topics: Readonly<Record<string, TopicCounts>>;
  readonly totals: Readonly<Record<CountedStatus, number>>;
  /**
   * The counts per topic and subscriber, by topic then subscriber (rows without a subscriber first): a topic with
   * subscribers counts each delivery, so its row in `topics` adds up its subscribers'.
   */
  readonly bySubscriber: readonly SubscriberCounts[];
  /** Only the deliveries to this subscriber were counted. */
  readonly subscriber?: string;
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

/** What to count. */
export interface CountOptions {
  /** Topics listed with zeros when they have nothing, so a gauge published from the counts falls back to 0. */
  readonly topics?: readonly string[];
  /** Who receives which topic: each subscriber of a topic is listed in `bySubscriber`, with zeros when it has nothing. */
  readonly subscriptions?: Subscriptions;
  /** Count only the deliveries to this subscriber. */
  readonly subscriber?: string;
}

/**
 * Counts PENDING and SENT messages per topic from the due index and FAILED and CANCELLED from the attention
 * index (never a scan, never the payload), with the age of the oldest PENDING and of the oldest unconfirmed
 * SENT message per topic, and the same per subscriber of each topic (a topic with subscribers is stored as one
 * delivery per subscriber, each counted). `topics` are listed with zeros when they have nothing, so a gauge
 * published from the counts falls back to 0. The sweeper publishes its backlog gauges from this.
 * @example
 * const counts = await countOutbox(deps, { topics: Object.keys(topicQueues) });
 */
export async function countOutbox(
  deps: Pick<AdminDeps, 'dueShards' | 'clock'> & { readonly outbox: Pick<OutboxAdminStore, 'readPartition'> },
  options: CountOptions = {},
): Promise<OutboxCounts> {
  const now = deps.clock();
  const only = options.subscriber?.trim() || undefined;
  const topics = new Tally();
  const deliveries = new Tally();
  const subscribed = subscribersByTopic(options.subscriptions ?? {});
  for (const topic of options.topics ?? []) {
    if (only === undefined) topics.of(topic);
  }
  for (const [topic, names] of Object.entries(subscribed)) {
    for (const name of names) {
      if (only !== undefined && name !== only) continue;
      topics.of(topic);
      deliveries.of(topic, name);
    }
  }

  // Each subscriber's deliveries are in due partitions of its own.
  const names = only === undefined ? subscriberNames(options.subscriptions ?? {}) : [only];
  const due = dueShardKeys(deps.dueShards, names).map((shard) =>
    deps.outbox.readPartition({ index: 'due', shard }, [
      'topic',
      'status',
      'createdAt',
      'sentAt',
      'subscriber',
    ]),
  );
  const attention = [MessageStatus.FAILED, MessageStatus.CANCELLED].flatMap((status) =>
    attentionPartitions(status, deps.dueShards).map((partition) =>
      deps.outbox.readPartition({ index: 'attention', partition }, ['topic', 'status', 'subscriber']),
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
    const subscriber = typeof item.subscriber === 'string' ? item.subscriber : undefined;
    if (only !== undefined && subscriber !== only) continue;
    const topic = typeof item.topic === 'string' ? item.topic : '(unknown)';
    topics.add(item, topic);
    deliveries.add(item, topic, subscriber);
  }

  const ageSeconds = (since: string | undefined) =>
    since === undefined ? 0 : Math.max(0, Math.floor((now.getTime() - Date.parse(since)) / 1000));
  const countsOf = (tally: TallyEntry): TopicCounts => ({
    ...tally.counts,
    oldestPendingAgeSeconds: ageSeconds(tally.oldestPending),
    oldestSentUnconfirmedAgeSeconds: ageSeconds(tally.oldestSent),
  });
  const totals: Record<CountedStatus, number> = { PENDING: 0, SENT: 0, FAILED: 0, CANCELLED: 0 };
  const byTopic: Record<string, TopicCounts> = {};
  for (const entry of topics.sorted()) {
    for (const status of Object.keys(totals) as CountedStatus[]) totals[status] += entry.counts[status];
    byTopic[entry.topic] = countsOf(entry);
  }
  const bySubscriber = deliveries.sorted().map(
    (entry): SubscriberCounts => ({
      topic: entry.topic,
      ...(entry.subscriber === undefined ? {} : { subscriber: entry.subscriber }),
      ...countsOf(entry),
    }),
  );
  return {
    at: now.toISOString(),
    topics: byTopic,
    totals,
    bySubscriber,
    ...(only === undefined ? {} : { subscriber: only }),
    notCounted: { CONFIRMED: NOT_COUNTED },
  };
}

/** The counts and oldest times of one topic, or of one subscriber's deliveries of it. */
interface TallyEntry {
  readonly topic: string;
  readonly subscriber?: string;
  readonly counts: Record<CountedStatus, number>;
  oldestPending?: string;
  oldestSent?: string;
}

/** Counts and oldest times per topic (and subscriber), as rows of the indexes are added. */
class Tally {
  readonly #entries = new Map<string, TallyEntry>();

  of(topic: string, subscriber?: string): TallyEntry {
    const key = JSON.stringify([topic, subscriber ?? null]);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = {
        topic,
        ...(subscriber === undefined ? {} : { subscriber }),
        counts: { PENDING: 0, SENT: 0, FAILED: 0, CANCELLED: 0 },
      };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  add(item: Readonly<Record<string, unknown>>, topic: string, subscriber?: string): void {
    const entry = this.of(topic, subscriber);
    const status = item.status as CountedStatus;
    entry.counts[status] += 1;
    if (status === MessageStatus.PENDING && typeof item.createdAt === 'string') {
      if (entry.oldestPending === undefined || item.createdAt < entry.oldestPending) {
        entry.oldestPending = item.createdAt;
      }
    }
    const sentAt = typeof item.sentAt === 'string' ? item.sentAt : item.createdAt;
    if (status === MessageStatus.SENT && typeof sentAt === 'string') {
      if (entry.oldestSent === undefined || sentAt < entry.oldestSent) entry.oldestSent = sentAt;
    }
  }

  /** By topic, then subscriber (rows without one first). */
  sorted(): TallyEntry[] {
    return [...this.#entries.values()].sort(
      (a, b) =>
        a.topic.localeCompare(b.topic) ||
        (a.subscriber === undefined
          ? -1
          : b.subscriber === undefined
            ? 1
            : a.subscriber.localeCompare(b.subscriber)),
    );
  }
}

/** What `outboxStats` counts. */
export interface OutboxStatsInput {
  /** Count only the deliveries to this subscriber. */
  readonly subscriber?: string;
}

/**
 * The outbox counts ({@link countOutbox}, every routed topic and every subscriber of each topic listed) and the
 * depth of each dead-letter queue of the outbox's topic queues (GetQueueAttributes); a subscriber's dead letters
 * are in its own stack.
 * @example
 * const { totals, topics, bySubscriber, deadLetterQueues } = await outboxStats(deps, { subscriber: 'loyalty' });
 */
export async function outboxStats(
  deps: Pick<
    AdminDeps,
    'outbox' | 'queues' | 'dueShards' | 'clock' | 'topicQueues' | 'deadLetterQueues' | 'subscriptions'
  >,
  input: OutboxStatsInput = {},
): Promise<OutboxStats> {
  const routes = deadLetterRoutes(deps);
  const [counts, depths] = await Promise.all([
    countOutbox(deps, {
      topics: Object.keys(deps.topicQueues),
      ...(deps.subscriptions === undefined ? {} : { subscriptions: deps.subscriptions }),
      ...(input.subscriber === undefined ? {} : { subscriber: input.subscriber }),
    }),
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
