/**
 * One poller per event source mapping of the template: the mapping's source and on-failure destination
 * resolved against the deployed stack (a stream ARN; a queue ARN and its URL), its settings taken as written.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { LocalFunction } from '../host/local-function.ts';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { ResourceType } from '../template/cloudformation-template.ts';
import { queueNameOf, type ResolutionContext, resolveString } from '../template/intrinsics.ts';
import type { EventSourceMappingDefinition } from '../template/read-event-source-mappings.ts';
import type { Poller } from './poll-loop.ts';
import { type PollerStateStore, pollerStateKey } from './poller-state.ts';
import { createQueuePoller } from './queue-poller.ts';
import { createStreamPoller } from './stream-poller.ts';

/** What the pollers are built from. */
export interface EventSourcePollerOptions {
  readonly mappings: readonly EventSourceMappingDefinition[];
  /** Local name → running function. */
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly context: ResolutionContext;
  readonly clients: { readonly streams: DynamoDBStreamsClient; readonly sqs: SQSClient };
  /** The backend's endpoint: part of each poller's state key. */
  readonly endpoint: string;
  readonly state: PollerStateStore;
  readonly retryVisibilitySeconds?: number;
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
}

/**
 * The pollers, in template order, not yet started. Throws `EVENT_SOURCE_FAILED` when a source or destination
 * cannot be found on the backend.
 */
export async function createEventSourcePollers(options: EventSourcePollerOptions): Promise<Poller[]> {
  const pollers: Poller[] = [];
  for (const mapping of options.mappings) {
    const fn = options.functions.get(mapping.functionName);
    if (fn === undefined) continue;
    const where = `event source mapping ${mapping.name}`;
    const sourceArn = resolveString(mapping.source.arn, options.context, `${where}, EventSourceArn`);
    const state = {
      store: options.state,
      key: pollerStateKey({ endpoint: options.endpoint, sourceArn, functionName: fn.name }),
    };
    const common = { fn, mapping, state, intervalMs: options.intervalMs, log: options.log };
    if (mapping.source.kind === 'stream') {
      const failureQueueUrl =
        mapping.onFailureDestination === undefined
          ? undefined
          : await queueUrlOf(
              resolveString(
                mapping.onFailureDestination,
                options.context,
                `${where}, on-failure destination`,
              ),
              { ...options, where },
            );
      pollers.push(
        createStreamPoller({ ...common, streamArn: sourceArn, failureQueueUrl, clients: options.clients }),
      );
    } else {
      pollers.push(
        createQueuePoller({
          ...common,
          queueArn: sourceArn,
          queueUrl: await queueUrlOf(sourceArn, { ...options, where }),
          sqs: options.clients.sqs,
          region: options.context.region,
          retryVisibilitySeconds: options.retryVisibilitySeconds,
        }),
      );
    }
  }
  return pollers;
}

/** The URL of the queue with `arn`: a queue of the stack, else asked of SQS (a queue the app imports). */
async function queueUrlOf(
  arn: string,
  options: Pick<EventSourcePollerOptions, 'context' | 'clients'> & { readonly where: string },
): Promise<string> {
  if (!/^arn:[^:]+:sqs:/.test(arn)) {
    throw new LocalRuntimeError(
      'EVENT_SOURCE_FAILED',
      `${options.where}: ${arn} is not an SQS queue; the local runtime delivers only to queues`,
    );
  }
  // arn:aws:sqs:<region>:<account>:<name>
  const [, , , , account, name] = arn.split(':');
  for (const resource of options.context.resources.values()) {
    const ownArn = resource.attributes?.Arn;
    const same =
      ownArn === undefined
        ? account === options.context.accountId && queueNameOf(resource.physicalId) === name
        : ownArn === arn;
    if (resource.type === ResourceType.QUEUE && same) return resource.physicalId;
  }
  try {
    const { QueueUrl } = await options.clients.sqs.send(
      new GetQueueUrlCommand({
        QueueName: queueNameOf(arn.replaceAll(':', '/')),
        QueueOwnerAWSAccountId: account,
      }),
    );
    if (QueueUrl !== undefined) return QueueUrl;
  } catch (cause) {
    throw new LocalRuntimeError('EVENT_SOURCE_FAILED', `${options.where}: no queue ${arn} on the backend`, {
      cause,
    });
  }
  throw new LocalRuntimeError('EVENT_SOURCE_FAILED', `${options.where}: no queue ${arn} on the backend`);
}
