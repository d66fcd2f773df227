/**
 * The topics of a `TransactionalOutbox`: the queue (with its dead-letter queue) each group of topics is routed
 * to, and which topics are ordered — each prop checked, a bad one reported under its name.
 */
import { type Duration, Stack, Token } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { topicSchema } from '../../shared/message/envelope.ts';
import {
  DEFAULT_GAP_TIMEOUT_MS,
  describeMixedSources,
  MAX_GAP_TIMEOUT_MS,
  mixedSequenceSources,
  type OrderedTopic,
  SequenceSource,
  scopeSchema,
} from '../../shared/ordering/ordering.ts';
import { subscriberNameSchema } from '../../shared/receipts/receipt.ts';
import {
  MAX_SUBSCRIBERS_PER_TOPIC,
  MAX_TOPICS_PER_SUBSCRIBER,
} from '../../shared/settings/outbox-settings.ts';
import type { ReportProblem } from './function-settings.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { QueueWithDlq, type QueueWithDlqProps } from './queue-with-dlq.ts';
import { queueArnOf, queueUrlOf, subscriberQueueName } from './subscription-names.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';
import type { TransactionalOutboxProps } from './transactional-outbox-props.ts';

/** Subscriber names whose queue would take another queue's name (`<outbox name>-receipts`). */
const RESERVED_SUBSCRIBER_NAMES: ReadonlySet<string> = new Set(['receipts']);

/** The shortest gap timeout: the one ORDERED_TOPICS accepts. */
const MIN_GAP_TIMEOUT_MS = 1_000;

/** The topic queues by name, and the queue each topic is routed to. */
export interface OutboxTopicQueues {
  readonly queues: Readonly<Record<string, QueueWithDlq>>;
  readonly routes: ReadonlyMap<string, sqs.IQueue>;
}

/**
 * One queue with a dead-letter queue (`<name>Queue`) per entry of `props.queues`, marked with the topics it
 * carries. A topic must be dotted lowercase and go to one queue; every retry policy must name a routed topic.
 */
export function newTopicQueues(
  outbox: OutboxScope,
  props: Pick<TransactionalOutboxProps, 'queues' | 'subscribers' | 'retryPolicies' | 'encryptionKey'>,
): OutboxTopicQueues {
  const queues: Record<string, QueueWithDlq> = {};
  const routes = new Map<string, sqs.IQueue>();
  for (const [name, queueProps] of Object.entries(props.queues ?? {})) {
    const { topics, drainOnly: _drainOnly, ...settings } = queueProps;
    const queue = markedQueue(
      outbox,
      { id: `${name}Queue`, props: { encryptionKey: props.encryptionKey, ...settings } },
      {
        queue: OutboxResourceRole.TOPIC_QUEUE,
        deadLetterQueue: OutboxResourceRole.DEAD_LETTER_QUEUE,
        topics,
      },
    );
    queues[name] = queue;
    for (const topic of topics) {
      const problem = topicProblem(topic);
      if (problem !== undefined) outbox.report(`queue '${name}': topic '${topic}' ${problem}`);
      if (routes.has(topic)) outbox.report(`topic '${topic}' is routed to more than one queue`);
      routes.set(topic, queue.queue);
    }
  }
  const subscribed = new Set(
    Object.values(props.subscribers ?? {}).flatMap((subscriber) => subscriber.topics),
  );
  if (routes.size === 0 && subscribed.size === 0)
    outbox.report('no topic is routed to a queue or a subscriber');
  for (const topic of Object.keys(props.retryPolicies ?? {})) {
    if (!routes.has(topic) && !subscribed.has(topic)) {
      outbox.report(`retryPolicies names topic '${topic}', which no queue or subscriber carries`);
    }
  }
  return { queues, routes };
}

/** The subscribers' queues by subscriber name (in their own stacks), and per topic its subscribers' queues. */
export interface OutboxSubscriberQueues {
  readonly queues: Readonly<Record<string, sqs.IQueue>>;
  readonly routes: ReadonlyMap<string, ReadonlyMap<string, sqs.IQueue>>;
}

/**
 * The queue of each entry of `props.subscribers`, as the subscriber's own stack creates it: named
 * `<outbox name>-<subscriber>` in the subscriber's account and region, referred to by its derived ARN and URL (no
 * reference to the other stack). A name must be a subscriber name, a topic dotted lowercase, at most
 * {@link MAX_SUBSCRIBERS_PER_TOPIC} subscribers per topic, and a topic with subscribers goes to no topic queue.
 */
export function subscriberQueues(
  outbox: OutboxScope,
  props: Pick<TransactionalOutboxProps, 'queues' | 'subscribers'> & { readonly outboxName: string },
): OutboxSubscriberQueues {
  const queues: Record<string, sqs.IQueue> = {};
  const routes = new Map<string, Map<string, sqs.IQueue>>();
  // A draining queue shares its topics with the subscribers: it only takes the messages written before them.
  const queued = new Set(
    Object.values(props.queues ?? {}).flatMap((queue) => (queue.drainOnly === true ? [] : queue.topics)),
  );
  for (const [name, subscriber] of Object.entries(props.subscribers ?? {})) {
    if (!subscriberNameSchema.safeParse(name).success) {
      outbox.report(
        `subscriber '${name}' must be a lowercase name of at most 40 letters, digits and -, e.g. inventory`,
      );
    }
    if (subscriber.topics.length === 0) outbox.report(`subscriber '${name}' receives no topic`);
    if (RESERVED_SUBSCRIBER_NAMES.has(name)) {
      outbox.report(
        `subscriber '${name}': the name is the receipt queue's (<outbox name>-${name}); choose another`,
      );
    }
    if (subscriber.topics.length > MAX_TOPICS_PER_SUBSCRIBER) {
      outbox.report(
        `subscriber '${name}' receives ${subscriber.topics.length} topics; at most ${MAX_TOPICS_PER_SUBSCRIBER} (a receipt's condition lists them with the outbox's own)`,
      );
    }
    const stack = Stack.of(outbox.scope);
    for (const [field, declared, own] of [
      ['account', subscriber.account, stack.account],
      ['region', subscriber.region, stack.region],
    ] as const) {
      if (declared !== undefined && Token.isUnresolved(own)) {
        outbox.report(
          `subscriber '${name}' is declared in ${field} ${declared}, and the outbox's stack has no ${field} of its own ` +
            `(env): give the stack its ${field}, so the subscriber can address the outbox's receipt queue and roles there`,
        );
      }
    }
    const queueName = subscriberQueueName(props.outboxName, name, subscriber.fifo === true);
    const where = { account: subscriber.account, region: subscriber.region };
    const queue = sqs.Queue.fromQueueAttributes(outbox.scope, `${pascalCase(name)}SubscriberQueue`, {
      queueArn: queueArnOf(queueName, where),
      queueUrl: queueUrlOf(queueName, where),
      queueName,
      fifo: subscriber.fifo === true,
    });
    queues[name] = queue;
    for (const topic of subscriber.topics) {
      const problem = topicProblem(topic);
      if (problem !== undefined) outbox.report(`subscriber '${name}': topic '${topic}' ${problem}`);
      if (queued.has(topic)) {
        outbox.report(
          `topic '${topic}' is routed to a queue and has subscribers; a topic goes to one queue or to its subscribers`,
        );
      }
      const subscribers = routes.get(topic) ?? new Map<string, sqs.IQueue>();
      subscribers.set(name, queue);
      routes.set(topic, subscribers);
    }
  }
  for (const [name, queue] of Object.entries(props.queues ?? {})) {
    if (queue.drainOnly !== true) continue;
    const unsubscribed = queue.topics.filter((topic) => !routes.has(topic));
    if (unsubscribed.length > 0) {
      outbox.report(
        `queue '${name}' is drainOnly, and its topics ${unsubscribed.map((topic) => `'${topic}'`).join(', ')} have no ` +
          'subscribers: a draining queue takes only what was written before its topics got subscribers',
      );
    }
  }
  for (const [topic, subscribers] of routes) {
    if (subscribers.size > MAX_SUBSCRIBERS_PER_TOPIC) {
      outbox.report(
        `topic '${topic}' has ${subscribers.size} subscribers; at most ${MAX_SUBSCRIBERS_PER_TOPIC} (each is a row in the writer's transaction)`,
      );
    }
  }
  return { queues, routes };
}

/** A queue with its dead-letter queue, each marked with its role; the queue with the topics it carries. */
function markedQueue(
  outbox: OutboxScope,
  created: { readonly id: string; readonly props: QueueWithDlqProps },
  roles: {
    readonly queue: OutboxResourceRole;
    readonly deadLetterQueue: OutboxResourceRole;
    readonly topics: readonly string[];
  },
): QueueWithDlq {
  const queue = new QueueWithDlq(outbox.scope, created.id, created.props);
  markOutboxRole(queue.queue, roles.queue, { topics: roles.topics });
  markOutboxRole(queue.deadLetterQueue, roles.deadLetterQueue, { source: queue.queue });
  return queue;
}

/**
 * What is wrong with `topic`, as the topic's schema says it (not dotted lowercase, or in the namespace reserved for the
 * outbox's own messages); `undefined` for a good topic.
 */
function topicProblem(topic: string): string | undefined {
  const parsed = topicSchema.safeParse(topic);
  return parsed.success ? undefined : (parsed.error.issues[0]?.message ?? 'is not a topic');
}

/** `inventory-v2` → `InventoryV2`: a subscriber name as a construct id. */
function pascalCase(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** The topics routed to `queue`, in the order they were routed. */
export function topicsOf(routes: ReadonlyMap<string, sqs.IQueue>, queue: sqs.IQueue): string[] {
  return [...routes].filter(([, routed]) => routed === queue).map(([topic]) => topic);
}

/**
 * The ordered topics of `props.ordering`, each checked: routed to a queue, a valid scope, a gap timeout of
 * 1 s – 12 h, and the topics of one scope on one queue (they share one sequence per aggregate, which a
 * consumer can only follow when it receives all of them). A bad entry is reported and left out.
 */
export function checkedOrdering(
  props: Pick<TransactionalOutboxProps, 'queues' | 'ordering' | 'subscribers'>,
  report: ReportProblem,
): Record<string, OrderedTopic> {
  const queueOfTopic = new Map(
    Object.entries(props.queues ?? {}).flatMap(([name, queue]) =>
      queue.topics.map((topic) => [topic, name] as const),
    ),
  );
  // A topic with subscribers goes to each of them: the topics of one scope must go to the same subscribers.
  const subscribersOf = new Map<string, string[]>();
  for (const [name, subscriber] of Object.entries(props.subscribers ?? {})) {
    for (const topic of subscriber.topics)
      subscribersOf.set(topic, [...(subscribersOf.get(topic) ?? []), name]);
  }
  for (const [topic, names] of subscribersOf)
    queueOfTopic.set(topic, `subscribers ${names.sort().join(' + ')}`);
  const ordered: Record<string, OrderedTopic> = {};
  const topicsOfScope = new Map<string, string[]>();
  for (const [topic, ordering] of Object.entries(props.ordering ?? {})) {
    if (!queueOfTopic.has(topic)) {
      report(
        `ordering names topic '${topic}', which no queue or subscriber carries; route it to a queue first`,
      );
      continue;
    }
    if (ordering === 'none') continue;
    if (!scopeSchema.safeParse(ordering.scope).success) {
      report(
        `ordering['${topic}'].scope must be 1–32 lowercase letters, digits or - (starting with a letter or ` +
          `digit), got '${ordering.scope}'`,
      );
      continue;
    }
    const gapTimeoutMs = checkedGapTimeoutMs(topic, ordering.gapTimeout, report);
    if (gapTimeoutMs === undefined) continue;
    const sequence = ordering.sequence ?? SequenceSource.COUNTER;
    if (!(Object.values(SequenceSource) as string[]).includes(sequence)) {
      report(
        `ordering['${topic}'].sequence must be '${SequenceSource.COUNTER}' or '${SequenceSource.AGGREGATE_VERSION}', got '${sequence}'`,
      );
      continue;
    }
    ordered[topic] = { scope: ordering.scope, gapTimeoutMs, sequence };
    topicsOfScope.set(ordering.scope, [...(topicsOfScope.get(ordering.scope) ?? []), topic]);
  }
  for (const mixed of mixedSequenceSources(ordered)) report(describeMixedSources(mixed));
  for (const [scope, topics] of topicsOfScope) {
    const queues = new Set(topics.map((topic) => queueOfTopic.get(topic)));
    if (queues.size > 1) {
      report(
        `ordering scope '${scope}': its topics go to different queues (` +
          `${topics.map((topic) => `${topic} → ${queueOfTopic.get(topic)}`).join(', ')}); the topics of one ` +
          "scope share each aggregate's sequence, so route them to one queue",
      );
    }
  }
  return ordered;
}

/** A topic's gap timeout in ms, or `undefined` (reported) when it is not a whole ms from 1 s to 12 h. */
function checkedGapTimeoutMs(
  topic: string,
  gapTimeout: Duration | undefined,
  report: ReportProblem,
): number | undefined {
  if (gapTimeout === undefined) return DEFAULT_GAP_TIMEOUT_MS;
  const prop = `ordering['${topic}'].gapTimeout`;
  if (gapTimeout.isUnresolved()) {
    report(`${prop} must be known at synth`);
    return undefined;
  }
  const ms = gapTimeout.toMilliseconds({ integral: false });
  if (!Number.isInteger(ms) || ms < MIN_GAP_TIMEOUT_MS || ms > MAX_GAP_TIMEOUT_MS) {
    report(`${prop} must be a whole number of ms from 1 s to 12 h, got ${gapTimeout.toHumanString()}`);
    return undefined;
  }
  return ms;
}
