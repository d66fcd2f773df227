import type { AdminQueues } from './admin-queues.ts';
import { queueNameOf } from './admin-queues.ts';
import { deadLetterRoutes } from './dead-letter-routes.ts';
import type { DeadLetterDepth } from './outbox-stats.ts';

/** How many messages one of a subscriber's queues holds. */
export interface SubscriberQueueDepth {
  readonly queueUrl: string;
  readonly queueName: string;
  readonly topics: readonly string[];
  /** ApproximateNumberOfMessages: waiting for the consumer. */
  readonly messages: number;
  /** ApproximateNumberOfMessagesNotVisible: being consumed. */
  readonly inFlight: number;
}

/** One of a subscriber's inbox tables, and the topics it holds the messages of. */
export interface SubscriberInbox {
  readonly table: string;
  readonly topics: readonly string[];
}

/** What a subscriber's own stack holds: its queue's and dead-letter queue's depths, and its inbox. */
export interface SubscriberStats {
  readonly at: string;
  readonly subscriber: string;
  readonly queues: readonly SubscriberQueueDepth[];
  readonly deadLetterQueues: readonly DeadLetterDepth[];
  readonly inboxes: readonly SubscriberInbox[];
}

/**
 * The depths of a subscriber's queues and their dead-letter queues (GetQueueAttributes), and its inbox tables, as
 * its own stack holds them. The deliveries' statuses are the producer's: `outboxStats` on the producer's outbox.
 * @example
 * const stats = await subscriberStats(deps);
 */
export async function subscriberStats(deps: {
  readonly subscriber: string;
  readonly queues: Pick<AdminQueues, 'depth'>;
  readonly topicQueues: Readonly<Record<string, string>>;
  readonly deadLetterQueues: Readonly<Record<string, string>>;
  readonly inboxTables: Readonly<Record<string, string>>;
  readonly clock: () => Date;
}): Promise<SubscriberStats> {
  const queueUrls = groupTopics(deps.topicQueues);
  const routes = deadLetterRoutes(deps);
  const [queueDepths, deadLetterDepths] = await Promise.all([
    Promise.all(queueUrls.map(([url]) => deps.queues.depth(url))),
    Promise.all(routes.map((route) => deps.queues.depth(route.deadLetterQueueUrl))),
  ]);
  return {
    at: deps.clock().toISOString(),
    subscriber: deps.subscriber,
    queues: queueUrls.map(([queueUrl, topics], n) => ({
      queueUrl,
      queueName: queueNameOf(queueUrl),
      topics,
      messages: queueDepths[n]?.visible ?? 0,
      inFlight: queueDepths[n]?.inFlight ?? 0,
    })),
    deadLetterQueues: routes.map((route, n) => ({
      queueUrl: route.deadLetterQueueUrl,
      queueName: queueNameOf(route.deadLetterQueueUrl),
      topics: route.topics,
      messages: deadLetterDepths[n]?.visible ?? 0,
      inFlight: deadLetterDepths[n]?.inFlight ?? 0,
    })),
    inboxes: groupTopics(deps.inboxTables).map(([table, topics]) => ({ table, topics })),
  };
}

/** Topic → resource, as each resource with its topics, in the order first named. */
function groupTopics(byTopic: Readonly<Record<string, string>>): [string, string[]][] {
  const grouped = new Map<string, string[]>();
  for (const [topic, resource] of Object.entries(byTopic)) {
    grouped.set(resource, [...(grouped.get(resource) ?? []), topic]);
  }
  return [...grouped];
}
