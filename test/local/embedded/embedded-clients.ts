/** SDK clients on a fresh embedded backend, for the embedded backend's tests. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Backend } from '../../../infra/dev/local/backends/backend.ts';
import { startEmbeddedBackend } from '../../../infra/dev/local/backends/embedded/index.ts';
import { emulatorClientConfig } from '../../../infra/dev/local/backends/emulator-config.ts';

/** A running embedded backend with a client of each service on it. */
export interface EmbeddedClients {
  readonly backend: Backend;
  readonly dynamodb: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  readonly streams: DynamoDBStreamsClient;
  readonly sqs: SQSClient;
  /** Log lines of the backend (internal errors, deploy notes). */
  readonly log: string[];
  /** Destroys the clients and stops the backend. */
  close(): Promise<void>;
}

/** Starts an embedded backend and connects real SDK clients to it (no retries, so errors show at once). */
export async function embeddedClients(): Promise<EmbeddedClients> {
  const log: string[] = [];
  const backend = await startEmbeddedBackend({ log: (line) => log.push(line) });
  const config = { ...emulatorClientConfig(backend.endpoint), maxAttempts: 1 };
  const dynamodb = new DynamoDBClient(config);
  const streams = new DynamoDBStreamsClient(config);
  const sqs = new SQSClient(config);
  return {
    backend,
    dynamodb,
    documents: DynamoDBDocumentClient.from(dynamodb),
    streams,
    sqs,
    log,
    async close() {
      for (const client of [dynamodb, streams, sqs]) client.destroy();
      await backend.stop();
    },
  };
}

/** The error a promise rejects with (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected the call to fail');
}
