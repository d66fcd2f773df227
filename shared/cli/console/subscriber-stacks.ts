/**
 * The subscribers' own stacks, found from the producer's: the stacks given with `--subscriber-stack`, or else every
 * stack the credentials can list (on an emulator, the `*-local` stacks `npm start` deploys) whose subscriber queue
 * names this outbox in its metadata. A subscriber found nowhere is named with why: its stack is in another account,
 * or not deployed, or the credentials cannot read it.
 */
import {
  type CloudFormationClient,
  paginateListStacks,
  type StackStatus,
} from '@aws-sdk/client-cloudformation';
import { describeError } from '../../errors.ts';
import { subscriberNames } from '../../outbox/subscriptions.ts';
import {
  type DiscoveredOutbox,
  type DiscoveredSubscriber,
  discoverStack,
  readStackKind,
} from '../stack-discovery.ts';
import { localStackNames } from '../stack-name.ts';

/** What the search found: each subscriber's stack, and what it could not find or read. */
export interface SubscriberStacks {
  readonly found: readonly DiscoveredSubscriber[];
  /** Subscribers (or given stacks) not reached, each with why. */
  readonly missing: readonly {
    readonly subscriber?: string;
    readonly stackName?: string;
    readonly problem: string;
  }[];
  readonly notes: readonly string[];
}

/** Stacks whose templates are read at most when looking through an AWS account's stacks. */
const MAX_STACKS_READ = 200;

/** Templates read at once. */
const CONCURRENCY = 8;

/** Stack statuses of a stack that exists and can be read. */
const LIVE: readonly StackStatus[] = [
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_ROLLBACK_COMPLETE',
  'IMPORT_COMPLETE',
  'IMPORT_ROLLBACK_COMPLETE',
  'UPDATE_IN_PROGRESS',
  'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS',
  'UPDATE_ROLLBACK_IN_PROGRESS',
  'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS',
];

/**
 * The stacks of the subscribers of `outbox`.
 * @example
 * const { found, missing } = await findSubscriberStacks({ cloudFormation, outbox, given: [] , endpoint: env.AWS_ENDPOINT_URL });
 */
export async function findSubscriberStacks(source: {
  readonly cloudFormation: CloudFormationClient;
  readonly outbox: DiscoveredOutbox;
  /** Stacks named with `--subscriber-stack`: only these are read. */
  readonly given: readonly string[];
  /** The emulator's endpoint (`AWS_ENDPOINT_URL`); absent on AWS. */
  readonly endpoint?: string;
}): Promise<SubscriberStacks> {
  const { cloudFormation, outbox } = source;
  const found: DiscoveredSubscriber[] = [];
  const missing: { subscriber?: string; stackName?: string; problem: string }[] = [];
  const notes: string[] = [];
  if (source.given.length > 0) {
    for (const stackName of source.given) {
      try {
        const stack = await discoverStack(cloudFormation, stackName, source.endpoint);
        if (stack.kind === 'subscriber') found.push(stack.subscriber);
        else missing.push({ stackName, problem: `${stackName} holds an outbox, not a subscriber's queue` });
      } catch (error) {
        missing.push({ stackName, problem: describeError(error) });
      }
    }
  } else {
    const names = (await candidateStacks(source, notes)).filter((name) => name !== outbox.stackName);
    const kinds = await inBatches(names, (name) => readStackKind(cloudFormation, name));
    const ours = names.filter((_, n) => {
      const kind = kinds[n];
      return (
        kind?.kind === 'subscriber' &&
        (outbox.outboxName === undefined || kind.outboxes.includes(outbox.outboxName))
      );
    });
    for (const stackName of ours) {
      try {
        const stack = await discoverStack(cloudFormation, stackName, source.endpoint);
        if (stack.kind !== 'subscriber') continue;
        if (found.some((other) => other.subscriber === stack.subscriber.subscriber)) {
          notes.push(
            `subscriber ${stack.subscriber.subscriber} has a second stack, ${stackName}: the console uses the first`,
          );
          continue;
        }
        found.push(stack.subscriber);
      } catch (error) {
        missing.push({ stackName, problem: `cannot read stack ${stackName}: ${describeError(error)}` });
      }
    }
  }
  for (const subscriber of subscriberNames(outbox.subscriptions)) {
    if (found.some((stack) => stack.subscriber === subscriber)) continue;
    missing.push({ subscriber, problem: notFound(subscriber, source) });
  }
  for (const stack of found) notes.push(...stack.notes.map((note) => `${stack.stackName}: ${note}`));
  return { found, missing, notes };
}

/** The stacks to look through: the emulator's local stacks, or the account's live stacks (up to a bound). */
async function candidateStacks(
  source: { readonly cloudFormation: CloudFormationClient; readonly endpoint?: string },
  notes: string[],
): Promise<string[]> {
  if (source.endpoint !== undefined) return localStackNames(source.cloudFormation, source.endpoint);
  const names: string[] = [];
  try {
    for await (const page of paginateListStacks(
      { client: source.cloudFormation },
      { StackStatusFilter: [...LIVE] },
    )) {
      for (const stack of page.StackSummaries ?? [])
        if (stack.StackName !== undefined) names.push(stack.StackName);
    }
  } catch (error) {
    notes.push(
      `cannot list the stacks to find the subscribers' (${describeError(error)}): give them with --subscriber-stack`,
    );
    return [];
  }
  if (names.length > MAX_STACKS_READ) {
    notes.push(
      `this account has ${names.length} stacks; the first ${MAX_STACKS_READ} were looked through for the subscribers': give the others with --subscriber-stack`,
    );
  }
  return names.slice(0, MAX_STACKS_READ);
}

/** Why a subscriber's stack was not found, with what to do. */
function notFound(
  subscriber: string,
  source: {
    readonly outbox: DiscoveredOutbox;
    readonly given: readonly string[];
    readonly endpoint?: string;
  },
): string {
  const queueUrl = Object.values(source.outbox.subscriptions)
    .map((queues) => queues[subscriber])
    .find((url) => url !== undefined);
  const account = /^https:\/\/sqs\.[^/]+\/(\d{12})\//.exec(queueUrl ?? '')?.[1];
  const where =
    source.endpoint === undefined ? 'in this account and region' : `on the emulator at ${source.endpoint}`;
  const hint =
    source.endpoint === undefined
      ? `${account === undefined ? '' : ` Its queue is in account ${account}.`} A stack in another account is reached with that account's credentials (outbox stats and outbox redrive --stack <its stack>); one these credentials can read, with --subscriber-stack`
      : ' Start it with npm start, or give it with --subscriber-stack';
  return source.given.length > 0
    ? `none of the stacks given with --subscriber-stack holds subscriber ${subscriber}'s queue`
    : `no stack ${where} holds subscriber ${subscriber}'s queue of this outbox.${hint}`;
}

/** `work` on each of `items`, {@link CONCURRENCY} at a time, results in order. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += CONCURRENCY) {
    results.push(...(await Promise.all(items.slice(start, start + CONCURRENCY).map(work))));
  }
  return results;
}
