/**
 * The dead-letter queues the console can reach: the producer's own (its outbox's topic queues) and each subscriber's,
 * in the subscriber's own stack; their depths, and a peek at what they hold with the reason each message carries.
 */
import { InvalidAdminRequestError } from '../../admin/admin-errors.ts';
import { queueNameOf } from '../../admin/admin-queues.ts';
import { deadLetterRoutes } from '../../admin/dead-letter-routes.ts';
import { type DeadLetterInfo, redriveDeadLetters } from '../../admin/redrive-dead-letters.ts';
import { SubscriberAdmin } from '../../admin/subscriber-admin.ts';
import { describeError } from '../../errors.ts';
import type { ConsoleContext } from './console-context.ts';
import type { DeadLetterPlace } from './dead-letter-redrive.ts';

/** One dead-letter queue and its depth. */
export interface DeadLetterQueueView {
  readonly queueUrl: string;
  readonly queueName: string;
  /** The queue its messages go back to. */
  readonly sourceQueueUrl: string;
  readonly topics: readonly string[];
  /** Waiting in the queue (ApproximateNumberOfMessages). */
  readonly messages: number;
  /** Received and not yet deleted: being peeked at or redriven. */
  readonly inFlight: number;
}

/** Whose dead-letter queues, and their depths (or why they cannot be read). */
export interface DeadLetterOwner {
  /** `producer`, or the subscriber's name. */
  readonly owner: string;
  readonly subscriber?: string;
  readonly stackName?: string;
  readonly queues: readonly DeadLetterQueueView[];
  readonly problem?: string;
}

/** Messages a peek shows at most. */
export const PEEK_LIMIT = 50;

/**
 * The dead-letter queues of the producer and of each reachable subscriber, with their depths.
 * @example
 * const owners = await readDeadLetterQueues(context);
 */
export async function readDeadLetterQueues(context: ConsoleContext): Promise<DeadLetterOwner[]> {
  const places = placesOf(context);
  return Promise.all(
    places.map(async (place): Promise<DeadLetterOwner> => {
      const base = {
        owner: place.subscriber ?? 'producer',
        ...(place.subscriber === undefined ? {} : { subscriber: place.subscriber }),
        ...(place.stackName === undefined ? {} : { stackName: place.stackName }),
      };
      if (place.place === undefined)
        return { ...base, queues: [], problem: place.problem ?? 'not reachable' };
      try {
        const routes = deadLetterRoutes(place.place.deps);
        const depths = await Promise.all(
          routes.map((route) => place.place?.deps.queues.depth(route.deadLetterQueueUrl)),
        );
        return {
          ...base,
          queues: routes.map((route, n) => ({
            queueUrl: route.deadLetterQueueUrl,
            queueName: queueNameOf(route.deadLetterQueueUrl),
            sourceQueueUrl: route.sourceQueueUrl,
            topics: route.topics,
            messages: depths[n]?.visible ?? 0,
            inFlight: depths[n]?.inFlight ?? 0,
          })),
        };
      } catch (error) {
        return { ...base, queues: [], problem: `cannot read its queues: ${describeError(error)}` };
      }
    }),
  );
}

/**
 * Up to `max` messages of the dead-letter queue `queueUrl`, each with the outbox message id, topic and the reason
 * it was dead-lettered: the core's dry-run redrive, which receives them, changes nothing and makes them visible
 * again at once.
 * @example
 * const messages = await peekDeadLetters(context, { queueUrl, max: 20, actor });
 */
export async function peekDeadLetters(
  context: ConsoleContext,
  request: { readonly queueUrl: string; readonly max: number; readonly actor: string },
): Promise<DeadLetterInfo[]> {
  const place = deadLetterPlaceOf(context, request.queueUrl);
  const input = {
    queue: request.queueUrl,
    ratePerSecond: 1_000,
    dryRun: true,
    maxMessages: Math.max(1, Math.min(PEEK_LIMIT, Math.floor(request.max))),
    actor: request.actor,
    // Held only while the peek reads on; released as soon as it ends.
    visibilityTimeoutSeconds: 30,
  };
  const report =
    place.kind === 'producer'
      ? await redriveDeadLetters(place.deps, input)
      : await new SubscriberAdmin(place.deps).redriveDeadLetters(input);
  return report.queues.flatMap((queue) => queue.wouldMove ?? []);
}

/** The place (producer or a subscriber's stack) whose dead-letter queue `queueUrl` is; a 400 for any other queue. */
export function deadLetterPlaceOf(context: ConsoleContext, queueUrl: string): DeadLetterPlace {
  for (const { place } of placesOf(context)) {
    if (place === undefined) continue;
    if (deadLetterRoutes(place.deps).some((route) => route.deadLetterQueueUrl === queueUrl)) return place;
  }
  throw new InvalidAdminRequestError(
    'queueUrl',
    `is not a dead-letter queue the console reaches: ${queueUrl}`,
  );
}

/** The producer and every subscriber, with the place its dead letters are in when it is reachable. */
function placesOf(context: ConsoleContext): {
  readonly subscriber?: string;
  readonly stackName?: string;
  readonly place?: DeadLetterPlace;
  readonly problem?: string;
}[] {
  return [
    { stackName: context.stackName, place: { kind: 'producer', deps: context.deps } },
    ...[...context.subscribers]
      .sort((a, b) => a.subscriber.localeCompare(b.subscriber))
      .map((reach) => ({
        subscriber: reach.subscriber,
        ...(reach.stackName === undefined ? {} : { stackName: reach.stackName }),
        ...(reach.deps === undefined
          ? { problem: reach.problem ?? 'its stack cannot be reached' }
          : { place: { kind: 'subscriber' as const, deps: reach.deps } }),
      })),
  ];
}
