/**
 * The sweeper's backlog gauges: per topic, per subscriber of each topic, and per subscriber over every topic it
 * receives. Read once a run from the due and attention indexes (never a scan) by the admin's count, so the gauges
 * and `outbox stats` count alike; the one figure the count has no use for, the age of the oldest unconfirmed
 * delivery, comes from the same rows as they are read.
 */
import type { OutboxAdminStore } from '../admin/admin-ports.ts';
import { countOutbox, type TopicCounts } from '../admin/outbox-stats.ts';
import { MessageStatus } from '../message/message-status.ts';
import { UNKNOWN_TOPIC } from '../observability/metric-names.ts';
import type { Subscriptions } from '../outbox/subscriptions.ts';

/** The backlog of one topic, of one subscriber's deliveries of it, or of one subscriber's deliveries of all. */
export interface BacklogGauges {
  /** PENDING messages (deliveries). */
  readonly pending: number;
  /** SENT and not confirmed yet: waiting for the consumer's confirmation (a subscriber's: for its receipt). */
  readonly sentUnconfirmed: number;
  /** FAILED: nothing retries them. */
  readonly failed: number;
  /** Seconds since the oldest PENDING one was created; 0 when none is PENDING. */
  readonly oldestPendingAgeSeconds: number;
  /**
   * Seconds since the oldest SENT-and-unconfirmed one was created; 0 when none is SENT. Counted from its creation,
   * not its last send: each reconciliation round resends an unconfirmed delivery, so the time since the last send
   * never grows past the confirm deadline, while this grows for as long as the subscriber confirms nothing.
   */
  readonly oldestUnconfirmedAgeSeconds: number;
}

/** One subscriber's backlog: of each topic it receives, and over all of them. */
export interface SubscriberBacklog {
  readonly topics: Readonly<Record<string, BacklogGauges>>;
  /** Its topics' counts added up, and the oldest of their ages. */
  readonly total: BacklogGauges;
}

/** The backlog gauges of one sweeper run. */
export interface Backlog {
  /** When it was read. */
  readonly at: string;
  /** Per topic, every row counted: a topic with subscribers counts each delivery. */
  readonly topics: Readonly<Record<string, BacklogGauges>>;
  /** Per subscriber; rows without a subscriber (a topic delivered to one queue) are counted per topic only. */
  readonly subscribers: Readonly<Record<string, SubscriberBacklog>>;
}

/** Where the gauges are read. */
export interface BacklogDeps {
  readonly outbox: Pick<OutboxAdminStore, 'readPartition'>;
  /** Partitions of the due index (the writers'). */
  readonly dueShards: number;
  readonly clock: () => Date;
}

/** What the gauges list even when they have nothing, so each falls back to 0 rather than going silent. */
export interface BacklogOptions {
  /** The topics routed to a queue. */
  readonly topics?: readonly string[];
  /** Who receives which topic: each subscriber, and each topic of it. */
  readonly subscriptions?: Subscriptions;
}

const NONE: BacklogGauges = {
  pending: 0,
  sentUnconfirmed: 0,
  failed: 0,
  oldestPendingAgeSeconds: 0,
  oldestUnconfirmedAgeSeconds: 0,
};

/**
 * The backlog gauges of every topic and subscriber, from one read of the indexes (what `outbox stats` counts, read
 * the same way): PENDING, SENT-unconfirmed and FAILED counts, the oldest PENDING age and the oldest unconfirmed age.
 * `topics` and every subscriber of `subscriptions` are listed with zeros when they have nothing.
 * @example
 * const backlog = await readBacklog(deps, { topics: Object.keys(topicQueues), subscriptions });
 * backlog.subscribers.inventory?.total.oldestUnconfirmedAgeSeconds;
 */
export async function readBacklog(deps: BacklogDeps, options: BacklogOptions = {}): Promise<Backlog> {
  const unconfirmed = new OldestCreated();
  const counts = await countOutbox(
    {
      dueShards: deps.dueShards,
      clock: deps.clock,
      outbox: {
        readPartition: async (partition, attributes) => {
          if (partition.index !== 'due') return deps.outbox.readPartition(partition, attributes);
          // SENT rows are in the due index only; the count reads their creation time for the PENDING ones anyway.
          const read = attributes.includes('createdAt') ? attributes : [...attributes, 'createdAt'];
          const items = await deps.outbox.readPartition(partition, read);
          for (const item of items) unconfirmed.add(item);
          return items;
        },
      },
    },
    {
      ...(options.topics === undefined ? {} : { topics: options.topics }),
      ...(options.subscriptions === undefined ? {} : { subscriptions: options.subscriptions }),
    },
  );
  const nowMs = Date.parse(counts.at);
  const gauges = (tally: TopicCounts, oldest: string | undefined): BacklogGauges => ({
    pending: tally.PENDING,
    sentUnconfirmed: tally.SENT,
    failed: tally.FAILED,
    oldestPendingAgeSeconds: tally.oldestPendingAgeSeconds,
    oldestUnconfirmedAgeSeconds:
      oldest === undefined ? 0 : Math.max(0, Math.floor((nowMs - Date.parse(oldest)) / 1000)),
  });

  const subscribers = new Map<string, Map<string, BacklogGauges>>();
  for (const entry of counts.bySubscriber) {
    if (entry.subscriber === undefined) continue;
    const topics = subscribers.get(entry.subscriber) ?? new Map<string, BacklogGauges>();
    subscribers.set(entry.subscriber, topics);
    topics.set(entry.topic, gauges(entry, unconfirmed.of(entry.topic, entry.subscriber)));
  }
  return {
    at: counts.at,
    topics: Object.fromEntries(
      Object.entries(counts.topics).map(([topic, tally]) => [topic, gauges(tally, unconfirmed.of(topic))]),
    ),
    subscribers: Object.fromEntries(
      [...subscribers].map(([subscriber, topics]) => [
        subscriber,
        { topics: Object.fromEntries(topics), total: totalOf([...topics.values()]) },
      ]),
    ),
  };
}

/** Counts added up, the oldest of the ages. */
function totalOf(parts: readonly BacklogGauges[]): BacklogGauges {
  return parts.reduce(
    (total, part) => ({
      pending: total.pending + part.pending,
      sentUnconfirmed: total.sentUnconfirmed + part.sentUnconfirmed,
      failed: total.failed + part.failed,
      oldestPendingAgeSeconds: Math.max(total.oldestPendingAgeSeconds, part.oldestPendingAgeSeconds),
      oldestUnconfirmedAgeSeconds: Math.max(
        total.oldestUnconfirmedAgeSeconds,
        part.oldestUnconfirmedAgeSeconds,
      ),
    }),
    NONE,
  );
}

/** The creation time of the oldest SENT row per topic, and per topic and subscriber. */
class OldestCreated {
  readonly #oldest = new Map<string, string>();

  add(item: Readonly<Record<string, unknown>>): void {
    if (item.status !== MessageStatus.SENT || typeof item.createdAt !== 'string') return;
    // As the count files a row: a topic it cannot read is the unknown topic.
    const topic = typeof item.topic === 'string' ? item.topic : UNKNOWN_TOPIC;
    this.#keep(keyOf(topic), item.createdAt);
    if (typeof item.subscriber === 'string') this.#keep(keyOf(topic, item.subscriber), item.createdAt);
  }

  of(topic: string, subscriber?: string): string | undefined {
    return this.#oldest.get(keyOf(topic, subscriber));
  }

  #keep(key: string, createdAt: string): void {
    const oldest = this.#oldest.get(key);
    if (oldest === undefined || createdAt < oldest) this.#oldest.set(key, createdAt);
  }
}

function keyOf(topic: string, subscriber?: string): string {
  return JSON.stringify([topic, subscriber ?? null]);
}
