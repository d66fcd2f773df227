import { ConfigError } from '../errors.ts';
import type { AdminDeps } from './admin-deps.ts';
import { InvalidAdminRequestError } from './admin-errors.ts';
import { queueNameOf } from './admin-queues.ts';

/** A dead-letter queue, the queue its messages came from, and the topics sent there. */
export interface DeadLetterRoute {
  readonly deadLetterQueueUrl: string;
  readonly sourceQueueUrl: string;
  readonly topics: readonly string[];
}

/**
 * Every dead-letter queue of the outbox's topics with its source queue, from the topic → queue and topic → DLQ
 * maps. Throws a {@link ConfigError} when a DLQ's topic has no queue, or when one DLQ serves two queues.
 */
export function deadLetterRoutes(
  deps: Pick<AdminDeps, 'topicQueues' | 'deadLetterQueues'>,
): DeadLetterRoute[] {
  const routes = new Map<string, { sourceQueueUrl: string; topics: string[] }>();
  for (const [topic, deadLetterQueueUrl] of Object.entries(deps.deadLetterQueues)) {
    const sourceQueueUrl = deps.topicQueues[topic];
    if (sourceQueueUrl === undefined) {
      throw new ConfigError(`DEAD_LETTER_QUEUES names topic ${topic}, which TOPIC_QUEUES does not route`);
    }
    const route = routes.get(deadLetterQueueUrl);
    if (route === undefined) routes.set(deadLetterQueueUrl, { sourceQueueUrl, topics: [topic] });
    else if (route.sourceQueueUrl !== sourceQueueUrl) {
      throw new ConfigError(
        `DEAD_LETTER_QUEUES gives ${deadLetterQueueUrl} to two queues (${route.sourceQueueUrl}, ${sourceQueueUrl}): a redrive could not tell where a message goes back to`,
      );
    } else route.topics.push(topic);
  }
  return [...routes].map(([deadLetterQueueUrl, route]) => ({ deadLetterQueueUrl, ...route }));
}

/**
 * The routes a redrive works on: the one whose DLQ or source queue `queue` names (URL or name), the one of
 * `topic`, or all. {@link InvalidAdminRequestError} when nothing matches.
 */
export function selectRoutes(
  routes: readonly DeadLetterRoute[],
  selection: { readonly queue?: string; readonly topic?: string },
): DeadLetterRoute[] {
  let selected = [...routes];
  const { queue, topic } = selection;
  if (queue !== undefined) {
    selected = selected.filter((route) =>
      [route.deadLetterQueueUrl, route.sourceQueueUrl].some(
        (url) => url === queue || queueNameOf(url) === queue,
      ),
    );
    if (selected.length === 0) {
      throw new InvalidAdminRequestError(
        'queue',
        `names no dead-letter queue or topic queue of the outbox: ${queue}`,
      );
    }
  }
  if (topic !== undefined) {
    selected = selected.filter((route) => route.topics.includes(topic));
    if (selected.length === 0) {
      throw new InvalidAdminRequestError(
        'topic',
        `has no dead-letter queue${queue === undefined ? '' : ` in ${queue}`}: ${topic}`,
      );
    }
  }
  return selected;
}
