import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MessagePublisher } from '../../../shared/memory/index.ts';

/** A pause of `ms` milliseconds, as a network round trip would take. */
export function pause(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** Counts of the calls a simulated adapter received. */
export interface CallCounts {
  calls: number;
}

/**
 * A Document client whose every call takes `latencyMs` longer, as one over the network would: the bench's
 * in-memory tables answer at memory speed, which would hide what the relay, consumer and sweeper pay per round trip.
 */
export function delayedDocumentClient(
  client: DynamoDBDocumentClient,
  options: { readonly latencyMs: number; readonly counts?: CallCounts },
): DynamoDBDocumentClient {
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: unknown) => {
        if (options.counts) options.counts.calls += 1;
        await pause(options.latencyMs);
        return send(command);
      };
    },
  });
}

/** A publisher whose every batch takes `latencyMs` longer (an SQS round trip). */
export function delayedPublisher(
  publisher: MessagePublisher,
  options: { readonly latencyMs: number; readonly counts?: CallCounts },
): MessagePublisher {
  return {
    publishBatch: async (queueUrl, messages, publishOptions) => {
      if (options.counts) options.counts.calls += 1;
      await pause(options.latencyMs);
      return publisher.publishBatch(queueUrl, messages, publishOptions);
    },
  };
}
