import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { type ArchiveStore, archiveStreamBatch } from '../archive/archive-stream-batch.ts';
import { awsClientConfig } from '../aws/clients.ts';
import { createS3Client, S3ArchiveStore } from '../aws/s3-archive-store.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readSetting } from '../settings/setting.ts';
import { createLogger } from './create-logger.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';

/** The archiver's store from its environment: the bucket `ARCHIVE_BUCKET` names. */
export function archiverStore(env: Env): ArchiveStore {
  return new S3ArchiveStore({
    client: createS3Client(awsClientConfig(env)),
    bucket: readSetting(env, OutboxSettings.archiveBucket),
  });
}

/**
 * The archiver as a Lambda handler: on the outbox stream, filtered to TTL deletions, it writes the expired
 * messages to S3 as gzip JSON Lines partitioned by day, and reports as a batch item failure the first record
 * of an object it could not write. `TransactionalOutbox` deploys it when its `archive` prop is set.
 * @example
 * export const handler = createArchiverHandler();
 */
export function createArchiverHandler(): EnvHandler<DynamoDBStreamEvent, DynamoDBBatchResponse> {
  return handlerFromEnv((env) => {
    const store = archiverStore(env);
    const logger = createLogger('outbox-archiver', env);
    return middy((event: DynamoDBStreamEvent) => archiveStreamBatch(event, { store, logger })).use(
      injectLambdaContext(logger),
    );
  });
}
